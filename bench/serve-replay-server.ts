/**
 * The baseline `bench/serve.ts` measures `seal serve` against: the same HTTP stack (Fastify with
 * its JSON body parser, keep-alive, loopback) answering the same routes with the answers `seal
 * serve` gave, recorded by the bench, byte for byte. What it costs is what the transport, the
 * framework and JSON cost alone; what `seal serve` costs beyond it is the environment's own work.
 *
 *   node --import tsx bench/serve-replay-server.ts ANSWERS.json
 *
 * ANSWERS.json: {task_id: {create, steps: [...], evaluate, release}}, each an answer body. Prints
 * `listening on http://HOST:PORT` once it listens, as `seal serve` does.
 */
import { readFileSync } from 'node:fs';
import Fastify from 'fastify';
import { LoopDelay } from '../src/server/loop-delay.js';

export interface RecordedEpisode {
  readonly create: string;
  readonly steps: readonly string[];
  readonly evaluate: string;
  readonly release: string;
}

const answers = new Map(
  Object.entries(JSON.parse(readFileSync(process.argv[2]!, 'utf8')) as Record<string, RecordedEpisode>),
);
const instances = new Map<string, { episode: RecordedEpisode; step: number }>();
let steps = 0;
const loopDelay = new LoopDelay();

interface Body {
  readonly instance_id: string;
  readonly task_id?: string;
}

const app = Fastify({ bodyLimit: 1 << 20, logger: false });
app.post<{ Body: Body }>('/create', (req, reply) => {
  const episode = answers.get(req.body.task_id ?? '');
  if (!episode) return reply.status(400).send({ detail: `no recorded episode of ${req.body.task_id}` });
  instances.set(req.body.instance_id, { episode, step: 0 });
  return reply.type('application/json').send(episode.create);
});
app.post<{ Body: Body }>('/step', (req, reply) => {
  const inst = instances.get(req.body.instance_id);
  if (!inst) return reply.status(400).send({ detail: 'unknown instance' });
  steps++;
  return reply.type('application/json').send(inst.episode.steps[inst.step++] ?? '{}');
});
app.post<{ Body: Body }>('/evaluate', (req, reply) => {
  const inst = instances.get(req.body.instance_id);
  if (!inst) return reply.status(400).send({ detail: 'unknown instance' });
  return reply.type('application/json').send(inst.episode.evaluate);
});
app.post<{ Body: Body }>('/release', (req, reply) => {
  const inst = instances.get(req.body.instance_id);
  instances.delete(req.body.instance_id);
  return reply.type('application/json').send(inst?.episode.release ?? '{"success":false}');
});
app.get<{ Querystring: { gc?: string; reset_delay?: string } }>('/stats', (req) => {
  const event_loop_delay_ms = loopDelay.read(req.query.reset_delay !== undefined);
  const gc = (globalThis as { gc?: () => void }).gc;
  if (req.query.gc !== undefined && gc) gc();
  const cpu = process.cpuUsage();
  const m = process.memoryUsage();
  return {
    steps,
    cpu_s: (cpu.user + cpu.system) / 1e6,
    memory_mb: { rss: m.rss / 2 ** 20, heap_used: m.heapUsed / 2 ** 20 },
    event_loop_delay_ms,
  };
});
const address = await app.listen({ port: 0, host: '127.0.0.1' });
console.log(`listening on ${address}`);
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
