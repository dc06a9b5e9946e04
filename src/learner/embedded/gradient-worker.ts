/**
 * Entry of a gradient worker thread (started by parallel.ts): a model on the shared weights and a
 * gradient buffer of its own (and GRPO's frozen reference, when given); each request overwrites that
 * buffer with the gradient of its share.
 */
import { type Arr, Gpt, withWeightsPinned } from '../../policy/embedded/model.js';
import { serveRequests } from '../../util/thread-pool.js';
import { lossOf } from './losses.js';
import type { GradientReply, GradientRequest, GradientWorkerData, SharedView } from './parallel.js';

serveRequests(
  (data: GradientWorkerData) => {
    const open = (v: SharedView): Arr =>
      data.dtype === 'float64'
        ? new Float64Array(v.buffer, v.byteOffset, v.length)
        : new Float32Array(v.buffer, v.byteOffset, v.length);
    const model = new Gpt(data.config, open(data.params), data.dtype);
    // a model that copied the weights would silently train on stale ones
    if (model.params.buffer !== data.params.buffer)
      throw new Error('the model does not use the shared weights');
    const reference = data.reference ? new Gpt(data.config, open(data.reference), data.dtype) : null;
    return { model, reference, grads: open(data.grads) };
  },
  ({ model, reference, grads }, req: GradientRequest): GradientReply => {
    grads.fill(0);
    // the main thread changes the shared weights only between requests
    return withWeightsPinned([model, reference], () =>
      lossOf(req.loss).sums(model, reference, req.sequences, grads, req.denominator),
    );
  },
);
