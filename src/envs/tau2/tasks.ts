/**
 * A domain's tasks as τ²-bench v0.2.0 stores them (`data/tau2/domains/<domain>/tasks.json`), read
 * into `Tau2Task`s. Arguments and initialisation data stay Python values (json.loads semantics:
 * `10.0` is a float, key order as written); everything else is plain JSON. Defaults the
 * reference's pydantic models fill in are filled in here.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { UserError } from '../../util/errors.js';
import { parsePyJson } from '../py/json.js';
import { isDict, type PyDict, type PyValue } from '../py/values.js';
import type { Tau2DomainName, Tau2Task } from './types.js';

/** Fields whose values reach a tool or a database and so keep Python types. */
const PYTHON_VALUED = new Set(['arguments', 'agent_data', 'user_data']);

/** The folder of a domain's files under a data root that keeps the repository's paths. */
export function domainDir(root: string, domain: Tau2DomainName): string {
  return join(root, 'data', 'tau2', 'domains', domain);
}

/** A Python value as plain JSON-like JS (dicts as objects), except the fields that keep Python types. */
function plain(v: PyValue, key?: string): unknown {
  if (key !== undefined && PYTHON_VALUED.has(key) && isDict(v)) return v;
  if (typeof v === 'bigint') return Number(v);
  if (Array.isArray(v)) return v.map((x) => plain(x));
  if (isDict(v)) {
    const out: Record<string, unknown> = {};
    for (const [k, x] of v) out[String(k)] = plain(x, String(k));
    return out;
  }
  return v;
}

function withDefaults(raw: Record<string, unknown>): Tau2Task {
  const task = raw as unknown as Tau2Task & Record<string, unknown>;
  const criteria = task.evaluation_criteria as
    | (Record<string, unknown> & { actions?: unknown[] })
    | null
    | undefined;
  if (!criteria) return task;
  const actions = (criteria.actions as Record<string, unknown>[] | null | undefined)?.map((a) => ({
    requestor: 'assistant',
    ...a,
  }));
  const assertions = (criteria.env_assertions as Record<string, unknown>[] | null | undefined)?.map((a) => ({
    assert_value: true,
    ...a,
  }));
  return {
    ...task,
    evaluation_criteria: {
      ...criteria,
      reward_basis: (criteria.reward_basis as string[] | undefined) ?? ['DB', 'COMMUNICATE'],
      ...(actions ? { actions } : {}),
      ...(assertions ? { env_assertions: assertions } : {}),
    } as unknown as Tau2Task['evaluation_criteria'],
  };
}

/** Parse tasks.json text. */
export function parseTau2Tasks(text: string, source = 'tasks.json'): Tau2Task[] {
  let parsed: PyValue;
  try {
    parsed = parsePyJson(text);
  } catch (e) {
    throw new UserError(
      `${source} is not valid JSON (${(e as Error).message}); pull the data again with \`seal data pull tau2\``,
    );
  }
  if (!Array.isArray(parsed)) throw new UserError(`${source} should hold a list of tasks`);
  return parsed.map((t, i) => {
    if (!isDict(t) || typeof t.get('id') !== 'string')
      throw new UserError(`${source}: task ${i} has no string id`);
    return withDefaults(plain(t) as Record<string, unknown>);
  });
}

/** A domain's tasks from a data root (the folder that holds `data/tau2/...`). */
export function loadTau2Tasks(root: string, domain: Tau2DomainName): Tau2Task[] {
  const path = join(domainDir(root, domain), 'tasks.json');
  if (!existsSync(path))
    throw new UserError(
      `no τ² tasks for ${domain} at ${path}; run \`seal data pull tau2\` or pass the folder that holds data/tau2`,
    );
  return parseTau2Tasks(readFileSync(path, 'utf8'), path);
}

/** A task argument dict (a PyDict) from plain values, for tests and hand-made calls. */
export type { PyDict };
