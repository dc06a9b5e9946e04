/**
 * A worker thread of `seal serve --workers N` (see worker-pool.ts): it loads the suite, holds the
 * sessions the main thread assigns it in a `LocalInstances` (the in-process server's own code),
 * and answers each request in the order it arrives, with the rollouts its sessions evaluated for
 * the main thread's profile. The TTL is the main thread's business: here an instance lives until
 * the main thread releases it.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { loadSuite } from '../envs/suites.js';
import { LocalInstances } from './instances.js';
import { SealMirror } from './seal-state.js';
import {
  type FromWorker,
  type ServeWorkerData,
  type ToWorker,
  type WorkerError,
  type WorkerRequest,
  workerError,
} from './worker-pool.js';

const port = parentPort;
if (!port) throw new Error('the serve worker runs in a worker thread started by seal serve');
const send = (m: FromWorker) => port.postMessage(m);

try {
  const init = workerData as ServeWorkerData;
  const data = loadSuite(init.suite, init.dataDir);
  const seal = new SealMirror(init.seal);
  const instances = new LocalInstances(data, seal, Number.POSITIVE_INFINITY);

  const answer = (m: WorkerRequest): string => {
    if (m.op === 'create') {
      const task = data.byId.get(m.taskId);
      if (!task) throw new Error(`task ${m.taskId} is not in this worker's ${data.suite} data`);
      return instances.create(m.id, task, m.options);
    }
    const inst = instances.get(m.id);
    if (m.op === 'step') return inst.step(m.message);
    if (m.op === 'evaluate') return inst.evaluate(m.sparse);
    return inst.toolsInfo();
  };

  port.on('message', (m: ToWorker) => {
    if (m.op === 'seal') seal.update(m.view);
    else if (m.op === 'release') instances.release(m.id);
    else {
      let json: string | undefined;
      let error: WorkerError | undefined;
      try {
        json = answer(m);
      } catch (e) {
        error = workerError(e);
      }
      const observed = seal.drain();
      send({
        kind: 'answer',
        seq: m.seq,
        ...(error ? { error } : { json: json! }),
        ...(observed ? { observed } : {}),
      });
    }
  });
  send({ kind: 'ready' });
} catch (e) {
  send({ kind: 'failed', error: workerError(e) });
}
