/**
 * Where the τ² v0.2.0 data is for tests: `../shared/tau2/v0.2.0` beside the repository, or the
 * folder `$SEAL_SHARED_TAU2` names (a scratch copy of the repository, as the mutation check makes).
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parsePyJson } from '../../src/envs/py/json.js';
import type { PyDict } from '../../src/envs/py/values.js';
import type { Requestor, Tau2Environment } from '../../src/envs/tau2/types.js';

export const TAU2_ROOT = resolve(
  process.env.SEAL_SHARED_TAU2 ?? join(import.meta.dirname, '..', '..', '..', 'shared', 'tau2', 'v0.2.0'),
);
export const HAS_TAU2 = existsSync(join(TAU2_ROOT, 'data', 'tau2', 'domains'));

/** Say once, in the test's output, why a τ² data test did not run. */
export function noteMissingTau2(what: string): void {
  if (!HAS_TAU2)
    console.warn(`${what}: skipped, no τ² data at ${TAU2_ROOT} (the reference's v0.2.0 data/tau2 folder)`);
}

/** A call as a model makes it, its arguments written as JSON. */
export function callTool(
  env: Tau2Environment,
  name: string,
  json: string,
  requestor: Requestor = 'assistant',
) {
  return env.respond({ id: 'call', name, arguments: parsePyJson(json) as PyDict, requestor });
}
