/**
 * τ²-bench's files in seal: the pinned manifest, where the files are looked for, and
 * `seal data pull tau2`. The files keep the reference repository's paths under one root, so the
 * root holds `data/tau2/...` (tasks, databases, policies, the user simulator's guidelines) and
 * `src/tau2/...` (the Python sources whose docstrings and field descriptions are the tools'
 * documentation; they are read as text, never run: tool-docs.ts).
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { UserError } from '../../util/errors.js';
import { cacheRoot, type PullReport, pullPinned } from '../../util/pinned-files.js';

export const TAU2_DATA_ENV = 'SEAL_TAU2_DATA';
export const TAU2_BASE_URL_ENV = 'SEAL_TAU2_BASE_URL';
export const TAU2_DEFAULT_BASE_URL = 'https://raw.githubusercontent.com/sierra-research/tau2-bench';

/** What a pinned file is for: the benchmark's data, or a source file the tool docs are read from. */
export type Tau2FileKind = 'data' | 'tool-docs';

export interface Tau2Manifest {
  readonly source: string;
  readonly tag: string;
  readonly commit: string;
  readonly files: readonly {
    /** the repository path, also the path below the data root */
    readonly path: string;
    readonly sha256: string;
    readonly size: number;
    readonly kind: Tau2FileKind;
  }[];
}

/** The pinned file list (manifests/ sits at the same depth from src/ and dist/). */
export const TAU2_MANIFEST: Tau2Manifest = JSON.parse(
  readFileSync(new URL('../../../manifests/tau2-v0.2.0.json', import.meta.url), 'utf8'),
) as Tau2Manifest;

/** The cache folder the pull writes to, per pinned commit so that a new pin never mixes files. */
export function tau2CacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(cacheRoot(env), 'tau2', TAU2_MANIFEST.commit.slice(0, 12));
}

/** The data root: an explicit folder (a flag), else $SEAL_TAU2_DATA, else the pull's cache. */
export function resolveTau2Root(explicit: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  if (explicit) return resolve(explicit);
  if (env[TAU2_DATA_ENV]) return resolve(env[TAU2_DATA_ENV]);
  return tau2CacheDir(env);
}

/** The manifest's files of a kind that are not under `root` (presence only; the pull checks sums). */
export function missingTau2Files(root: string, kind: Tau2FileKind): string[] {
  return TAU2_MANIFEST.files
    .filter((f) => f.kind === kind && !existsSync(join(root, f.path)))
    .map((f) => f.path);
}

/**
 * The data root, checked: every data file of the manifest is there. A folder without them is
 * refused with what is missing and the three ways to provide it. `flag` names the command's own
 * flag for the folder, for that message.
 */
export function locateTau2Data(
  explicit: string | undefined,
  flag = '--tau2-data',
  env: NodeJS.ProcessEnv = process.env,
): string {
  const root = resolveTau2Root(explicit, env);
  const how =
    `run \`seal data pull tau2\` to download it into the cache, or point ${flag} DIR or $${TAU2_DATA_ENV} ` +
    'at a folder that holds data/tau2/... as the tau2-bench repository does (`seal data pull tau2 --dest DIR` fills one)';
  if (!existsSync(root)) throw new UserError(`τ² data not found: ${root} does not exist; ${how}.`);
  if (!statSync(root).isDirectory()) throw new UserError(`τ² data: ${root} is a file, not a folder; ${how}.`);
  const missing = missingTau2Files(root, 'data');
  if (missing.length > 0)
    throw new UserError(
      `τ² data incomplete in ${root}: ${missing.length} of the pinned files are missing (${missing
        .slice(0, 3)
        .join(', ')}${missing.length > 3 ? ', ...' : ''}); ${how}.`,
    );
  return root;
}

export interface Tau2PullOptions {
  readonly dest: string;
  /** raw-file host; `${baseUrl}/${commit}/${path}` (default $SEAL_TAU2_BASE_URL, else GitHub) */
  readonly baseUrl?: string;
  readonly manifest?: Tau2Manifest;
  readonly log?: (line: string) => void;
  readonly fetchImpl?: typeof fetch;
  readonly timeoutMs?: number;
}

/** `seal data pull tau2`: every pinned file into `dest` at its repository path, each checked. */
export function pullTau2(opts: Tau2PullOptions): Promise<PullReport> {
  const manifest = opts.manifest ?? TAU2_MANIFEST;
  return pullPinned(
    {
      baseUrl: opts.baseUrl ?? process.env[TAU2_BASE_URL_ENV] ?? TAU2_DEFAULT_BASE_URL,
      commit: manifest.commit,
      ...(opts.fetchImpl ? { fetchImpl: opts.fetchImpl } : {}),
      ...(opts.timeoutMs !== undefined ? { timeoutMs: opts.timeoutMs } : {}),
    },
    opts.dest,
    manifest.files.map((f) => ({ url: f.path, target: f.path, sha256: f.sha256 })),
    opts.log,
  );
}
