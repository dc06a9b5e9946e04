/**
 * What every evaluation's run folder shares, whatever the suite: the folder made and locked for one
 * process, its `run.json` written once and compared on resume, `--force` starting it over, and the
 * work run a few at a time until the first failure (what finished is on disk by then).
 */
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { UserError } from '../util/errors.js';
import { fileAccessError, writeAtomic } from '../util/files.js';
import { mapConcurrent } from '../util/semaphore.js';

export class RunFolderError extends UserError {}

/** what was evaluated and how: every run folder's record */
export const RUN_FILE = 'run.json';

const LOCK_FILE = '.lock';

/** Whether a process with this pid exists (EPERM: it does, owned by someone else). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Takes the run folder for this process: two runs into one folder would run every task twice
 * and interleave their lines. The lock file holds the owner's pid; a lock whose owner is gone
 * (a killed run) is taken over. Returns the release.
 */
export function lockRunFolder(dir: string): () => void {
  const path = join(dir, LOCK_FILE);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(path, `${process.pid}\n`, { flag: 'wx' });
      return () => {
        try {
          if (readFileSync(path, 'utf8').trim() === String(process.pid)) unlinkSync(path);
        } catch {
          // already gone
        }
      };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw fileAccessError(e, 'write', path);
    }
    let owner = Number.NaN;
    try {
      owner = Number.parseInt(readFileSync(path, 'utf8').trim(), 10);
    } catch {
      // removed meanwhile: try again
    }
    if (Number.isSafeInteger(owner) && owner > 0 && owner !== process.pid && alive(owner))
      throw new RunFolderError(
        `${dir} is in use by another seal process (pid ${owner}). Wait for it to finish, or give another --out folder.`,
      );
    // stale (its owner is gone) or unreadable: take it over
    rmSync(path, { force: true });
  }
  throw new RunFolderError(`cannot lock ${dir}: another process keeps taking it. Give another --out folder.`);
}

/** the way out of a refused folder, as the command line says it */
const WAY_OUT =
  'Resume it with the settings its run.json records, give another --out folder, or pass --force to start this one over.';

/**
 * A run folder's record against this run's settings: written when the folder is new, compared
 * on `keys` when it is resumed (keys in `laterKeys` go unchecked in records older than them).
 */
export function checkRunRecord<C extends object>(
  dir: string,
  config: C,
  keys: readonly (keyof C)[],
  options: { readonly resultsFile: string; readonly laterKeys?: readonly (keyof C)[] },
): void {
  const laterKeys = options.laterKeys ?? [];
  const path = join(dir, RUN_FILE);
  if (!existsSync(path)) {
    // results without the record that says what they are: never adopted as this run's
    if (existsSync(join(dir, options.resultsFile)))
      throw new RunFolderError(
        `${dir} holds ${options.resultsFile} but no ${RUN_FILE}, so what its results are is unknown. Give another --out folder, or pass --force to start this one over.`,
      );
    writeAtomic(path, `${JSON.stringify({ ...config, started: new Date().toISOString() }, null, 2)}\n`);
    return;
  }
  let before: C;
  try {
    before = JSON.parse(readFileSync(path, 'utf8')) as C;
    if (typeof before !== 'object' || before === null) throw new Error('not an object');
  } catch {
    throw new RunFolderError(
      `${path} is not a run record (corrupt JSON). Give another --out folder, or pass --force to start this one over.`,
    );
  }
  const legacy = !('policy' in before);
  const shown = (x: unknown) => (x === undefined ? 'none' : JSON.stringify(x));
  const differs = keys.filter(
    (k) => !(legacy && laterKeys.includes(k)) && JSON.stringify(before[k]) !== JSON.stringify(config[k]),
  );
  if (differs.length > 0) {
    throw new RunFolderError(
      `${dir} holds a run with a different ${differs.map(String).join(', ')} (${differs.map((k) => `${String(k)}: ${shown(before[k])} there, ${shown(config[k])} now`).join('; ')}); its results would not mean the same as this run's. ${WAY_OUT}`,
    );
  }
}

/** `--force`: the files of an earlier run removed, so that the folder starts over (other files stay) */
export function startOver(dir: string, files: readonly string[]): void {
  for (const name of files) {
    const path = join(dir, name);
    try {
      rmSync(path, { force: true });
    } catch (e) {
      throw fileAccessError(e, 'write', path);
    }
  }
}

export interface EvalProgress {
  start(total: number, alreadyDone: number): void;
  tick(): void;
  stop(): void;
}

/** The `--out` folder made if missing and locked for this process; returns the release. */
export function openRunFolder(outDir: string): () => void {
  if (existsSync(outDir) && !statSync(outDir).isDirectory())
    throw new RunFolderError(
      `--out ${outDir} is a file; give a folder for the run (it is created if missing).`,
    );
  try {
    mkdirSync(outDir, { recursive: true });
  } catch (e) {
    throw fileAccessError(e, 'write', outDir);
  }
  return lockRunFolder(outDir);
}

/**
 * `work` over `items`, `limit` at a time, stopping at the first failure: the others in flight are
 * told by the signal, nothing new starts, and the failure is thrown once all have settled (what
 * finished is already on disk).
 */
export async function runUntilFailure<T>(
  items: readonly T[],
  limit: number,
  work: (item: T, signal: AbortSignal) => Promise<void>,
): Promise<void> {
  const abort = new AbortController();
  let failure: unknown;
  await mapConcurrent(items, limit, async (item) => {
    if (abort.signal.aborted) return;
    try {
      await work(item, abort.signal);
    } catch (e) {
      if (!abort.signal.aborted) {
        failure = e;
        abort.abort();
      }
    }
  });
  if (failure !== undefined) throw failure;
}
