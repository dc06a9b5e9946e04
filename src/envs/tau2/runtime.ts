/**
 * Everything a τ² run needs from disk, found and loaded in one place: the data root, the user
 * guidelines, the tool docs and the chosen domains.
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { UserError } from '../../util/errors.js';
import type { Tau2Domain, Tau2DomainLoader, Tau2DomainName, ToolDocs } from './types.js';
import { loadUserGuidelines } from './user.js';

export const TAU2_DATA_ENV = 'SEAL_TAU2_DATA';

/** The domains this build can play, by name. */
export const DOMAIN_LOADERS: Partial<Record<Tau2DomainName, Tau2DomainLoader>> = {};

/** `--tau2-data` wins, then $SEAL_TAU2_DATA, then the pull cache; the folder must hold data/tau2. */
export function resolveTau2Root(
  explicit: string | undefined,
  cacheDir: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): string {
  const root = explicit ? resolve(explicit) : env[TAU2_DATA_ENV] ? resolve(env[TAU2_DATA_ENV]) : cacheDir;
  const how = 'run `seal data pull tau2`, or give --tau2-data DIR (the folder that holds data/tau2)';
  if (!root) throw new UserError(`no τ² data folder; ${how}`);
  if (!existsSync(join(root, 'data', 'tau2')))
    throw new UserError(`${root} holds no data/tau2 folder; ${how}`);
  return root;
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
