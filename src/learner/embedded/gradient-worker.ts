/**
 * Entry of a gradient worker thread (started by parallel.ts): a model on the shared weights and a
 * gradient buffer of its own; each request overwrites that buffer with the gradient of its share.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { type Arr, Gpt } from '../../policy/embedded/model.js';
import type { GradientReply, GradientRequest, GradientWorkerData, SharedView } from './parallel.js';
import { crossEntropySumAndGrad } from './supervised.js';

const port = parentPort;
if (!port) throw new Error('gradient-worker.ts runs as a worker thread of GradientPool');
const data = workerData as GradientWorkerData;
const open = (v: SharedView): Arr =>
  data.dtype === 'float64'
    ? new Float64Array(v.buffer, v.byteOffset, v.length)
    : new Float32Array(v.buffer, v.byteOffset, v.length);

const reply = (r: GradientReply) => port.postMessage(r);
const failure = (e: unknown): GradientReply =>
  e instanceof Error
    ? { ok: false, message: e.message, ...(e.stack ? { stack: e.stack } : {}) }
    : { ok: false, message: String(e) };

let model: Gpt | undefined;
let grads: Arr | undefined;
try {
  model = new Gpt(data.config, open(data.params), data.dtype);
  // a model that copied the weights would silently train on stale ones
  if (model.params.buffer !== data.params.buffer)
    throw new Error('the model does not use the shared weights');
  grads = open(data.grads);
  reply({ ok: true, lossSum: 0, tokens: 0 });
} catch (e) {
  reply(failure(e));
}

port.on('message', (req: GradientRequest) => {
  try {
    if (!model || !grads) throw new Error('the worker has no model');
    if (req.kind !== 'supervised') throw new Error(`unknown request kind ${String(req.kind)}`);
    grads.fill(0);
    const r = crossEntropySumAndGrad(model, req.sequences, grads, req.denominator);
    reply({ ok: true, lossSum: r.lossSum, tokens: r.tokens });
  } catch (e) {
    reply(failure(e));
  }
});
