/** Where the BFCL data lives: an explicit directory, the environment variable, or the cache. */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { cacheRoot } from '../../../util/pinned-files.js';

export const DATA_DIR_ENV = 'SEAL_BFCL_DATA';

export interface BfclManifest {
  readonly source: string;
  readonly commit: string;
  readonly repoDataPath: string;
  readonly files: readonly { readonly path: string; readonly sha256: string; readonly size: number }[];
  readonly longContextSource: { readonly repoPath: string; readonly sha256: string; readonly size: number };
}

/** The pinned file list with sha256 sums (manifests/ sits at the same depth from src/ and dist/). */
export const BFCL_MANIFEST: BfclManifest = JSON.parse(
  readFileSync(new URL('../../../../manifests/bfcl-v3.json', import.meta.url), 'utf8'),
) as BfclManifest;

/**
 * BFCL v4's agentic files (memory, web search), at the same commit and in the same data folder;
 * a manifest of their own so the multi-turn one stays as it was.
 */
export const BFCL_AGENTIC_MANIFEST: Pick<BfclManifest, 'commit' | 'repoDataPath' | 'files'> = JSON.parse(
  readFileSync(new URL('../../../../manifests/bfcl-v4-agentic.json', import.meta.url), 'utf8'),
) as BfclManifest;

/** The cache folder the pull writes to (per pinned commit, so a new pin never mixes files). */
export function defaultCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(cacheRoot(env), 'bfcl', BFCL_MANIFEST.commit.slice(0, 12));
}

/** `--data-dir` wins, then $SEAL_BFCL_DATA, then the pull cache. */
export function resolveDataDir(explicit: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  if (explicit) return resolve(explicit);
  if (env[DATA_DIR_ENV]) return resolve(env[DATA_DIR_ENV]);
  return defaultCacheDir(env);
}
