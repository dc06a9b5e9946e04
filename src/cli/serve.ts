/** `seal serve`: the environment service distributed trainers train against. */
import type { Command } from 'commander';
import { z } from 'zod';
import { DATA_DIR_ENV } from '../envs/bfcl/data/locate.js';
import { SUITES } from '../envs/bfcl/data/tasks.js';
import { loadSuite } from '../envs/suites.js';
import type { ComponentMode, InterfaceComponent } from '../seal/interface.js';
import { buildServer, DEFAULT_BODY_LIMIT, DEFAULT_MAX_INSTANCES, DEFAULT_TTL_MS } from '../server/app.js';
import { defaultWorkers, MAX_DEFAULT_WORKERS } from '../server/worker-pool.js';
import { UsageError } from '../util/errors.js';
import { dataDirSetting } from '../util/fragments.js';
import { Settings } from '../util/settings.js';
import { addSettingOptions } from './flags.js';

/** the environment variable a token can come from (a flag shows in `ps`, the environment does not) */
export const TOKEN_ENV = 'SEAL_SERVE_TOKEN';

const int = (min: number, max: number) => z.number().int().min(min).max(max);
const mode = (what: string) =>
  z.enum(['auto', 'on', 'off']).default('auto').describe(`${what}: auto (evolved), on, or off`);

/** The settings of `seal serve`, declared once: flags, validation, defaults and help (util/settings.ts). */
export const SERVE_SCHEMA = z
  .object({
    port: int(0, 65535).default(8080).describe('TCP port (0: any free port)'),
    host: z.string().min(1).default('127.0.0.1').meta({
      description: 'address to listen on (anything but loopback: set a --token)',
      placeholder: 'addr',
    }),
    suite: z.enum(SUITES).default('bfcl').describe('task suite: bfcl, or the built-in synthetic mini suite'),
    dataDir: dataDirSetting(DATA_DIR_ENV),
    ttl: z
      .number()
      .min(0.001)
      .max(2 ** 31 / 1000)
      .default(DEFAULT_TTL_MS / 1000)
      .meta({ description: 'drop instances idle for longer than this many seconds', placeholder: 'seconds' }),
    maxInstances: int(1, 10_000_000)
      .default(DEFAULT_MAX_INSTANCES)
      .describe(
        'live instances at most (about 22 KB each); POST /create of one more answers 503 until some are released or expire',
      ),
    bodyLimit: int(1, 2 ** 30)
      .default(DEFAULT_BODY_LIMIT)
      .meta({ description: 'largest request body accepted (larger: 413)', placeholder: 'bytes' }),
    roundEvery: int(0, 1_000_000_000)
      .default(0)
      .describe('evolve the interface after every n evaluated training rollouts (0: only on POST /round)'),
    workers: int(1, 256)
      .default(defaultWorkers())
      .meta({
        description:
          'worker threads holding the instances; the HTTP server and the SEAL state stay in the main thread ' +
          '(1: everything in one thread)',
        defaultText:
          `one per core but the one the main thread keeps busy, at most ${MAX_DEFAULT_WORKERS}: ` +
          '1 on two cores, where a worker would only add message passing',
      }),
    token: z
      .string()
      .min(1)
      .optional()
      .meta({
        description: `require Authorization: Bearer <token> on every route but /healthz (default: $${TOKEN_ENV}, else none)`,
        placeholder: 'token',
      }),
    dynamicWeights: z
      .literal(true)
      .optional()
      .describe('move the label utilities rho by EMA toward the profile at every round'),
    schemaCues: mode('schema cues component'),
    errorFeedback: mode('error feedback component'),
    guidelines: mode('capability guidelines component'),
  })
  .strict();

export const SERVE_SETTINGS = new Settings(SERVE_SCHEMA, 'flag');

export function registerServe(program: Command): void {
  const cmd = program
    .command('serve')
    .description(
      'Serve the environment over HTTP with the SEAL / AgentEvolver env-service protocol, owning the failure profile and the interface',
    );
  addSettingOptions(cmd, SERVE_SETTINGS);
  cmd.action(async (opts: Record<string, unknown>) => {
    const envToken = process.env[TOKEN_ENV];
    const flags = SERVE_SETTINGS.resolve([
      ...(envToken ? [{ source: TOKEN_ENV, values: { token: envToken } }] : []),
      { source: 'flags', values: SERVE_SETTINGS.fromFlags(opts), flags: true },
    ]).config;
    const { port, ttl, bodyLimit, roundEvery, workers, maxInstances } = flags;
    const data = loadSuite(flags.suite, flags.dataDir);
    const components: Record<InterfaceComponent, ComponentMode> = {
      schemaCues: flags.schemaCues,
      errorFeedback: flags.errorFeedback,
      guidelines: flags.guidelines,
    };
    const { app } = buildServer({
      data,
      ttlMs: ttl * 1000,
      bodyLimit,
      seal: { interface: { components }, roundEvery, dynamicWeights: flags.dynamicWeights === true },
      workers,
      maxInstances,
      ...(flags.token !== undefined ? { token: flags.token } : {}),
    });
    let address: string;
    try {
      address = await app.listen({ port, host: flags.host });
    } catch (e) {
      const code = (e as { code?: string }).code;
      if (code === 'EADDRINUSE') throw new UsageError(`port ${port} on ${flags.host} is already in use`);
      if (code === 'EADDRNOTAVAIL') throw new UsageError(`cannot listen on ${flags.host}: no such address`);
      throw e;
    }
    console.log(
      `seal serve: listening on ${address} (suite ${data.suite}, ${data.tasks.length} tasks, ttl ${ttl}s` +
        `${workers > 1 ? `, ${workers} worker threads` : ''}${flags.token !== undefined ? ', bearer token required' : ''})`,
    );
    // Finish the requests in flight, then exit; a second signal exits at once.
    let stopping = false;
    const stop = (signal: string) => {
      if (stopping) process.exit(1);
      stopping = true;
      app.close().then(
        () => {
          console.log(`seal serve: stopped (${signal})`);
          // not process.exit(): it would cut off the tail of a large answer still being written;
          // the process ends once the sockets have drained, or after a grace period
          process.exitCode = 0;
          setTimeout(() => process.exit(0), 10_000).unref();
        },
        (e: unknown) => {
          console.error(`seal serve: error while stopping: ${e instanceof Error ? e.message : String(e)}`);
          process.exit(1);
        },
      );
    };
    process.once('SIGTERM', () => stop('SIGTERM'));
    process.once('SIGINT', () => stop('SIGINT'));
  });
}
