/**
 * Everything a τ² run needs from disk, found and loaded in one place: the data root, the user
 * guidelines, the tool docs and the chosen domains.
 */
import { resolve } from 'node:path';
import { UserError } from '../../util/errors.js';
import { locateTau2Data, TAU2_DATA_ENV } from './data.js';
import type { Tau2Domain, Tau2DomainLoader, Tau2DomainName, ToolDocs } from './types.js';
import { loadUserGuidelines } from './user.js';

export { TAU2_DATA_ENV };

/** The domains this build can play, by name. */
export const DOMAIN_LOADERS: Partial<Record<Tau2DomainName, Tau2DomainLoader>> = {};

/**
 * `--tau2-data` wins, then $SEAL_TAU2_DATA, then `cacheDir` (default: the cache `seal data pull
 * tau2` fills); the folder must hold every pinned data file (data.ts says what is missing).
 */
export function resolveTau2Root(
  explicit: string | undefined,
  cacheDir: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): string {
  const root = explicit ? resolve(explicit) : env[TAU2_DATA_ENV] ? resolve(env[TAU2_DATA_ENV]) : cacheDir;
  return locateTau2Data(root, '--tau2-data', env);
}

export interface Tau2Runtime {
  readonly root: string;
  readonly domains: readonly Tau2Domain[];
  readonly guidelines: { readonly plain: string; readonly withTools: string };
  readonly docs: ToolDocs;
}

export function loadTau2Runtime(root: string, names: readonly Tau2DomainName[], docs: ToolDocs): Tau2Runtime {
  const domains = names.map((name) => {
    const load = DOMAIN_LOADERS[name];
    if (!load) throw new UserError(`the τ² domain ${name} is not available in this build`);
    return load(root, docs);
  });
  return {
    root,
    domains,
    guidelines: { plain: loadUserGuidelines(root, false), withTools: loadUserGuidelines(root, true) },
    docs,
  };
}
