/**
 * A real `seal serve` in a real process on a loopback port, and a small client speaking its
 * protocol the way the reference's env client does (POST JSON envelopes, `{success, data}`).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import type { BfclData, BfclTask } from '../../src/envs/bfcl/data/tasks.js';
import { hermesText, structuredCall } from '../support/calls.js';
import { ROOT } from '../support/cli.js';

export interface Served {
  readonly url: string;
  readonly proc: ChildProcess;
  /** everything the server printed so far */
  output(): string;
  /** SIGTERM, then the exit code */
  stop(): Promise<number | null>;
}

/** The server's shapes every protocol and lifecycle test runs against: in one thread, and with worker threads. */
export const WORKER_COUNTS = [1, 2] as const;

/** `seal serve --workers N` on a free loopback port, once it listens. */
export async function startServe(args: readonly string[], workers = 1): Promise<Served> {
  const argv = [join(ROOT, 'bin', 'seal.js'), 'serve', '--port', '0', '--workers', String(workers), ...args];
  const proc = spawn('node', argv, { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  proc.stdout!.on('data', (d) => {
    out += String(d);
  });
  proc.stderr!.on('data', (d) => {
    out += String(d);
  });
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`seal serve did not start:\n${out}`)), 60_000);
    const check = () => {
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    };
    proc.stdout!.on('data', check);
    void exited.then((code) => reject(new Error(`seal serve exited with ${code}:\n${out}`)));
  });
  return {
    url,
    proc,
    output: () => out,
    stop: async () => {
      if (proc.exitCode === null) proc.kill('SIGTERM');
      return exited;
    },
  };
}

export interface Reply<T = unknown> {
  readonly status: number;
  readonly body: T;
}

export async function post<T = Record<string, unknown>>(
  url: string,
  route: string,
  body: unknown,
): Promise<Reply<T>> {
  const r = await fetch(`${url}${route}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await r.text();
  return { status: r.status, body: (text ? JSON.parse(text) : undefined) as T };
}

export async function get<T = Record<string, unknown>>(url: string, route: string): Promise<Reply<T>> {
  const r = await fetch(`${url}${route}`);
  const text = await r.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {}
  return { status: r.status, body: body as T };
}

export interface Message {
  readonly role: string;
  readonly content: string;
}

export interface StepData {
  readonly state: Message[];
  readonly reward: number;
  readonly is_terminated: boolean;
  readonly info: Record<string, unknown>;
}

/** `/create`, `/step` and friends for one instance; throws on anything but 200 success. */
export class Instance {
  constructor(
    readonly url: string,
    readonly id: string,
  ) {}

  private async call<T>(route: string, extra: Record<string, unknown>): Promise<T> {
    const r = await post<{ success: boolean; data: T }>(this.url, route, { instance_id: this.id, ...extra });
    if (r.status !== 200 || !r.body.success)
      throw new Error(`${route} answered ${r.status}: ${JSON.stringify(r.body)}`);
    return r.body.data;
  }

  create(taskId: string, params: Record<string, unknown> = {}): Promise<StepData> {
    return this.call('/create', { env_type: 'bfcl', task_id: taskId, params });
  }
  step(message: Record<string, unknown>): Promise<StepData> {
    return this.call('/step', { messages: { role: 'assistant', ...message } });
  }
  evaluate<T = Record<string, unknown>>(params: Record<string, unknown> = {}): Promise<T> {
    return this.call('/evaluate', { params });
  }
  release(): Promise<unknown> {
    return this.call('/release', {});
  }
}

/** Ground-truth calls as a model writes them in one format's assistant message. */
export function encodeCalls(
  calls: readonly string[],
  format: 'hermes' | 'python' | 'native',
  data: BfclData,
): { content: string | null; tool_calls?: unknown[] } {
  if (format === 'python') return { content: `[${calls.join(', ')}]` };
  const structured = calls.map((c) => structuredCall(c, data));
  if (format === 'native')
    return {
      content: null,
      tool_calls: structured.map((s, i) => ({ id: `call_${i}`, type: 'function', function: s })),
    };
  return { content: hermesText(structured) };
}

/** Plays a task's ground truth: each turn's calls in one step, then a text answer ends the turn. */
export async function playGroundTruth(
  inst: Instance,
  data: BfclData,
  taskId: string,
  format: 'hermes' | 'python' | 'native',
  params: Record<string, unknown> = {},
): Promise<{ created: StepData; steps: StepData[] }> {
  const task = data.byId.get(taskId)!;
  const created = await inst.create(taskId, { format, ...params });
  const steps: StepData[] = [];
  for (const gt of task.groundTruth) {
    if (gt.length > 0) steps.push(await inst.step(encodeCalls(gt, format, data)));
    steps.push(await inst.step({ content: 'Done.' }));
  }
  return { created, steps };
}

/** Tasks whose every turn needs calls: a text answer fails each turn with missing_tool_call. */
export function allCallTasks(data: BfclData): BfclTask[] {
  return data.tasks.filter((t) => t.category === 'base' && t.groundTruth.every((g) => g.length > 0));
}

/** Answers every turn of a created episode in text (so every turn fails). */
export async function answerInText(inst: Instance, task: BfclTask): Promise<void> {
  for (let t = 0; t < task.question.length; t++) await inst.step({ content: 'I will not.' });
}

/** Plays a task wrong from creation to the dense evaluation. */
export async function playWrong(
  url: string,
  id: string,
  task: BfclTask,
  params: Record<string, unknown> = {},
) {
  const inst = new Instance(url, id);
  const created = await inst.create(task.id, params);
  await answerInText(inst, task);
  const dense = await inst.evaluate();
  return { inst, created, dense };
}
