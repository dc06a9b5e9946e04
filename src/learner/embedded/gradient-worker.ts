/**
 * Entry of a gradient worker thread (started by parallel.ts): a model on the shared weights and a
 * shared gradient buffer of its own (and GRPO's frozen reference, when given); each request
 * overwrites that buffer with the gradient of its share.
 */
import { type Arr, Gpt, withWeightsPinned } from '../../nn/model.js';
import { serveRequests } from '../../util/thread-pool.js';
import { lossOf } from './losses.js';
import type { GradientReply, GradientRequest, GradientWorkerData, SharedView } from './parallel.js';

serveRequests(
  (data: GradientWorkerData) => {
    const open = (v: SharedView): Arr =>
      data.dtype === 'float64'
        ? new Float64Array(v.buffer, v.byteOffset, v.length)
        : new Float32Array(v.buffer, v.byteOffset, v.length);
    const model = new Gpt(data.config, open(data.params), data.dtype, data.kernels);
    // a model that copied the weights would silently train on stale ones
    if (model.params.buffer !== data.params.buffer)
      throw new Error('the model does not use the shared weights');
    const reference = data.reference
      ? new Gpt(data.config, open(data.reference), data.dtype, data.kernels)
      : null;
    // the gradient is summed in memory of this thread's own, then handed over once: kernels that
    // cannot write shared memory (native-ops.ts) would copy each weight's gradient in and out
    // for every sequence
    return { model, reference, shared: open(data.grads), grads: model.zerosLike() };
  },
  ({ model, reference, shared, grads }, req: GradientRequest): GradientReply => {
    grads.fill(0);
    // the main thread changes the shared weights only between requests
    const sums = withWeightsPinned([model, reference], () =>
      lossOf(req.loss).sums(model, reference, req.sequences, grads, req.denominator),
    );
    shared.set(grads);
    return sums;
  },
);
