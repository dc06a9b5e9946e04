/**
 * Entry of a sampler thread (started by pool.ts): loads the checkpoint itself and answers completion
 * requests with an `EmbeddedPolicy` of its own. The pool always sends a seed, so the policy's own
 * seed stream is never used.
 */
import { serveRequests } from '../../util/thread-pool.js';
import type { Completion, CompletionRequest } from '../policy.js';
import { loadCheckpoint } from './checkpoint.js';
import { EmbeddedPolicy } from './policy.js';
import type { SamplerWorkerData, SamplerWorkerInfo } from './pool.js';

serveRequests(
  (data: SamplerWorkerData) => {
    const { model, tokenizer, config } = loadCheckpoint(data.dir);
    const { prefixCache } = data.options;
    // this thread's model is its own, and nothing changes its weights: new weights come as a new pool
    const options = {
      ...data.options,
      prefixCache: prefixCache === false ? prefixCache : { ...prefixCache, weightsFixed: true },
    };
    return { policy: new EmbeddedPolicy(model, tokenizer, options), modelSha256: config.modelSha256 };
  },
  ({ policy }, request: CompletionRequest): Promise<Completion> => policy.complete(request),
  ({ modelSha256 }): SamplerWorkerInfo => ({ modelSha256 }),
);
