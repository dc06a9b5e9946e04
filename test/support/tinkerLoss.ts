/**
 * A reference evaluator of Tinker's loss functions, written from their definitions (the losses
 * page of the Tinker docs; SkyRL's `loss_fns.py` computes the same): for every datum, the model's
 * logprob lp_i of target i given model_input[:i+1], a per-token loss, and the loss of a
 * forward_backward is the SUM of the per-token losses over every target of every datum. No mean,
 * no mask beyond what the inputs say, no KL.
 *
 *   cross_entropy        -w_i lp_i
 *   importance_sampling  -exp(lp_i - q_i) A_i
 *   ppo                  -min(r_i A_i, clip(r_i, lo, hi) A_i),  r_i = exp(lp_i - q_i)
 *
 * It runs the embedded model, so a test can take the gradient of what a Tinker server would
 * compute on the datums seal sends, and compare it with the embedded learner's own.
 */
import { logprobAndGrad, tokenLogprob } from '../../src/learner/embedded/losses.js';
import type { TinkerForwardBackwardInput } from '../../src/learner/tinker/seal-datums.js';
import { type Arr, allocate, type Gpt } from '../../src/nn/model.js';

export interface TinkerPass {
  /** the summed loss */
  readonly loss: number;
  /** per datum, the logprob of each target (Tinker's `loss_fn_outputs[i].logprobs`) */
  readonly logprobs: number[][];
}

/** Tinker's loss of `input` on `model`; when `grads` is given, ADDS its gradient (forward_backward accumulates). */
export function tinkerForwardBackward(
  model: Gpt,
  input: TinkerForwardBackwardInput,
  grads: Arr | null,
): TinkerPass {
  const V = model.config.vocabSize;
  const lo = input.loss_fn_config?.clip_low_threshold ?? 0.8;
  const hi = input.loss_fn_config?.clip_high_threshold ?? 1.2;
  let loss = 0;
  const logprobs: number[][] = [];
  for (const datum of input.data) {
    const tokens = datum.model_input.chunks.flatMap((c) => [...c.tokens]);
    const f = datum.loss_fn_inputs;
    const targets = f.target_tokens.data;
    const n = tokens.length;
    for (const [key, tensor] of Object.entries(f))
      if (tensor && tensor.data.length !== n)
        throw new Error(`${key} has ${tensor.data.length} entries for ${n} inputs`);
    const { logits, cache } = model.forward(tokens, { backward: grads !== null });
    const dlogits = grads ? allocate(model.dtype, logits.length) : null;
    const lps: number[] = [];
    for (let i = 0; i < n; i++) {
      const y = targets[i]!;
      const lp = tokenLogprob(logits, V, i, y);
      lps.push(lp);
      let l: number;
      let dl: number; // dLoss/dlp
      switch (input.loss_fn) {
        case 'cross_entropy': {
          const w = f.weights!.data[i]!;
          l = -w * lp;
          dl = -w;
          break;
        }
        case 'importance_sampling': {
          const A = f.advantages!.data[i]!;
          const r = Math.exp(lp - f.logprobs!.data[i]!);
          l = -r * A;
          dl = -r * A;
          break;
        }
        case 'ppo': {
          const A = f.advantages!.data[i]!;
          const r = Math.exp(lp - f.logprobs!.data[i]!);
          const c = Math.min(Math.max(r, lo), hi);
          // min picks the clipped term only where it is strictly smaller; there c is constant in lp
          const clipped = c * A < r * A;
          l = -(clipped ? c * A : r * A);
          dl = clipped ? 0 : -r * A;
          break;
        }
      }
      loss += l;
      if (dlogits && dl !== 0) logprobAndGrad(dlogits, logits, V, i, y, dl);
    }
    if (grads && dlogits) model.backward(cache, dlogits, grads);
    logprobs.push(lps);
  }
  return { loss, logprobs };
}
