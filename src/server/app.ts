/**
 * The HTTP app of `seal serve`: the SEAL / AgentEvolver env-service routes, the routes of the
 * SEAL state the server owns (profile, interface, weights, round), and the error mapping:
 *
 *   422 {detail: [{loc, msg}]}  a body that breaks its schema, naming the field
 *   400 {detail}                missing or unknown instance, task, split or env type; bad JSON
 *   409 {detail}                a step on an episode that has finished
 *   401 {detail}                no or a wrong bearer token, when the server has one
 *   413 {detail}                a body over the size limit
 *   503 {detail}                `/create` with `maxInstances` instances live (Retry-After set)
 *   500 {detail}                an exception inside one instance: that request only
 *
 * The instances live in this thread, or with `workers` > 1 in worker threads (worker-pool.ts);
 * the HTTP server, the validation and the SEAL state stay here either way.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { type BfclData, CATEGORIES } from '../envs/bfcl/data/tasks.js';
import { badRequest, HttpError } from './errors.js';
import { type Instances, type JsonAnswer, LocalInstances } from './instances.js';
import { LoopDelay } from './loop-delay.js';
import {
  AssistantMessage,
  CreateParams,
  Envelope,
  EvaluateParams,
  instanceOptions,
  ProfileParams,
  parseAt,
  ValidationError,
  WeightIds,
} from './protocol.js';
import { SealState, type SealStateOptions } from './seal-state.js';
import { WorkerInstances } from './worker-pool.js';

export interface ServeOptions {
  readonly data: BfclData;
  /** idle instances are dropped after this long */
  readonly ttlMs?: number;
  /** request bodies over this many bytes get 413 */
  readonly bodyLimit?: number;
  readonly seal?: SealStateOptions;
  /**
   * worker threads holding the instances (1, the default: all in this thread). The workers load
   * the suite themselves, from `data.suite` and `data.dir`.
   */
  readonly workers?: number;
  /** live instances at most; `/create` of one more answers 503 (default DEFAULT_MAX_INSTANCES) */
  readonly maxInstances?: number;
  /** when set, every route but `/healthz` needs `Authorization: Bearer <token>` */
  readonly token?: string;
}

export const DEFAULT_TTL_MS = 3_600_000;
export const DEFAULT_BODY_LIMIT = 1 << 20;
/** about 22 KB each: 20,000 instances hold some 450 MB, a bound on a client that never releases */
export const DEFAULT_MAX_INSTANCES = 20_000;

export interface ServeApp {
  readonly app: FastifyInstance;
  /** started by the app's `ready()` / `listen()`, closed by its `close()` */
  readonly instances: Instances;
  readonly seal: SealState;
}

/** The env types `/create` accepts: the protocol's name, and the suite's own. */
function envTypes(data: BfclData): string[] {
  return [...new Set(['bfcl', data.suite])];
}

export function buildServer(options: ServeOptions): ServeApp {
  const { data } = options;
  const ttlMs = options.ttlMs ?? DEFAULT_TTL_MS;
  const maxInstances = options.maxInstances ?? DEFAULT_MAX_INSTANCES;
  const seal = new SealState(options.seal);
  const workers = options.workers ?? 1;
  const instances: Instances =
    workers > 1 ? new WorkerInstances({ workers, data, seal, ttlMs }) : new LocalInstances(data, seal, ttlMs);
  const counters = { steps: 0, evaluations: 0, errors: 0 };
  const started = Date.now();
  const loopDelay = new LoopDelay(); // `/stats?reset_delay=1` starts a new window
  const app = Fastify({
    bodyLimit: options.bodyLimit ?? DEFAULT_BODY_LIMIT,
    logger: false,
    // workers load the suite in `onReady`, which on a busy machine can take longer than Fastify's 10 s
    ...(workers > 1 ? { pluginTimeout: 0 } : {}),
  });
  app.addHook('onReady', () => instances.start());
  app.addHook('onClose', () => {
    loopDelay.stop();
    return instances.close();
  });

  if (options.token !== undefined) {
    const expected = createHash('sha256').update(options.token).digest();
    app.addHook('onRequest', (req, reply, done) => {
      if (req.url === '/healthz') return done();
      const m = /^Bearer (.+)$/.exec(req.headers.authorization ?? '');
      // compared as hashes of equal length, in constant time
      if (m && timingSafeEqual(createHash('sha256').update(m[1]!).digest(), expected)) return done();
      reply.status(401).header('www-authenticate', 'Bearer').send({
        detail: 'this server needs Authorization: Bearer <token> (the token seal serve was started with)',
      });
    });
  }

  app.setErrorHandler((err: Error & { statusCode?: number }, req, reply) => {
    if (err instanceof ValidationError) return reply.status(422).send({ detail: err.detail });
    if (err instanceof HttpError) return reply.status(err.status).send({ detail: err.message });
    const status = err.statusCode;
    if (typeof status === 'number' && status >= 400 && status < 500)
      return reply.status(status).send({ detail: err.message });
    counters.errors++;
    // The stack goes to the operator's log, never to the client.
    console.error(`seal serve: ${req.method} ${req.url} failed:`, err);
    return reply.status(500).send({ detail: `internal error: ${err.message}` });
  });
  app.setNotFoundHandler((req, reply) =>
    reply.status(404).send({ detail: `no route ${req.method} ${req.url}` }),
  );

  const envelope = (req: FastifyRequest) => parseAt(Envelope, req.body, ['body']);
  const ok = (data: unknown) => ({ success: true, data });
  /** `{success: true, data}` around `data` already in JSON, as `ok` would have it */
  const okJson = (reply: FastifyReply, data: string) =>
    reply.type('application/json').send(`{"success":true,"data":${data}}`);
  const answer = (reply: FastifyReply, data: JsonAnswer) =>
    typeof data === 'string' ? okJson(reply, data) : data.then((d) => okJson(reply, d));

  app.get('/healthz', (_req, reply) => reply.type('text/plain').send('OK'));

  app.post('/get_env_profile', (req) => {
    const body = envelope(req);
    const params = parseAt(ProfileParams, body.params, ['body', 'params']);
    checkEnvType(body.env_type);
    const split = params.split ?? 'train';
    let ids: readonly string[];
    if (split === 'train' || split === 'test') ids = data.split[split];
    else if (split === 'all') ids = data.tasks.map((t) => t.id);
    else throw badRequest(`unknown split '${split}': use train, test or all`);
    if (params.category !== undefined) {
      const cats = new Set(Array.isArray(params.category) ? params.category : [params.category]);
      for (const c of cats)
        if (!(CATEGORIES as readonly string[]).includes(c))
          throw badRequest(`unknown category '${c}': use ${CATEGORIES.join(', ')}`);
      ids = ids.filter((id) => cats.has(data.byId.get(id)!.category));
    }
    return ok(ids);
  });

  function checkEnvType(envType: string | null | undefined): void {
    const known = envTypes(data);
    if (envType && !known.includes(envType))
      throw badRequest(`unknown env_type '${envType}': this server serves ${known.join(' / ')}`);
  }

  app.post('/create', (req, reply) => {
    const body = envelope(req);
    const params = parseAt(CreateParams, body.params, ['body', 'params']);
    checkEnvType(body.env_type);
    if (!body.task_id) throw badRequest('task_id is required');
    const task = data.byId.get(body.task_id) ?? byLine(body.task_id);
    if (!task)
      throw badRequest(`task_id '${body.task_id}' is not a task of this server's suite (${data.suite})`);
    const id = body.instance_id || `exp_${Date.now()}_${Math.random().toString(16).slice(2, 10)}`;
    // a new id past the cap (expired ones are swept first); replacing a live id adds nothing
    const isNew = instances.registry.peek(id) === undefined;
    if (isNew && instances.registry.size >= maxInstances) instances.registry.sweep();
    if (isNew && instances.registry.size >= maxInstances) {
      reply.header('retry-after', '5');
      throw new HttpError(
        503,
        `${instances.registry.size} instances are live, the most this server holds (--max-instances ${maxInstances}); release finished ones with POST /release, or start the server with a higher --max-instances`,
      );
    }
    return answer(reply, instances.create(id, task, instanceOptions(params)));
  });

  /** The reference also addresses tasks by their line number in its data file. */
  function byLine(taskId: string) {
    return /^\d+$/.test(taskId) ? data.tasks[Number(taskId)] : undefined;
  }

  app.post('/step', (req, reply) => {
    const body = envelope(req);
    const instance = instances.get(body.instance_id);
    const message = parseAt(AssistantMessage, body.messages, ['body', 'messages']);
    counters.steps++;
    return answer(reply, instance.step(message));
  });

  app.post('/evaluate', (req, reply) => {
    const body = envelope(req);
    const params = parseAt(EvaluateParams, body.params, ['body', 'params']);
    const instance = instances.get(body.instance_id);
    counters.evaluations++;
    // The reference's default is the dense report; its trainers ask for `sparse: true` for the reward.
    return answer(reply, instance.evaluate(params.sparse === true));
  });

  app.post('/get_info', (req, reply) => {
    const body = envelope(req);
    return answer(reply, instances.get(body.instance_id).toolsInfo());
  });

  app.post('/release', (req) => {
    const body = envelope(req);
    if (!body.instance_id) throw badRequest('instance_id is required');
    // Unknown ids answer success: false with 200, as the reference does: its client retries
    // failed requests with back-off, which would stall a trainer releasing an expired instance.
    return { success: instances.release(body.instance_id), data: null };
  });

  // The SEAL state: what the reference's trainer computes internally, served to any trainer.
  app.get('/profile', () => ok(seal.profileView()));
  app.get('/interface', () => ok(seal.interface));
  app.get('/weights', (req: FastifyRequest<{ Querystring: { instance_id?: string } }>) => {
    const ids = req.query.instance_id?.split(',').filter(Boolean);
    return ok(seal.weightsView(ids));
  });
  app.post('/weights', (req) => {
    const body = envelope(req);
    const ids = parseAt(WeightIds, body.params.instance_ids, ['body', 'params', 'instance_ids']);
    return ok(seal.weightsView(ids));
  });
  app.post('/round', (req) => {
    // no body at all is fine; a body is an envelope like every route's (a bad `params` is a 422)
    if (req.body !== undefined && req.body !== null) envelope(req);
    return ok(seal.endRound());
  });

  app.get(
    '/stats',
    (req: FastifyRequest<{ Querystring: { gc?: string; reset_delay?: string } }>, reply: FastifyReply) => {
      const gc = (globalThis as { gc?: () => void }).gc;
      const event_loop_delay_ms = loopDelay.read(req.query.reset_delay !== undefined);
      if (req.query.gc !== undefined && gc) gc();
      const m = process.memoryUsage();
      const cpu = process.cpuUsage();
      return reply.send({
        uptime_s: (Date.now() - started) / 1000,
        suite: data.suite,
        tasks: data.tasks.length,
        ...instances.stats(),
        ...counters,
        round: seal.interface.round,
        cpu_s: (cpu.user + cpu.system) / 1e6,
        memory_mb: {
          rss: m.rss / 2 ** 20,
          heap_used: m.heapUsed / 2 ** 20,
          external: m.external / 2 ** 20,
        },
        event_loop_delay_ms,
      });
    },
  );

  return { app, instances, seal };
}
