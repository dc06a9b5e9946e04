/**
 * What a round cost in tokens, and in money where the user gave the service's prices, pure. The
 * sampler's side is counted from the rollouts themselves (every learner's), the learner's extras
 * (the KL term's prefills, the time per request kind) from the learner when it reports them.
 */
import type { SampledStep } from './sequences.js';

/** USD per million tokens, as a service's price list states them (0: not given) */
export interface Prices {
  readonly prefill: number;
  readonly sample: number;
  readonly train: number;
}

export interface RouteTime {
  readonly count: number;
  /** from the call to the result */
  readonly ms: number;
  /** after the service accepted it: its queue, the clock cycle it waited for, the work */
  readonly afterAcceptMs: number;
}

export interface RoundUsage {
  /** prompt tokens over every sample request */
  readonly promptTokens: number;
  /**
   * of those, the start each request's prompt shares with its rollout's context so far (the
   * previous prompt and completion): what a prefix cache could serve
   */
  readonly sharedPrefixTokens: number;
  /** of those, what the sampler says its prefix cache served (a Tinker service does), when it says */
  readonly cachedPromptTokens?: number;
  readonly sampledTokens: number;
  /** tokens that carried the policy-gradient loss, and tokens the learner's passes read */
  readonly trainedTokens: number;
  readonly trainReadTokens: number;
  /** base-model prefill tokens for the KL term */
  readonly klPrefillTokens: number;
  /** the service session the learner worked in (a remote learner's) */
  readonly session?: string;
  /** the learner's requests by kind (a remote learner's), this round */
  readonly requests?: Readonly<Record<string, RouteTime>>;
  /** estimated from the prices the config gives, USD; absent without prices */
  readonly estimatedCostUsd?: number;
}

/**
 * The prompt, shared-prefix and sampled tokens of one rollout's sample requests, in order, and the
 * cached ones the sampler reported (undefined when no step says).
 */
export function samplingTokens(steps: readonly SampledStep[]): {
  prompt: number;
  shared: number;
  sampled: number;
  cached: number | undefined;
} {
  let prompt = 0;
  let shared = 0;
  let sampled = 0;
  let cached: number | undefined;
  let context: readonly number[] = [];
  for (const s of steps) {
    prompt += s.promptTokenIds.length;
    sampled += s.tokenIds.length;
    if (s.cachedPromptTokens !== undefined) cached = (cached ?? 0) + s.cachedPromptTokens;
    let n = 0;
    while (n < s.promptTokenIds.length && n < context.length && s.promptTokenIds[n] === context[n]) n++;
    shared += n;
    context = [...s.promptTokenIds, ...s.tokenIds];
  }
  return { prompt, shared, sampled, cached };
}

/** prompt and KL prefills at the prefill price, completions at the sample price, passes' reads at train */
export function estimateCost(
  u: Pick<RoundUsage, 'promptTokens' | 'sampledTokens' | 'trainReadTokens' | 'klPrefillTokens'>,
  p: Prices,
): number {
  return (
    ((u.promptTokens + u.klPrefillTokens) * p.prefill +
      u.sampledTokens * p.sample +
      u.trainReadTokens * p.train) /
    1e6
  );
}

export const hasPrices = (p: Prices): boolean => p.prefill > 0 || p.sample > 0 || p.train > 0;

/** what was added to running request totals between two snapshots; kinds with nothing new left out */
export function timesSince(
  now: Readonly<Record<string, RouteTime>>,
  before: Readonly<Record<string, RouteTime>>,
): Record<string, RouteTime> {
  const out: Record<string, RouteTime> = {};
  for (const [route, t] of Object.entries(now)) {
    const b = before[route] ?? { count: 0, ms: 0, afterAcceptMs: 0 };
    if (t.count === b.count) continue;
    out[route] = {
      count: t.count - b.count,
      ms: t.ms - b.ms,
      afterAcceptMs: t.afterAcceptMs - b.afterAcceptMs,
    };
  }
  return out;
}
