/**
 * HTTP requests answered synchronously. The BFCL executor runs a tool call synchronously (as the
 * reference's `eval` does), and the agentic tools (embeddings for memory_vector, the search
 * provider and web pages for web search) need the network: the request runs on a worker thread
 * while the calling thread waits on a shared flag, then takes the answer off the message port
 * (`receiveMessageOnPort`).
 */
import { MessageChannel, type MessagePort, receiveMessageOnPort, Worker } from 'node:worker_threads';

export interface HttpRequest {
  readonly url: string;
  readonly method?: 'GET' | 'POST';
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string;
  readonly timeoutMs?: number;
}

export interface HttpResponse {
  readonly status: number;
  readonly statusText: string;
  /** after redirects */
  readonly url: string;
  readonly body: string;
}

const WORKER = `
const { workerData } = require('node:worker_threads');
const { port, flag } = workerData;
const done = (msg) => { port.postMessage(msg); Atomics.store(flag, 0, 1); Atomics.notify(flag, 0); };
port.on('message', async (r) => {
  try {
    const res = await fetch(r.url, {
      method: r.method || 'GET',
      headers: r.headers || {},
      body: r.body,
      redirect: 'follow',
      signal: AbortSignal.timeout(r.timeoutMs || 20000),
    });
    const body = await res.text();
    done({ ok: { status: res.status, statusText: res.statusText, url: res.url || r.url, body } });
  } catch (e) {
    const cause = e && e.cause && e.cause.message ? ' (' + e.cause.message + ')' : '';
    done({ error: String(e && e.message ? e.message : e) + cause });
  }
});
`;

/** One worker that performs requests one at a time for the thread that owns it. */
export class SyncHttp {
  private readonly worker: Worker;
  private readonly port: MessagePort;
  private readonly flag = new Int32Array(new SharedArrayBuffer(4));

  constructor() {
    const { port1, port2 } = new MessageChannel();
    this.port = port1;
    this.worker = new Worker(WORKER, {
      eval: true,
      workerData: { port: port2, flag: this.flag },
      transferList: [port2],
    });
    this.worker.unref();
    this.port.unref();
  }

  /** The response (any status), or throws with the network error's text. */
  request(r: HttpRequest): HttpResponse {
    Atomics.store(this.flag, 0, 0);
    this.port.postMessage(r);
    const waited = Atomics.wait(this.flag, 0, 0, (r.timeoutMs ?? 20_000) + 10_000);
    const reply = receiveMessageOnPort(this.port)?.message as
      | { ok?: HttpResponse; error?: string }
      | undefined;
    if (waited === 'timed-out' || !reply) throw new Error(`no answer from ${r.url} in time`);
    if (reply.error !== undefined || !reply.ok) throw new Error(reply.error ?? 'no response');
    return reply.ok;
  }

  /** Sleep without giving up the thread (the reference's `time.sleep` between retries). */
  static sleep(ms: number): void {
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
  }

  close(): Promise<number> {
    this.port.close();
    return this.worker.terminate();
  }
}
