/**
 * Entry of a sampler thread (started by pool.ts): loads the checkpoint itself and answers completion
 * requests with an `EmbeddedPolicy` of its own, or loads another checkpoint in place of the one it
 * holds (new weights after an update: the thread, its compiled kernels and warm code stay). The
 * pool always sends a seed, so the policy's own seed stream is never used.
 */
import { serveRequests } from '../../util/thread-pool.js';
import type { Completion } from '../policy.js';
import { loadCheckpoint } from './checkpoint.js';
import { EmbeddedPolicy } from './policy.js';
import type { SamplerReply, SamplerRequest, SamplerWorkerData, SamplerWorkerInfo } from './pool.js';

interface Loaded {
  policy: EmbeddedPolicy;
  modelSha256: string;
}

function load(dir: string, options: SamplerWorkerData['options']): Loaded {
  const { model, tokenizer, config } = loadCheckpoint(dir);
  const { prefixCache } = options;
  // this thread's model is its own, and nothing changes its weights in place: new weights come
  // as a new model
  const opts = {
    ...options,
    prefixCache: prefixCache === false ? prefixCache : { ...prefixCache, weightsFixed: true },
  };
  return { policy: new EmbeddedPolicy(model, tokenizer, opts), modelSha256: config.modelSha256 };
}

serveRequests(
  (data: SamplerWorkerData) => ({ ...load(data.dir, data.options), options: data.options }),
  (state, request: SamplerRequest): Promise<Completion> | SamplerReply => {
    if ('complete' in request) return state.policy.complete(request.complete);
    const next = load(request.reload, state.options);
    // the old keys and values go back now rather than when the collector finds them
    state.policy.prefixCache?.clear();
    Object.assign(state, next);
    return { modelSha256: next.modelSha256 };
  },
  ({ modelSha256 }): SamplerWorkerInfo => ({ modelSha256 }),
);
