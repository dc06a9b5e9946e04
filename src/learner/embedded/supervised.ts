/**
 * Supervised (next-token cross-entropy) training of the embedded model, for the base checkpoint:
 * token-mean loss over the masked target tokens, gradients accumulated one sequence at a time.
 */
import { addLogprobGrad, allocate, type Gpt, tokenLogprob } from '../../policy/embedded/model.js';
import { Adam, type AdamOptions, clipGradNorm } from './optim.js';

export interface SupervisedSequence {
  readonly tokens: readonly number[];
  /** per token, 1 where the token is a training target (default: every token after the first) */
  readonly lossMask?: readonly number[];
}

/**
 * Mean cross-entropy over the targets of `batch`; when `grads` is given, ADDS its gradient into it.
 * Returns the loss and the number of target tokens.
 */
export function crossEntropyLossAndGrad(
  model: Gpt,
  batch: readonly SupervisedSequence[],
  grads: Float32Array | Float64Array | null,
): { loss: number; tokens: number } {
  let n = 0;
  for (const s of batch) for (let t = 1; t < s.tokens.length; t++) if ((s.lossMask?.[t] ?? 1) > 0) n++;
  if (n === 0) return { loss: 0, tokens: 0 };
  const V = model.config.vocabSize;
  let loss = 0;
  for (const s of batch) {
    const { logits, cache } = model.forward(s.tokens);
    const dlogits = grads ? allocate(model.dtype, logits.length) : null;
    for (let t = 1; t < s.tokens.length; t++) {
      if ((s.lossMask?.[t] ?? 1) <= 0) continue;
      const y = s.tokens[t]!;
      loss -= tokenLogprob(logits, V, t - 1, y);
      if (dlogits) addLogprobGrad(dlogits, logits, V, t - 1, y, -1 / n);
    }
    if (grads && dlogits) model.backward(cache, dlogits, grads);
  }
  return { loss: loss / n, tokens: n };
}

export interface SupervisedOptions extends AdamOptions {
  /** global gradient-norm clip; default 1 */
  readonly maxGradNorm?: number;
}

export class SupervisedTrainer {
  readonly optimizer: Adam;
  private readonly grads;

  constructor(
    readonly model: Gpt,
    readonly opts: SupervisedOptions,
  ) {
    this.optimizer = new Adam(model.numParams, opts);
    this.grads = model.zerosLike();
  }

  /** one optimiser step on `batch`; returns the loss before the step */
  step(batch: readonly SupervisedSequence[]): { loss: number; tokens: number; gradNorm: number } {
    this.grads.fill(0);
    const r = crossEntropyLossAndGrad(this.model, batch, this.grads);
    const gradNorm = clipGradNorm(this.grads, this.opts.maxGradNorm ?? 1);
    if (r.tokens > 0) this.optimizer.step(this.model.params, this.grads);
    return { ...r, gradNorm };
  }
}
