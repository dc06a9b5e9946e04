/**
 * One rollout's view of the sampler: every request gets its own seed, derived from the rollout's
 * seed and the step's index (so the G rollouts of a task differ, and a rerun draws the same), and
 * what the sampler returned for training is kept in step order (prompt ids, completion ids,
 * logprobs), with the time spent waiting for it.
 */

import type { Completion, CompletionRequest, Policy, PromptLength } from '../policy/policy.js';
import { mixSeed } from '../util/rng.js';
import type { SampledStep } from './sequences.js';

export class RolloutSampler implements Policy {
  readonly name: string;
  readonly steps: SampledStep[] = [];
  /** milliseconds spent waiting for completions */
  waitedMs = 0;
  readonly promptLength?: (request: CompletionRequest) => PromptLength;
  readonly promptTokenIds?: (request: CompletionRequest) => readonly number[];

  constructor(
    private readonly inner: Policy,
    private readonly seed: number,
  ) {
    this.name = inner.name;
    if (inner.promptLength) this.promptLength = inner.promptLength;
    if (inner.promptTokenIds) this.promptTokenIds = inner.promptTokenIds;
  }

  async complete(request: CompletionRequest, signal?: AbortSignal): Promise<Completion> {
    const t0 = performance.now();
    const c = await this.inner.complete({ ...request, seed: mixSeed(this.seed, this.steps.length) }, signal);
    this.waitedMs += performance.now() - t0;
    if (!c.promptTokenIds || !c.tokenIds || !c.logprobs)
      throw new Error(
        `${this.inner.name} returned no token ids and logprobs; training needs a sampler that returns them`,
      );
    const cached = c.usage?.cachedPromptTokens;
    this.steps.push({
      promptTokenIds: c.promptTokenIds,
      tokenIds: c.tokenIds,
      logprobs: c.logprobs,
      ...(cached !== undefined ? { cachedPromptTokens: cached } : {}),
    });
    return c;
  }
}
