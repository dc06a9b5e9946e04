/**
 * A thread of `bench/embedded.ts`'s two-thread sampling figure: it holds its own copy of the
 * benchmark's model and samples the share of a group it is sent (`sampleBatch`), as a sampler
 * thread of the pool does with the requests it takes.
 */
import { Gpt, type GptConfig } from '../src/nn/model.js';
import { sampleBatch } from '../src/policy/embedded/sampler.js';
import { serveRequests } from '../src/util/thread-pool.js';

export interface GroupSamplerData {
  readonly config: GptConfig;
  readonly params: Float32Array;
}

export interface GroupSamplerRequest {
  readonly prompts: readonly (readonly number[])[];
  readonly seed: number;
  readonly maxTokens: number;
}

serveRequests(
  (data: GroupSamplerData) => new Gpt(data.config, data.params),
  (model, r: GroupSamplerRequest): number =>
    sampleBatch(model, r.prompts, { seed: r.seed, maxTokens: r.maxTokens, temperature: 1 }).reduce(
      (n, s) => n + s.tokenIds.length,
      0,
    ),
);
