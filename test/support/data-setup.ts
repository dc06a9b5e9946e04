/**
 * Where the tests' BFCL task files come from, decided once per test run (vitest.config.ts calls
 * this before any test file is collected, so that the files needing the data can be skipped as a
 * whole). Beside a shared folder (CI) nothing is needed. With `$SEAL_BFCL_DATA` set, that folder
 * is the user's copy and is used as it is. Otherwise the pinned files are pulled into the cache and
 * checked against their sha256 sums, once: files already there with the right sum are kept, so
 * later runs need no network.
 *
 * When the files cannot be had, a clone without network still runs every test that needs no BFCL
 * data: the test files that do need it carry `// @module-tag bfcl-data`, and those files are left
 * out of the run (not merely tagged skipped: many read the data while they are collected). Under
 * CI the same situation is an error, since a CI run that skipped the port's tests would say
 * nothing about it.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DATA_DIR_ENV, defaultCacheDir } from '../../src/envs/bfcl/data/locate.js';
import { BASE_URL_ENV, pullBfcl } from '../../src/envs/bfcl/data/pull.js';
import { HAS_SHARED } from './golden.js';

/** The tag of test files that read the BFCL task files (a `// @module-tag bfcl-data` line). */
export const BFCL_DATA_TAG = 'bfcl-data';

/** The three ways to give the tests the data, for the line that says they are missing. */
export const HOW_TO_PROVIDE =
  `provide them with \`npx seal data pull bfcl\` (network once), \`${DATA_DIR_ENV}=DIR\` (a copy you have), ` +
  `or \`${BASE_URL_ENV}=URL\` (a mirror of the gorilla repository)`;

/**
 * Undefined when the task files are there (pulled now if need be); else one line saying what is
 * missing and how to provide it.
 */
export async function missingBfclData(
  log: (line: string) => void = (line) => console.error(`test data: ${line}`),
): Promise<string | undefined> {
  if (HAS_SHARED || process.env[DATA_DIR_ENV]) return undefined;
  const dest = defaultCacheDir();
  const report = await pullBfcl({ dest, log, timeoutMs: 20_000 });
  if (report.failed.length === 0) return undefined;
  const first = report.failed[0]!;
  return (
    `the BFCL task files are not in ${dest} and could not be pulled ` +
    `(${report.failed.length} files; ${first.path}: ${first.reason}); ${HOW_TO_PROVIDE}`
  );
}

/** The line that marks a test file as reading the BFCL task files. */
const TAG_LINE = new RegExp(`^// @module-tag ${BFCL_DATA_TAG}$`, 'm');

/** The test files under `dir` (relative paths) that carry the bfcl-data tag. */
export function filesNeedingBfclData(dir = 'test'): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.test.ts'))
    .map((f) => join(dir, f))
    .filter((f) => TAG_LINE.test(readFileSync(f, 'utf8')))
    .sort();
}
