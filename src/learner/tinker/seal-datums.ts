/**
 * The learner contract's training data as Tinker datums, pure. Tinker's losses are SUMS over every
 * target token of every datum sent before an optimiser step (no mean, no server-side KL), while the
 * contract's `forwardBackward` is a token mean over the data it is handed (learner.ts; the embedded
 * learner divides by the count of trained tokens). So every normalisation goes into the datums:
 *
 *  - the policy gradient: Tinker's advantage of a trained token is A_t / N, A_t the datum's
 *    advantage (w_j x A_j, the budget and `--loss-agg rollout-mean`'s per-rollout scale already in
 *    it: train/credit.ts and train/sequences.ts `aggregateRollouts` put them there) and N the trained
 *    tokens of the WHOLE batch. Scaling an advantage by 1/N > 0 scales the per-token PPO term and
 *    leaves its clipping decision alone, so the summed `ppo` loss is exactly the token-mean
 *    surrogate, and a batch split into chunks (each its own forward_backward) accumulates the one
 *    batch's gradient because every chunk already carries the whole batch's N.
 *  - the KL to the base model, which Tinker does not compute: folded into the advantage (`klAdvantage`).
 *  - the supervised anchor: `cross_entropy` weights w_t x coef / W, W the batch's summed weights.
 *
 * Prompt and tool-output tokens get advantage 0 and logprob 0 (the cookbook's masking): a zero
 * advantage gives a zero `ppo` / `importance_sampling` term and gradient on every server.
 */
import type { CrossEntropyLoss, PpoLoss, SupervisedDatum, TrainingDatum } from '../learner.js';

/** Tinker's TensorData (JSON form): a flat tensor */
export interface TinkerTensor {
  readonly data: readonly number[];
  readonly dtype: 'int64' | 'float32';
  readonly shape: readonly number[];
}

/** the `loss_fn_inputs` of a datum; every tensor has the length of `model_input` */
export interface TinkerLossInputs {
  readonly target_tokens: TinkerTensor;
  readonly weights?: TinkerTensor;
  /** the sampler's logprob of each target (0 where the target carries no loss) */
  readonly logprobs?: TinkerTensor;
  readonly advantages?: TinkerTensor;
}

/** Tinker's Datum (JSON form): the input tokens (one text chunk) and the per-target loss inputs */
export interface TinkerDatum {
  readonly model_input: {
    readonly chunks: readonly [{ readonly type: 'encoded_text'; readonly tokens: readonly number[] }];
  };
  readonly loss_fn_inputs: TinkerLossInputs;
}

export type TinkerPolicyLossFn = 'ppo' | 'importance_sampling';
export type TinkerLossFn = TinkerPolicyLossFn | 'cross_entropy';

/** A `forward_backward_input`: what one forward-backward pass (before chunking) sends. */
export interface TinkerForwardBackwardInput {
  readonly data: readonly TinkerDatum[];
  readonly loss_fn: TinkerLossFn;
  readonly loss_fn_config?: { readonly clip_low_threshold: number; readonly clip_high_threshold: number };
}

/**
 * Per training datum, the base model's logprob of each token given those before it: what a base-model
 * sampling session's `prompt_logprobs` returns for the datum's tokens (entry 0 is null: nothing
 * predicts the first token). Read where the datum trains a token.
 */
export type BaseLogprobs = readonly (readonly (number | null)[])[];

export interface PolicyDatumOptions {
  /** `ppo` (default: the contract's PPO-clip, thresholds 1 -/+ clipEps) or `importance_sampling` (unclipped) */
  readonly lossFn?: TinkerPolicyLossFn;
  /** the base model's logprobs of every datum: needed when `loss.klCoef > 0` */
  readonly base?: BaseLogprobs;
  /**
   * also send `weights` (1 on trained targets, else 0). SkyRL multiplies every loss by `weights`
   * (all ones when absent) and the cookbook sends none for these losses; with a zero advantage on
   * every untrained target the sum is the same either way. Default false
   */
  readonly mask?: boolean;
}

export class TinkerDatumError extends Error {}

const int64 = (data: readonly number[]): TinkerTensor => ({ data, dtype: 'int64', shape: [data.length] });
const float32 = (data: readonly number[]): TinkerTensor => ({ data, dtype: 'float32', shape: [data.length] });

/** the datum of `tokens` with `inputs` per target: input = tokens[:-1], targets = tokens[1:] */
function tinkerDatum(
  tokens: readonly number[],
  inputs: Omit<TinkerLossInputs, 'target_tokens'>,
): TinkerDatum {
  return {
    model_input: { chunks: [{ type: 'encoded_text', tokens: tokens.slice(0, -1) }] },
    loss_fn_inputs: { target_tokens: int64(tokens.slice(1)), ...inputs },
  };
}

/** checks one datum's shape as the embedded learner does (a first token never carries loss) */
function checkShape(d: SupervisedDatum, i: number, extra: readonly (readonly number[])[] = []): void {
  if (d.tokens.length < 2)
    throw new TinkerDatumError(`datum ${i}: ${d.tokens.length} token(s); a datum needs a target`);
  if (d.weights.length !== d.tokens.length || extra.some((a) => a.length !== d.tokens.length))
    throw new TinkerDatumError(
      `datum ${i}: tokens, weights, logprobs and advantages must have the same length`,
    );
  if ((d.weights[0] ?? 0) > 0) throw new TinkerDatumError(`datum ${i}: the first token cannot carry loss`);
}

/** the trained tokens (weight > 0, after the first) of `data`: the token-mean denominator */
export function trainedTokens(data: readonly SupervisedDatum[]): number {
  let n = 0;
  for (const d of data) for (let t = 1; t < d.tokens.length; t++) if (d.weights[t]! > 0) n++;
  return n;
}

/**
 * The advantage that puts the contract's k3 KL to the base model into Tinker's policy loss, for a
 * token sampled with logprob `q` that the base model gives `base`: klCoef x (exp(base - q) - 1).
 *
 * Why this form: the k3 term klCoef x (exp(b - lp) - (b - lp) - 1) has d/dlp = klCoef x (1 - exp(b - lp)),
 * and a summed `ppo`/`importance_sampling` term -exp(lp - q) x A has d/dlp = -exp(lp - q) x A, which
 * at lp = q (the first pass over fresh samples, sampler and trainer agreeing) is -A. This advantage
 * therefore gives exactly the k3 gradient there; off that point (a later pass, or a sampler that
 * disagrees with the trainer) it is k3's gradient at the sample, importance-weighted and clipped
 * with the token's policy term. To first order in (q - b) it is the cookbook's -klCoef x (q - b)
 * (`incorporate_kl_penalty`, which also centres it on the batch mean; this does not, as the
 * contract's KL is not centred).
 */
export function klAdvantage(q: number, base: number, klCoef: number): number {
  return klCoef * Math.expm1(base - q);
}

/**
 * Refuses a PPO loss that Tinker's summed losses cannot carry, saying what to do; a command can call
 * it before it samples a round. Tinker's losses read the model's logprobs at temperature 1, so the
 * samples must be drawn at 1 (another temperature would make a ratio of unlike distributions), and
 * the KL term needs the base model's logprobs (`withBase`), Tinker having none of its own.
 */
export function checkTinkerPpoLoss(loss: PpoLoss, withBase: boolean): void {
  if (loss.temperature !== 1)
    throw new TinkerDatumError(
      `Tinker's losses use the model's logprobs at temperature 1, but the samples are drawn at ${loss.temperature}; sample training rollouts at temperature 1`,
    );
  if (!(loss.clipEps >= 0 && loss.clipEps < 1))
    throw new TinkerDatumError(`clipEps must be in [0, 1), got ${loss.clipEps}`);
  if (!(loss.klCoef >= 0 && Number.isFinite(loss.klCoef)))
    throw new TinkerDatumError(`klCoef must be finite and >= 0, got ${loss.klCoef}`);
  if (loss.klCoef > 0 && !withBase)
    throw new TinkerDatumError(
      'klCoef > 0 needs the base model logprobs of every datum (Tinker has no KL term of its own); pass them, or set klCoef 0',
    );
}

/**
 * The policy-gradient datums of one `forwardBackward(data, loss)`: summed under Tinker's `ppo`
 * (thresholds 1 -/+ clipEps) they are the contract's token-mean PPO-clip surrogate over `data`, plus
 * klCoef x its k3 KL to the base when `base` is given (see `klAdvantage` for where that is exact).
 * `data` is the whole batch: split the result into chunks freely (`chunkDatums`), never the input.
 * Datum i of the result is `data[i]`, so a forward-backward's outputs line up with `data`. A loss
 * `checkTinkerPpoLoss` refuses is refused here too.
 */
export function policyDatums(
  data: readonly TrainingDatum[],
  loss: PpoLoss,
  opts: PolicyDatumOptions = {},
): TinkerForwardBackwardInput {
  const lossFn = opts.lossFn ?? 'ppo';
  const { base } = opts;
  checkTinkerPpoLoss(loss, base !== undefined);
  if (base && base.length !== data.length)
    throw new TinkerDatumError(`${data.length} datums but base logprobs for ${base.length}`);
  data.forEach((d, i) => {
    checkShape(d, i, [d.samplingLogprobs, d.advantages]);
    if (base && base[i]!.length !== d.tokens.length)
      throw new TinkerDatumError(
        `datum ${i}: ${d.tokens.length} tokens but ${base[i]!.length} base logprobs`,
      );
  });
  const n = trainedTokens(data);
  const config =
    lossFn === 'ppo'
      ? { loss_fn_config: { clip_low_threshold: 1 - loss.clipEps, clip_high_threshold: 1 + loss.clipEps } }
      : {};
  const out = data.map((d, i) => {
    const logprobs: number[] = [];
    const advantages: number[] = [];
    const weights: number[] = [];
    for (let t = 1; t < d.tokens.length; t++) {
      if (!(d.weights[t]! > 0)) {
        logprobs.push(0);
        advantages.push(0);
        weights.push(0);
        continue;
      }
      const q = d.samplingLogprobs[t]!;
      let a = d.advantages[t]!;
      if (loss.klCoef > 0) {
        const b = base![i]![t];
        if (typeof b !== 'number' || !Number.isFinite(b))
          throw new TinkerDatumError(`datum ${i}: no base logprob for trained token ${t}`);
        a += klAdvantage(q, b, loss.klCoef);
      }
      if (!Number.isFinite(q) || !Number.isFinite(a))
        throw new TinkerDatumError(`datum ${i}: token ${t} has logprob ${q} and advantage ${a}`);
      logprobs.push(q);
      advantages.push(a / n);
      weights.push(1);
    }
    return tinkerDatum(d.tokens, {
      ...(opts.mask ? { weights: float32(weights) } : {}),
      logprobs: float32(logprobs),
      advantages: float32(advantages),
    });
  });
  return { data: out, loss_fn: lossFn, ...config };
}

/**
 * The `cross_entropy` datums of one `forwardBackwardCrossEntropy(data, loss)`: weights w_t x coef / W
 * (W the summed weights > 0 of the whole batch), so that Tinker's sum -sum(w' x lp) is coef x the
 * contract's weighted token-mean negative log-likelihood, and so is its gradient.
 */
export function supervisedDatums(
  data: readonly SupervisedDatum[],
  loss: CrossEntropyLoss,
): TinkerForwardBackwardInput {
  if (!(loss.coef >= 0 && Number.isFinite(loss.coef)))
    throw new TinkerDatumError(`the cross-entropy coefficient must be finite and >= 0, got ${loss.coef}`);
  data.forEach((d, i) => {
    checkShape(d, i);
  });
  let total = 0;
  for (const d of data)
    for (let t = 1; t < d.tokens.length; t++) if (d.weights[t]! > 0) total += d.weights[t]!;
  const scale = total > 0 ? loss.coef / total : 0;
  const out = data.map((d) =>
    tinkerDatum(d.tokens, { weights: float32(d.weights.slice(1).map((w) => (w > 0 ? w * scale : 0))) }),
  );
  return { data: out, loss_fn: 'cross_entropy' };
}

export interface ChunkLimits {
  /** datums per request (the service's limit is 1024) */
  readonly maxDatums: number;
  /** model-input tokens per request; a datum longer than this is a chunk of its own */
  readonly maxTokens?: number;
}

/**
 * The forward-backward inputs that together send `input` (datums in order), each within `limits`.
 * The datums carry the whole batch's normalisation, so the chunks' gradients add up to the batch's.
 */
export function chunkDatums(
  input: TinkerForwardBackwardInput,
  limits: ChunkLimits,
): TinkerForwardBackwardInput[] {
  if (!(Number.isInteger(limits.maxDatums) && limits.maxDatums >= 1))
    throw new TinkerDatumError(`maxDatums must be a positive integer, got ${limits.maxDatums}`);
  const maxTokens = limits.maxTokens ?? Number.POSITIVE_INFINITY;
  const chunks: TinkerDatum[][] = [];
  let cur: TinkerDatum[] = [];
  let tokens = 0;
  for (const d of input.data) {
    const len = d.model_input.chunks[0].tokens.length;
    if (cur.length > 0 && (cur.length >= limits.maxDatums || tokens + len > maxTokens)) {
      chunks.push(cur);
      cur = [];
      tokens = 0;
    }
    cur.push(d);
    tokens += len;
  }
  if (cur.length > 0) chunks.push(cur);
  return chunks.map((data) => ({ ...input, data }));
}
