/** `seal serve`: the environment service distributed trainers train against. */
import { type Command, Option } from 'commander';
import { DATA_DIR_ENV } from '../envs/bfcl/data/locate.js';
import { SUITES, type SuiteName } from '../envs/bfcl/data/tasks.js';
import { loadSuite } from '../envs/suites.js';
import type { ComponentMode, InterfaceComponent } from '../seal/interface.js';
import { buildServer, DEFAULT_BODY_LIMIT, DEFAULT_TTL_MS } from '../server/app.js';
import { defaultWorkers, MAX_DEFAULT_WORKERS } from '../server/worker-pool.js';
import { UsageError } from '../util/errors.js';

interface ServeFlags {
  port: string;
  host: string;
  suite: SuiteName;
  dataDir?: string;
  ttl: string;
  bodyLimit: string;
  roundEvery: string;
  workers: string;
  dynamicWeights?: boolean;
  schemaCues: ComponentMode;
  errorFeedback: ComponentMode;
  guidelines: ComponentMode;
}

function number(flag: string, text: string, check: (n: number) => boolean, what: string): number {
  const n = Number(text);
  if (text.trim() === '' || !Number.isFinite(n) || !check(n))
    throw new UsageError(`${flag} must be ${what}, got '${text}'`);
  return n;
}

const modeOption = (flag: string, what: string) =>
  new Option(`${flag} <mode>`, `${what}: auto (evolved), on, or off`)
    .choices(['auto', 'on', 'off'])
    .default('auto');

export function registerServe(program: Command): void {
  program
    .command('serve')
    .description(
      'Serve the environment over HTTP with the SEAL / AgentEvolver env-service protocol, owning the failure profile and the interface',
    )
    .option('--port <n>', 'TCP port (0: any free port)', '8080')
    .option('--host <addr>', 'address to listen on', '127.0.0.1')
    .addOption(
      new Option('--suite <name>', 'task suite: bfcl, or the built-in synthetic mini suite')
        .choices([...SUITES])
        .default('bfcl'),
    )
    .addOption(
      new Option('--data-dir <dir>', `BFCL data directory (default: $${DATA_DIR_ENV}, else the pull cache)`),
    )
    .option('--ttl <seconds>', 'drop instances idle for longer than this', String(DEFAULT_TTL_MS / 1000))
    .option('--body-limit <bytes>', 'largest request body accepted (larger: 413)', String(DEFAULT_BODY_LIMIT))
    .option(
      '--round-every <n>',
      'evolve the interface after every n evaluated training rollouts (0: only on POST /round)',
      '0',
    )
    .option(
      '--workers <n>',
      'worker threads holding the instances; the HTTP server and the SEAL state stay in the main thread ' +
        '(1: everything in one thread). Default: one per core but the one the main thread keeps busy, ' +
        `at most ${MAX_DEFAULT_WORKERS} (so 1 on two cores, where a worker would only add message passing)`,
      String(defaultWorkers()),
    )
    .option('--dynamic-weights', 'move the label utilities rho by EMA toward the profile at every round')
    .addOption(modeOption('--schema-cues <mode>', 'schema cues component'))
    .addOption(modeOption('--error-feedback <mode>', 'error feedback component'))
    .addOption(modeOption('--guidelines <mode>', 'capability guidelines component'))
    .action(async (flags: ServeFlags) => {
      const port = number(
        '--port',
        flags.port,
        (n) => Number.isInteger(n) && n >= 0 && n < 65536,
        '0..65535',
      );
      const ttl = number('--ttl', flags.ttl, (n) => n > 0, 'a positive number of seconds');
      const bodyLimit = number(
        '--body-limit',
        flags.bodyLimit,
        (n) => Number.isInteger(n) && n > 0,
        'a byte count',
      );
      const roundEvery = number(
        '--round-every',
        flags.roundEvery,
        (n) => Number.isInteger(n) && n >= 0,
        'a non-negative integer',
      );
      const workers = number(
        '--workers',
        flags.workers,
        (n) => Number.isInteger(n) && n >= 1 && n <= 256,
        'an integer from 1 to 256',
      );
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
          `${workers > 1 ? `, ${workers} worker threads` : ''})`,
      );
      // Finish the requests in flight, then exit; a second signal exits at once.
      let stopping = false;
      const stop = (signal: string) => {
        if (stopping) process.exit(1);
        stopping = true;
        app.close().then(
          () => {
            console.log(`seal serve: stopped (${signal})`);
            process.exit(0);
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
