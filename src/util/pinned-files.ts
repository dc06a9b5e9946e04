/**
 * Download files pinned by sha256 from a raw-file host into a folder: the one place for what
 * `seal data pull` does for every data set. A file already present with the right sum is kept
 * and not fetched; a download lands in a temporary file and is renamed over the target only
 * after its sum matched, so a corrupt or cut-off download never replaces a good file, and a
 * rerun fetches only what is still missing.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import envPaths from 'env-paths';
import { UserError } from './errors.js';
import { writeAtomic } from './files.js';

/** Overrides the user cache folder every pull writes below. */
export const CACHE_DIR_ENV = 'SEAL_CACHE_DIR';

/** The folder the pulls keep their data sets in: $SEAL_CACHE_DIR, else the user cache folder. */
export function cacheRoot(env: NodeJS.ProcessEnv = process.env): string {
  return env[CACHE_DIR_ENV] ? resolve(env[CACHE_DIR_ENV]) : envPaths('seal', { suffix: '' }).cache;
}

/** A file to fetch: `${baseUrl}/${commit}/${url}`, stored at `${dest}/${target}`. */
export interface PinnedFile {
  /** the path on the host below the commit (the repository path) */
  readonly url: string;
  /** where it goes, relative to the destination folder */
  readonly target: string;
  readonly sha256: string;
}

export interface PinnedFetch {
  /** raw-file host, without the commit: `${baseUrl}/${commit}/${path}` */
  readonly baseUrl: string;
  readonly commit: string;
  readonly fetchImpl?: typeof fetch;
  readonly timeoutMs?: number;
}

export interface PullReport {
  readonly downloaded: string[];
  readonly alreadyPresent: string[];
  readonly failed: { readonly path: string; readonly reason: string }[];
}

/** A download that failed: the host unreachable, an HTTP error, or a sum that does not match. */
export class PullError extends UserError {}

export const sha256Hex = (buf: Uint8Array): string => createHash('sha256').update(buf).digest('hex');

/** Whether `path` exists and has the sum `expected`. */
export function hasSum(path: string, expected: string): boolean {
  return existsSync(path) && sha256Hex(readFileSync(path)) === expected;
}

/** One file's bytes from the host, refused (PullError) unless its sha256 is `expected`. */
export async function fetchPinned(host: PinnedFetch, path: string, expected: string): Promise<Uint8Array> {
  const url = `${host.baseUrl.replace(/\/+$/, '')}/${host.commit}/${path}`;
  let res: Response;
  try {
    res = await (host.fetchImpl ?? fetch)(url, { signal: AbortSignal.timeout(host.timeoutMs ?? 60_000) });
  } catch (e) {
    const cause = (e as { cause?: { code?: string; message?: string } }).cause;
    const why = cause?.code ?? cause?.message ?? (e as Error).message;
    throw new PullError(`cannot reach ${url}: ${why}`);
  }
  if (!res.ok) throw new PullError(`${url} answered HTTP ${res.status}`);
  let body: Uint8Array;
  try {
    body = new Uint8Array(await res.arrayBuffer());
  } catch (e) {
    throw new PullError(`${url}: the download broke off (${(e as Error).message})`);
  }
  const sum = sha256Hex(body);
  if (sum !== expected)
    throw new PullError(`${url}: sha256 ${sum} does not match the manifest (${expected})`);
  return body;
}

/**
 * Every file into `dest`, one after another. Never throws for a file: what failed is in the
 * report with its reason, and the files that verified stay.
 */
export async function pullPinned(
  host: PinnedFetch,
  dest: string,
  files: readonly PinnedFile[],
  log: (line: string) => void = () => {},
): Promise<PullReport> {
  const report: PullReport = { downloaded: [], alreadyPresent: [], failed: [] };
  for (const f of files) {
    const target = join(dest, f.target);
    if (hasSum(target, f.sha256)) {
      report.alreadyPresent.push(f.target);
      continue;
    }
    try {
      writeAtomic(target, await fetchPinned(host, f.url, f.sha256));
      report.downloaded.push(f.target);
      log(`downloaded ${f.target}`);
    } catch (e) {
      report.failed.push({ path: f.target, reason: (e as Error).message });
    }
  }
  return report;
}
