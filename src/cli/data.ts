/** `seal data pull`: fetch and check the pinned task data. */
import { existsSync, statSync } from 'node:fs';
import type { Command } from 'commander';
import { z } from 'zod';
import { DATA_DIR_ENV, defaultCacheDir, resolveDataDir } from '../envs/bfcl/data/locate.js';
import { BASE_URL_ENV, pullBfcl } from '../envs/bfcl/data/pull.js';
import { UsageError } from '../util/errors.js';
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
        description: `where to put the files (default: $${DATA_DIR_ENV}, else ${defaultCacheDir()})`,
        placeholder: 'dir',
      }),
    baseUrl: z
      .string()
      .min(1)
      .optional()
      .meta({ description: `raw-file host (default: $${BASE_URL_ENV} or GitHub)`, placeholder: 'url' }),
  })
  .strict();
export const DATA_PULL_SETTINGS = new Settings(DATA_PULL_SCHEMA, 'flag');

/** `seal data pull bfcl` */
export function registerData(program: Command): void {
  const data = program.command('data').description('Manage task data');
  const pull = data
    .command('pull')
    .argument('<suite>', 'which data set (bfcl)')
    .description(
      'Download the pinned BFCL multi-turn, memory and web search files and check them against the sha256 manifests',
    );
  addSettingOptions(pull, DATA_PULL_SETTINGS);
  pull.action(async (suite: string, flags: Record<string, unknown>) => {
    const opts = DATA_PULL_SETTINGS.ofFlags(flags);
    if (suite !== 'bfcl') throw new UsageError(`unknown data set "${suite}"; the one available is "bfcl".`);
    const dest = resolveDataDir(opts.dest);
    if (existsSync(dest) && !statSync(dest).isDirectory())
      throw new UsageError(
        `--dest ${dest} is a file; give a folder for the data (it is created if missing).`,
      );
    if (opts.baseUrl) parseUrlFlag('--base-url', opts.baseUrl, 'https://raw.githubusercontent.com');
    const report = await pullBfcl({
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
          `No network route to the file host? Point --data-dir DIR or $${DATA_DIR_ENV} at a local copy of the data instead.`,
        );
      }
      process.exitCode = 1;
    }
  });
}
