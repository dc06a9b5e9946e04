/** `seal data pull`: fetch and check the pinned task data of a suite. */
import { existsSync, statSync } from 'node:fs';
import type { Command } from 'commander';
import { z } from 'zod';
import { DATA_DIR_ENV, resolveDataDir } from '../envs/bfcl/data/locate.js';
import { BASE_URL_ENV, pullBfcl } from '../envs/bfcl/data/pull.js';
import { pullTau2, resolveTau2Root, TAU2_BASE_URL_ENV, TAU2_DATA_ENV } from '../envs/tau2/data.js';
import { UsageError } from '../util/errors.js';
import type { PullReport } from '../util/pinned-files.js';
import { Settings } from '../util/settings.js';
import { addSettingOptions, parseUrlFlag } from './flags.js';

/** The flags of `seal data pull`, declared once (util/settings.ts). */
export const DATA_PULL_SCHEMA = z
  .object({
    dest: z
      .string()
      .min(1)
      .optional()
      .meta({
        description: `where to put the files (default: $${DATA_DIR_ENV} for bfcl, $${TAU2_DATA_ENV} for tau2, else the user cache folder)`,
        placeholder: 'dir',
      }),
    baseUrl: z
      .string()
      .min(1)
      .optional()
      .meta({
        description: `raw-file host (default: $${BASE_URL_ENV} for bfcl, $${TAU2_BASE_URL_ENV} for tau2, else GitHub)`,
        placeholder: 'url',
      }),
  })
  .strict();
export const DATA_PULL_SETTINGS = new Settings(DATA_PULL_SCHEMA, 'flag');

/** Per data set: where its files go by default, how they are pulled, the flag and variable that name a local copy. */
const DATA_SETS = {
  bfcl: {
    resolveDest: resolveDataDir,
    pull: pullBfcl,
    dataEnv: DATA_DIR_ENV,
    localFlag: '--data-dir',
  },
  tau2: {
    resolveDest: resolveTau2Root,
    pull: pullTau2,
    dataEnv: TAU2_DATA_ENV,
    localFlag: '--tau2-data',
  },
} as const satisfies Record<
  string,
  {
    resolveDest: (dest: string | undefined) => string;
    pull: (o: { dest: string; baseUrl?: string; log: (l: string) => void }) => Promise<PullReport>;
    dataEnv: string;
    /** the flag of the commands that read the data, for a folder of one's own */
    localFlag: string;
  }
>;
type DataSet = keyof typeof DATA_SETS;
const isDataSet = (s: string): s is DataSet => Object.hasOwn(DATA_SETS, s);

/** `seal data pull bfcl|tau2` */
export function registerData(program: Command): void {
  const data = program.command('data').description('Manage task data');
  const pull = data
    .command('pull')
    .argument('<suite>', 'which data set (bfcl, tau2)')
    .description(
      'Download the pinned data of a suite (BFCL multi-turn, memory and web search; or τ²-bench v0.2.0) and check it against the sha256 manifests',
    );
  addSettingOptions(pull, DATA_PULL_SETTINGS);
  pull.action(async (suite: string, flags: Record<string, unknown>) => {
    const opts = DATA_PULL_SETTINGS.ofFlags(flags);
    if (!isDataSet(suite))
      throw new UsageError(
        `unknown data set "${suite}"; the ones available are ${Object.keys(DATA_SETS).join(', ')}.`,
      );
    const set = DATA_SETS[suite];
    const dest = set.resolveDest(opts.dest);
    if (existsSync(dest) && !statSync(dest).isDirectory())
      throw new UsageError(
        `--dest ${dest} is a file; give a folder for the data (it is created if missing).`,
      );
    if (opts.baseUrl) parseUrlFlag('--base-url', opts.baseUrl, 'https://raw.githubusercontent.com');
    const report = await set.pull({
      dest,
      agentic: true,
      ...(opts.baseUrl ? { baseUrl: opts.baseUrl } : {}),
      log: (l) => console.error(l),
    });
    console.log(
      `${dest}: ${report.downloaded.length} downloaded, ${report.alreadyPresent.length} already present, ${report.failed.length} failed`,
    );
    if (report.failed.length > 0) {
      for (const f of report.failed) console.error(`  ${f.path}: ${f.reason}`);
      console.error('Files that did verify are kept; run the same command again to retry the rest.');
      if (report.failed.every((f) => f.reason.startsWith('cannot reach'))) {
        console.error(
          `No network route to the file host? Point ${set.localFlag} DIR or $${set.dataEnv} at a local copy of the data instead.`,
        );
      }
      process.exitCode = 1;
    }
  });
}
