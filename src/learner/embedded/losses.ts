/**
 * The losses the embedded model trains on, with what they are built from: the logprob of a target
 * token and its gradient on the logits; the next-token cross-entropy of supervised training; and
 * GRPO's PPO-clip surrogate with a k3 KL to a frozen reference (docs/method.md, section 7),
 * token-mean over the masked (assistant) tokens of the whole batch.
 *
 * Each loss is a `Loss`: how a batch's targets are counted, the summed loss parts of any share of
 * a batch with their gradient, and the statistics of a whole batch's sums. Summing shares with the
 * whole batch's denominator is what lets the trainer (trainer.ts) compute a gradient on this thread
 * or split over the gradient workers (parallel.ts) with one code path; a worker rebuilds the loss
 * from its serialisable `spec`.
 *
 * Pure functions of the model and the batch: nothing here keeps state between calls.
 */

import { logprobAndGradF32, tokenLogprobF32 } from '../../nn/kernels/pointwise.js';
import { type Arr, allocate, type ForwardResult, type Gpt } from '../../nn/model.js';
import type { ForwardBackwardResult } from '../learner.js';
import { eachAlone, type PromptGroup, promptGroups } from './shared-prompts.js';

// ---------------------------------------------------------------------------------------------
// logprobs on logits

/** log-softmax of row `t` evaluated at `target` */
export function tokenLogprob(logits: Arr, V: number, t: number, target: number): number {
  if (logits instanceof Float32Array) return tokenLogprobF32(logits, V, t, target);
  const r = t * V;
  let max = Number.NEGATIVE_INFINITY;
  for (let j = 0; j < V; j++) if (logits[r + j]! > max) max = logits[r + j]!;
  let sum = 0;
  for (let j = 0; j < V; j++) sum += Math.exp(logits[r + j]! - max);
  return logits[r + target]! - max - Math.log(sum);
}

/**
 * Per-position logprobs of each next token: out[t] = log p(tokens[t] | tokens[<t]) for t >= 1
 * (out[0] = 0).
 */
export function sequenceLogprobs(logits: Arr, V: number, tokens: ArrayLike<number>): Float64Array {
  const out = new Float64Array(tokens.length);
  for (let t = 1; t < tokens.length; t++) out[t] = tokenLogprob(logits, V, t - 1, tokens[t]!);
  return out;
}

/**
 * Adds `w * d logp(target)/dlogits` for row `t` into `dlogits` (w = dLoss/dlogp), that is
 * w * (onehot(target) - softmax(row)); returns `tokenLogprob` of the row, which the same pass over
 * it gives
 */
export function logprobAndGrad(
  dlogits: Arr,
  logits: Arr,
  V: number,
  t: number,
  target: number,
  w: number,
): number {
  if (dlogits instanceof Float32Array && logits instanceof Float32Array)
    return logprobAndGradF32(dlogits, logits, V, t, target, w);
  const r = t * V;
  let max = Number.NEGATIVE_INFINITY;
  for (let j = 0; j < V; j++) if (logits[r + j]! > max) max = logits[r + j]!;
  let sum = 0;
  for (let j = 0; j < V; j++) sum += Math.exp(logits[r + j]! - max);
  const inv = 1 / sum;
  for (let j = 0; j < V; j++) dlogits[r + j] = dlogits[r + j]! - w * Math.exp(logits[r + j]! - max) * inv;
  dlogits[r + target] = dlogits[r + target]! + w;
  return logits[r + target]! - max - Math.log(sum);
}

// ---------------------------------------------------------------------------------------------
// the loss contract

/** What every training sequence has; a batch is split over workers by its length. */
export interface TokenSequence {
  readonly tokens: readonly number[];
}

/** A batch's loss targets: the tokens that carry loss, and the denominator of its token mean. */
export interface Targets {
  readonly count: number;
  readonly denominator: number;
}

/** Summed loss parts: plain numbers, so the sums of a batch's shares add up key by key. */
export type LossSums = { readonly [part: string]: number };

/** Which loss, and its options: what a gradient worker rebuilds the loss from (`lossOf`). */
export type LossSpec =
  | { readonly kind: 'cross-entropy'; readonly coef?: number }
  | { readonly kind: 'grpo'; readonly opts: GrpoLossOptions };

export interface Loss<S extends TokenSequence, P extends LossSums, R extends { readonly tokens: number }> {
  readonly spec: LossSpec;
  /** the sums of no tokens */
  readonly zero: P;
  /** checks the shapes of `batch` and counts its targets */
  targets(batch: readonly S[]): Targets;
  /**
   * The summed loss parts of `batch` (a whole batch or one share of it); when `grads` is given,
   * ADDS the gradient of (summed loss / `denominator`) into it. With the whole batch's denominator,
   * a share contributes exactly its part of the batch's token-mean loss and gradient.
   */
  sums(model: Gpt, reference: Gpt | null, batch: readonly S[], grads: Arr | null, denominator: number): P;
  /**
   * the sequences `sums` computes together (a prompt they share runs once), which a split over
   * workers keeps whole; absent, every sequence is its own
   */
  groups?(batch: readonly S[]): readonly PromptGroup[];
  /** the statistics of a whole batch from its summed parts */
  stats(sums: P, targets: Targets): R;
}

/** The sums of a batch's shares, added key by key in the order given (worker order). */
export function addSums<P extends LossSums>(zero: P, parts: readonly P[]): P {
  const out: Record<string, number> = { ...zero };
  for (const p of parts) for (const k of Object.keys(out)) out[k] = out[k]! + p[k]!;
  return out as P;
}

/**
 * The statistics of `batch` under `loss`, computed on this thread; when `grads` is given, ADDS the
 * batch's gradient into it. `reference` is GRPO's frozen model for the KL term (null elsewhere).
 */
export function lossAndGrad<
  S extends TokenSequence,
  P extends LossSums,
  R extends { readonly tokens: number },
>(loss: Loss<S, P, R>, model: Gpt, reference: Gpt | null, batch: readonly S[], grads: Arr | null): R {
  const targets = loss.targets(batch);
  const parts = targets.count === 0 ? [] : [loss.sums(model, reference, batch, grads, targets.denominator)];
  return loss.stats(addSums(loss.zero, parts), targets);
}

// ---------------------------------------------------------------------------------------------
// cross-entropy (supervised training)

export interface SupervisedSequence extends TokenSequence {
  /**
   * per token, its weight as a training target: 0 for none, 1 for a full target, in between for a
   * token that should count less (default: every token after the first, weight 1)
   */
  readonly lossMask?: readonly number[];
}

/** the number of target tokens of `batch` */
export function countTargets(batch: readonly SupervisedSequence[]): number {
  let n = 0;
  for (const s of batch) for (let t = 1; t < s.tokens.length; t++) if ((s.lossMask?.[t] ?? 1) > 0) n++;
  return n;
}

/** the summed target weights of `batch`: the denominator of its weighted token-mean loss */
export function targetWeight(batch: readonly SupervisedSequence[]): number {
  let w = 0;
  for (const s of batch)
    for (let t = 1; t < s.tokens.length; t++) {
      const m = s.lossMask?.[t] ?? 1;
      if (m > 0) w += m;
    }
  return w;
}

/** the positions t >= 1 whose token is a target (mask > 0; every one when there is no mask) */
function targetPositions(s: SupervisedSequence): number[] {
  const out: number[] = [];
  for (let t = 1; t < s.tokens.length; t++) if ((s.lossMask?.[t] ?? 1) > 0) out.push(t);
  return out;
}

/**
 * The forward pass whose logits row j predicts `targets[j]`: only those rows go through the output
 * projection, unless every row but the last is one (an unmasked sequence), which is the full pass.
 */
function forwardAt(
  model: Gpt,
  s: SupervisedSequence,
  targets: readonly number[],
  backward: boolean,
): ForwardResult {
  if (targets.length === s.tokens.length - 1) return model.forward(s.tokens, { backward });
  return model.forward(s.tokens, { rows: targets.map((t) => t - 1), backward });
}

export interface CrossEntropySums extends LossSums {
  /** summed weighted negative log-likelihood of the targets */
  readonly lossSum: number;
  readonly tokens: number;
}

export interface CrossEntropyStats {
  /** weighted token-mean negative log-likelihood */
  readonly loss: number;
  readonly tokens: number;
}

/**
 * The summed weighted negative log-likelihood of the targets of `batch`; when `grads` is given,
 * ADDS the gradient of (`coef` x that sum / `denominator`) into it.
 */
export function crossEntropySumAndGrad(
  model: Gpt,
  batch: readonly SupervisedSequence[],
  grads: Arr | null,
  denominator: number,
  coef = 1,
): CrossEntropySums {
  const V = model.config.vocabSize;
  let loss = 0;
  let n = 0;
  for (const s of batch) {
    const targets = targetPositions(s);
    if (targets.length === 0) continue;
    const { logits, cache } = forwardAt(model, s, targets, grads !== null);
    const dlogits = grads ? allocate(model.dtype, logits.length) : null;
    for (const [j, t] of targets.entries()) {
      const w = s.lossMask?.[t] ?? 1;
      const y = s.tokens[t]!;
      const g = (-w * coef) / denominator;
      loss -= w * (dlogits ? logprobAndGrad(dlogits, logits, V, j, y, g) : tokenLogprob(logits, V, j, y));
      n++;
    }
    if (grads && dlogits) model.backward(cache, dlogits, grads);
  }
  return { lossSum: loss, tokens: n };
}

/**
 * The weighted token-mean cross-entropy, its gradient scaled by `coef` (a term added to another
 * loss's gradient before one optimiser step); the statistics report the unscaled mean.
 */
export function crossEntropyLoss(coef = 1): Loss<SupervisedSequence, CrossEntropySums, CrossEntropyStats> {
  return {
    spec: coef === 1 ? { kind: 'cross-entropy' } : { kind: 'cross-entropy', coef },
    zero: { lossSum: 0, tokens: 0 },
    targets: (batch) => ({ count: countTargets(batch), denominator: targetWeight(batch) }),
    sums: (model, _reference, batch, grads, denominator) =>
      crossEntropySumAndGrad(model, batch, grads, denominator, coef),
    stats: (sums, targets) =>
      targets.count === 0
        ? { loss: 0, tokens: 0 }
        : { loss: sums.lossSum / targets.denominator, tokens: sums.tokens },
  };
}

export const crossEntropy = crossEntropyLoss(1);

/** Mean cross-entropy over the targets of `batch`; when `grads` is given, ADDS its gradient into it. */
export function crossEntropyLossAndGrad(
  model: Gpt,
  batch: readonly SupervisedSequence[],
  grads: Arr | null,
): CrossEntropyStats {
  return lossAndGrad(crossEntropy, model, null, batch, grads);
}

/** Teacher-forced fit of a model on sequences it is not trained on. */
export interface HeldOutScore {
  /** mean negative log-likelihood of the target tokens */
  readonly loss: number;
  /** share of target tokens that are the model's most likely next token (what greedy decoding writes) */
  readonly accuracy: number;
  readonly tokens: number;
}

/** Scores the targets (mask > 0, each counted once whatever its weight) of `sequences`. */
export function heldOutScore(model: Gpt, sequences: readonly SupervisedSequence[]): HeldOutScore {
  const V = model.config.vocabSize;
  let loss = 0;
  let hits = 0;
  let n = 0;
  for (const s of sequences) {
    const targets = targetPositions(s);
    if (targets.length === 0) continue;
    const { logits } = forwardAt(model, s, targets, false);
    for (const [j, t] of targets.entries()) {
      const y = s.tokens[t]!;
      loss -= tokenLogprob(logits, V, j, y);
      const row = j * V;
      let best = 0;
      for (let j = 1; j < V; j++) if (logits[row + j]! > logits[row + best]!) best = j;
      if (best === y) hits++;
      n++;
    }
  }
  return { loss: n > 0 ? loss / n : 0, accuracy: n > 0 ? hits / n : 0, tokens: n };
}

// ---------------------------------------------------------------------------------------------
// GRPO: PPO-clip surrogate + k3 KL to a frozen reference

export interface GrpoSequence extends TokenSequence {
  /** per token, 1 where the token carries loss (assistant tokens); lossMask[0] must be 0 */
  readonly lossMask: readonly number[];
  /** per token, the sampler's logprob (read where lossMask is 1) */
  readonly oldLogprobs: readonly number[];
  /**
   * the advantage (already group-normalised and diagnosis-weighted): one for the whole sequence, or
   * one per token (read where lossMask is 1), e.g. when only some turns of a rollout take its credit
   */
  readonly advantage: number | readonly number[];
  /** per token, the reference model's logprobs; computed from `reference` when absent */
  readonly refLogprobs?: readonly number[];
}

export interface GrpoLossOptions {
  /** PPO ratio clip; default 0.2 */
  readonly clipEps?: number;
  /** k3 KL-to-reference coefficient; default 0.001 */
  readonly klCoef?: number;
  /**
   * the sampling temperature the old logprobs were drawn at: the ratio compares like with like
   * (logits / T for both); default 1. The KL term always uses the untempered distributions.
   */
  readonly temperature?: number;
  /**
   * run a prompt that several sequences of the batch begin with once (shared-prompts.ts); the same
   * loss and gradient up to float rounding. Default true
   */
  readonly sharePrompts?: boolean;
}

/** The summed parts of a batch's GRPO loss; divided by `tokens` they are the token means. */
export interface GrpoSums extends LossSums {
  readonly pgSum: number;
  readonly klSum: number;
  readonly clipped: number;
  readonly ratioSum: number;
  readonly tokens: number;
}

/** the token means of a batch's GRPO loss: what the learner contract reports of it */
export type GrpoStats = ForwardBackwardResult;

/** Checks a batch's shapes and counts its loss tokens (the token-mean denominator). */
export function grpoTargets(batch: readonly GrpoSequence[]): number {
  let n = 0;
  for (const s of batch) {
    if (
      s.lossMask.length !== s.tokens.length ||
      s.oldLogprobs.length !== s.tokens.length ||
      (typeof s.advantage !== 'number' && s.advantage.length !== s.tokens.length)
    ) {
      throw new Error(
        'GRPO: tokens, lossMask, oldLogprobs (and per-token advantages) must have the same length',
      );
    }
    if ((s.lossMask[0] ?? 0) > 0)
      throw new Error('GRPO: the first token cannot carry loss (nothing predicts it)');
    for (let t = 1; t < s.tokens.length; t++) if (s.lossMask[t]! > 0) n++;
  }
  return n;
}

/** the groups whose shared prompt GRPO runs once: `promptGroups`, or each sequence alone */
function grpoGroups(batch: readonly GrpoSequence[], opts: GrpoLossOptions): readonly PromptGroup[] {
  return opts.sharePrompts === false ? eachAlone(batch.length) : promptGroups(batch);
}

/** the sequence from token P on: what continues a prefix of P tokens */
function continuation(s: GrpoSequence, P: number): GrpoSequence {
  if (P === 0) return s;
  return {
    tokens: s.tokens.slice(P),
    lossMask: s.lossMask.slice(P),
    oldLogprobs: s.oldLogprobs.slice(P),
    advantage: typeof s.advantage === 'number' ? s.advantage : s.advantage.slice(P),
    ...(s.refLogprobs ? { refLogprobs: s.refLogprobs.slice(P) } : {}),
  };
}

/**
 * The summed GRPO loss parts of `batch`; when `grads` is given, ADDS the gradient of (summed loss
 * / `denominator`) into it. One sequence's activations are alive at a time, besides those of the
 * prompt its group shares (`sharePrompts`), whose backward pass runs once the group's have.
 */
export function grpoSumsAndGrad(
  model: Gpt,
  reference: Gpt | null,
  batch: readonly GrpoSequence[],
  opts: GrpoLossOptions,
  grads: Arr | null,
  denominator: number,
): GrpoSums {
  const eps = opts.clipEps ?? 0.2;
  const beta = opts.klCoef ?? 0.001;
  const T = opts.temperature ?? 1;
  if (!(T > 0)) throw new Error('GRPO: the sampling temperature must be above 0');
  const V = model.config.vocabSize;
  let n = 0;
  let pgSum = 0;
  let klSum = 0;
  let clipped = 0;
  let ratioSum = 0;
  for (const group of grpoGroups(batch, opts)) {
    const P = group.shared;
    const members = group.members.map((i) => continuation(batch[i]!, P));
    const prompt = batch[group.members[0]!]!.tokens.slice(0, P);
    const backward = grads !== null;
    const prefix = P > 0 ? model.prefix(prompt, { backward }) : undefined;
    const needsReference = beta !== 0 && members.some((s) => !s.refLogprobs);
    if (needsReference && !reference) throw new Error('GRPO: no reference model and no refLogprobs');
    const refPrefix = P > 0 && needsReference ? reference!.prefix(prompt, { backward: false }) : undefined;
    for (const s of members) {
      // only the rows that predict a target go through the output projection; a sequence with
      // none adds nothing to the loss or the gradient
      const targets = targetPositions(s);
      if (targets.length === 0) continue;
      const rows = targets.map((t) => t - 1);
      const { logits, cache } = model.forward(s.tokens, { prefix, rows, backward });
      // the ratio's logprobs at the sampling temperature; d/dz log softmax(z/T) = (1/T) (onehot - softmax(z/T))
      let tempered = logits;
      if (T !== 1) {
        tempered = allocate(model.dtype, logits.length);
        for (let j = 0; j < logits.length; j++) tempered[j] = logits[j]! / T;
      }
      const refLogits =
        !s.refLogprobs && beta !== 0
          ? reference!.forward(s.tokens, { prefix: refPrefix, rows, backward: false }).logits
          : null;
      const dlogits = grads ? allocate(model.dtype, logits.length) : null;
      for (const [j, t] of targets.entries()) {
        n++;
        const token = s.tokens[t]!;
        const logp = tokenLogprob(logits, V, j, token);
        const logpT = T === 1 ? logp : tokenLogprob(tempered, V, j, token);
        const A = typeof s.advantage === 'number' ? s.advantage : s.advantage[t]!;
        const ratio = Math.exp(logpT - s.oldLogprobs[t]!);
        const cr = Math.min(Math.max(ratio, 1 - eps), 1 + eps);
        const unclipped = -A * ratio;
        const clippedLoss = -A * cr;
        ratioSum += ratio;
        let dlpT = 0;
        if (clippedLoss > unclipped) {
          pgSum += clippedLoss;
          clipped++;
        } else {
          pgSum += unclipped;
          dlpT = -A * ratio;
        }
        let dlp = 0;
        if (beta !== 0) {
          const ref = s.refLogprobs ? s.refLogprobs[t]! : tokenLogprob(refLogits!, V, j, token);
          const d = ref - logp;
          const e = Math.exp(d);
          klSum += e - d - 1;
          dlp = beta * (1 - e);
        }
        if (dlogits && dlpT !== 0) logprobAndGrad(dlogits, tempered, V, j, token, dlpT / T / denominator);
        if (dlogits && dlp !== 0) logprobAndGrad(dlogits, logits, V, j, token, dlp / denominator);
      }
      if (grads && dlogits) model.backward(cache, dlogits, grads);
    }
    if (grads && prefix) model.backwardPrefix(prefix, grads);
  }
  return { pgSum, klSum, clipped, ratioSum, tokens: n };
}

export function grpoStats(sums: GrpoSums, klCoef = 0.001): GrpoStats {
  const n = sums.tokens;
  if (n === 0) return { loss: 0, pgLoss: 0, kl: 0, clipFrac: 0, meanRatio: 1, tokens: 0 };
  const pgLoss = sums.pgSum / n;
  const kl = sums.klSum / n;
  return {
    loss: pgLoss + klCoef * kl,
    pgLoss,
    kl,
    clipFrac: sums.clipped / n,
    meanRatio: sums.ratioSum / n,
    tokens: n,
  };
}

/** The GRPO loss with `opts`; the KL term needs a reference model unless every sequence carries refLogprobs. */
export function grpoLoss(opts: GrpoLossOptions = {}): Loss<GrpoSequence, GrpoSums, GrpoStats> {
  return {
    spec: { kind: 'grpo', opts },
    zero: { pgSum: 0, klSum: 0, clipped: 0, ratioSum: 0, tokens: 0 },
    targets: (batch) => {
      const n = grpoTargets(batch);
      return { count: n, denominator: n };
    },
    sums: (model, reference, batch, grads, denominator) =>
      grpoSumsAndGrad(model, reference, batch, opts, grads, denominator),
    groups: (batch) => grpoGroups(batch, opts),
    stats: (sums) => grpoStats(sums, opts.klCoef),
  };
}

/**
 * The GRPO loss of `batch` under `model`; when `grads` is given, ADDS the gradient into it.
 * `reference` may be null when every sequence carries refLogprobs or klCoef is 0.
 */
export function grpoLossAndGrad(
  model: Gpt,
  reference: Gpt | null,
  batch: readonly GrpoSequence[],
  opts: GrpoLossOptions,
  grads: Arr | null,
): GrpoStats {
  return lossAndGrad(grpoLoss(opts), model, reference, batch, grads);
}

/** The loss a spec names (in a gradient worker, which receives specs, not functions). */
export function lossOf(spec: LossSpec): Loss<TokenSequence, LossSums, { readonly tokens: number }> {
  switch (spec.kind) {
    case 'cross-entropy':
      return crossEntropyLoss(spec.coef ?? 1);
    case 'grpo':
      return grpoLoss(spec.opts);
    default:
      throw new Error(`unknown loss ${String((spec as { kind: unknown }).kind)}`);
  }
}
