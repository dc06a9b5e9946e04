/**
 * The learner contract's statistics of a forward-backward pass, from the logprobs Tinker returns
 * (`loss_fn_outputs[i].logprobs`: the trainer's logprob of each target of datum i), pure. Tinker's
 * own `loss:sum` metric is the sum the datums were scaled for, and SkyRL's JAX backend returns no
 * metrics at all; these are the token means the embedded learner reports (losses.ts `grpoStats`),
 * so a run record reads the same whichever learner wrote it.
 */
import type {
  CrossEntropyResult,
  ForwardBackwardResult,
  PpoLoss,
  SupervisedDatum,
  TrainingDatum,
} from '../learner.js';
import { type BaseLogprobs, TinkerDatumError } from './seal-datums.js';

/** datum i's returned target logprobs, checked against its tokens */
function targetLogprobs(
  outputs: readonly (readonly number[])[],
  d: SupervisedDatum,
  i: number,
): readonly number[] {
  const lp = outputs[i];
  if (!lp || lp.length !== d.tokens.length - 1)
    throw new TinkerDatumError(
      `datum ${i}: ${d.tokens.length - 1} targets but ${lp?.length ?? 'no'} returned logprobs`,
    );
  return lp;
}

/**
 * The token means of the PPO-clip surrogate (on the advantages as the contract gives them, before
 * Tinker's 1/N), the k3 KL to the base model (0 without `base`), the clip fraction and the mean
 * ratio over the trained tokens of `data`, from the trainer's logprobs of one pass.
 */
export function policyStats(
  data: readonly TrainingDatum[],
  outputs: readonly (readonly number[])[],
  loss: PpoLoss,
  base?: BaseLogprobs,
): ForwardBackwardResult {
  if (outputs.length !== data.length)
    throw new TinkerDatumError(`${data.length} datums but logprobs for ${outputs.length}`);
  const lo = 1 - loss.clipEps;
  const hi = 1 + loss.clipEps;
  let n = 0;
  let pgSum = 0;
  let klSum = 0;
  let clipped = 0;
  let ratioSum = 0;
  let samplerKlSum = 0;
  let entropySum = 0;
  data.forEach((d, i) => {
    const lp = targetLogprobs(outputs, d, i);
    for (let t = 1; t < d.tokens.length; t++) {
      if (!(d.weights[t]! > 0)) continue;
      n++;
      const A = d.advantages[t]!;
      const ratio = Math.exp(lp[t - 1]! - d.samplingLogprobs[t]!);
      const unclipped = -A * ratio;
      const clippedLoss = -A * Math.min(Math.max(ratio, lo), hi);
      ratioSum += ratio;
      // k3 with the sampler as the sampling distribution: r - 1 - log r, r = trainer / sampler
      samplerKlSum += Math.expm1(lp[t - 1]! - d.samplingLogprobs[t]!) - (lp[t - 1]! - d.samplingLogprobs[t]!);
      entropySum -= d.samplingLogprobs[t]!;
      if (clippedLoss > unclipped) {
        pgSum += clippedLoss;
        clipped++;
      } else pgSum += unclipped;
      const b = base?.[i]?.[t];
      if (typeof b === 'number') {
        const diff = b - lp[t - 1]!;
        klSum += Math.expm1(diff) - diff;
      }
    }
  });
  if (n === 0) return { loss: 0, pgLoss: 0, kl: 0, clipFrac: 0, meanRatio: 1, tokens: 0 };
  const pgLoss = pgSum / n;
  const kl = klSum / n;
  return {
    loss: pgLoss + loss.klCoef * kl,
    pgLoss,
    kl,
    clipFrac: clipped / n,
    meanRatio: ratioSum / n,
    samplerKl: samplerKlSum / n,
    samplerEntropy: entropySum / n,
    tokens: n,
  };
}

/** the weighted token-mean negative log-likelihood (unscaled by coef) of `data`, from the returned logprobs */
export function crossEntropyStats(
  data: readonly SupervisedDatum[],
  outputs: readonly (readonly number[])[],
): CrossEntropyResult {
  if (outputs.length !== data.length)
    throw new TinkerDatumError(`${data.length} datums but logprobs for ${outputs.length}`);
  let sum = 0;
  let weight = 0;
  let tokens = 0;
  data.forEach((d, i) => {
    const lp = targetLogprobs(outputs, d, i);
    for (let t = 1; t < d.tokens.length; t++) {
      const w = d.weights[t]!;
      if (!(w > 0)) continue;
      sum -= w * lp[t - 1]!;
      weight += w;
      tokens++;
    }
  });
  return { loss: weight > 0 ? sum / weight : 0, tokens };
}
