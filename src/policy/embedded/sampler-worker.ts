/**
 * Entry of a sampler thread (started by pool.ts): loads the checkpoint itself and answers batches of
 * completion requests with an `EmbeddedPolicy` of its own (made in one turn, they are decoded
 * together), or loads another checkpoint in place of the one it
 * holds (new weights after an update: the thread, its compiled kernels and warm code stay). The
 * pool always sends a seed, so the policy's own seed stream is never used.
 */

import { loadCheckpoint } from '../../nn/checkpoint.js';
import { serveRequests, toRemoteError } from '../../util/thread-pool.js';
import { EmbeddedPolicy } from './policy.js';
import type {
  SamplerReply,
  SamplerRequest,
  SamplerWorkerData,
  SamplerWorkerInfo,
  SettledCompletion,
} from './pool.js';

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
  (state, request: SamplerRequest): Promise<SamplerReply> | SamplerReply => {
    if ('complete' in request)
      return Promise.all(
        request.complete.map((r) =>
          state.policy.complete(r).then(
            (completion): SettledCompletion => ({ completion }),
            (e: unknown): SettledCompletion => ({ error: toRemoteError(e) }),
          ),
        ),
      );
    const next = load(request.reload, state.options);
    // the old keys and values go back now rather than when the collector finds them
    state.policy.prefixCache?.clear();
    Object.assign(state, next);
    return { modelSha256: next.modelSha256 };
  },
  ({ modelSha256 }): SamplerWorkerInfo => ({ modelSha256 }),
);
