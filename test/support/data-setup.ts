/**
 * Vitest global setup: the BFCL task files, got the way the product gets them. Beside a shared
 * folder (CI) nothing is needed. With `$SEAL_BFCL_DATA` set, that folder is the user's copy and is
 * used as it is. Otherwise the pinned files are pulled into the cache and checked against their
 * sha256 sums, once: files already there with the right sum are kept, so later runs need no
 * network. A failed pull stops the run saying what to do, instead of 20 test files failing to load.
 */
import { DATA_DIR_ENV, defaultCacheDir } from '../../src/envs/bfcl/data/locate.js';
import { pullBfcl } from '../../src/envs/bfcl/data/pull.js';
import { HAS_SHARED } from './golden.js';

export default async function setup(): Promise<void> {
  if (HAS_SHARED || process.env[DATA_DIR_ENV]) return;
  const dest = defaultCacheDir();
  const report = await pullBfcl({ dest, log: (line) => console.error(`test data: ${line}`) });
  if (report.failed.length > 0)
    throw new Error(
      `the tests need the BFCL task files and could not pull them into ${dest}:\n` +
        report.failed.map((f) => `  ${f.path}: ${f.reason}`).join('\n') +
        `\nRun \`seal data pull bfcl\` once with network access, or point $${DATA_DIR_ENV} at a copy of the data.`,
    );
}
