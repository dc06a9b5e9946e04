/**
 * Differential checks of the port against the reference's recorded behaviour: shared by the vitest
 * suites and scripts/golden-report.ts.
 *
 * Where the test data comes from. Beside a `../shared/bfcl-v3` folder (CI, or `$SEAL_SHARED_BFCL`),
 * the task files and the oracles are read there. Anywhere else the repository is cloned, the task
 * files are the product's own (`$SEAL_BFCL_DATA`, else the pinned, checksummed pull into the cache,
 * which test/support/data-setup.ts runs once before the tests), and the oracles are the compressed
 * copies under test/fixtures/bfcl (its README says how they were made).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { gunzipSync } from 'node:zlib';
import type { ClassName } from '../../src/envs/bfcl/apis/api.js';
import { resolveDataDir } from '../../src/envs/bfcl/data/locate.js';
import { type BfclData, loadBfclData } from '../../src/envs/bfcl/data/tasks.js';
import { TaskEnvironment } from '../../src/envs/bfcl/executor.js';
import { stateHash, stateSnapshot } from '../../src/envs/bfcl/state.js';
import { parsePyJson } from '../../src/envs/py/json.js';
import type { JsonValue, PyDict } from '../../src/envs/py/values.js';

export const SHARED_BFCL = resolve(
  process.env.SEAL_SHARED_BFCL ?? join(import.meta.dirname, '..', '..', '..', 'shared', 'bfcl-v3'),
);
/** whether the shared folder is there (a `$SEAL_SHARED_BFCL` that names none is an error, not a fallback) */
export const HAS_SHARED = process.env.SEAL_SHARED_BFCL !== undefined || existsSync(SHARED_BFCL);
/** the BFCL task files: the shared copy, else where `seal` itself finds them */
export const DATA_DIR = HAS_SHARED ? join(SHARED_BFCL, 'data') : resolveDataDir(undefined);
/** the oracles in the repository, gzip-compressed */
export const FIXTURES_DIR = join(import.meta.dirname, '..', 'fixtures', 'bfcl');

/** Each oracle file and where the shared folder keeps it. */
export const ORACLE_FILES = {
  'golden_traces.jsonl': 'golden',
  'error_cases.jsonl': 'golden',
  'checker_cases.jsonl': 'golden',
  'prompting_decode_cases.jsonl': 'golden',
  'python_random_reference.json': 'golden',
  'class_reference_tables.json': join('data', 'derived'),
} as const;
export type OracleFile = keyof typeof ORACLE_FILES;

/** An oracle file's text: from the shared folder when there is one, else from the fixtures. */
export function readOracle(file: OracleFile): string {
  if (HAS_SHARED) return readFileSync(join(SHARED_BFCL, ORACLE_FILES[file], file), 'utf8');
  return readFixture(file);
}

/** The repository's compressed copy of an oracle file. */
export function readFixture(file: OracleFile): string {
  return gunzipSync(readFileSync(join(FIXTURES_DIR, `${file}.gz`))).toString('utf8');
}

let cached: BfclData | undefined;
export function sharedData(): BfclData {
  cached ??= loadBfclData(DATA_DIR);
  return cached;
}

export function readJsonl<T>(file: OracleFile): T[] {
  return readOracle(file)
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as T);
}

export interface GoldenTrace {
  id: string;
  category: string;
  involved_classes: ClassName[];
  long_context: boolean;
  initial_state: Record<string, JsonValue>;
  initial_state_sha256: Record<string, string>;
  turns: {
    turn: number;
    checked: boolean;
    calls: { call: string; result: string }[];
    state: Record<string, JsonValue>;
    state_sha256: Record<string, string>;
  }[];
}

export interface ErrorCase {
  case_id: string;
  class_group: string;
  task_id: string | null;
  involved_classes: ClassName[];
  long_context: boolean;
  initial_config?: unknown;
  prior_calls: string[];
  prior_results: string[];
  call: string;
  result: string;
  result_variants?: string[];
  hash_seed_dependent: boolean;
  date_dependent: boolean;
  state_after: Record<string, JsonValue>;
  state_after_sha256: Record<string, string>;
  note: string;
}

export interface Mismatch {
  where: string;
  expected: string;
  actual: string;
}

function stateMismatches(
  where: string,
  expected: Record<string, string>,
  actualState: Record<string, Record<string, JsonValue>>,
  expectedState: Record<string, JsonValue>,
): Mismatch[] {
  const out: Mismatch[] = [];
  for (const [cls, hash] of Object.entries(expected)) {
    const actual = actualState[cls];
    if (actual === undefined) {
      out.push({ where: `${where} state ${cls}`, expected: 'present', actual: 'missing' });
      continue;
    }
    if (stateHash(actual) !== hash) {
      const exp = (expectedState[cls] ?? {}) as Record<string, JsonValue>;
      const attrs = new Set([...Object.keys(exp), ...Object.keys(actual)]);
      const diffs = [...attrs].filter(
        (a) => JSON.stringify(sortKeys(exp[a])) !== JSON.stringify(sortKeys(actual[a])),
      );
      for (const a of diffs) {
        out.push({
          where: `${where} state ${cls}.${a}`,
          expected: JSON.stringify(exp[a])?.slice(0, 400) ?? 'undefined',
          actual: JSON.stringify(actual[a])?.slice(0, 400) ?? 'undefined',
        });
      }
      if (diffs.length === 0)
        out.push({ where: `${where} state ${cls}`, expected: hash, actual: stateHash(actual) });
    }
  }
  return out;
}

function sortKeys(v: JsonValue | undefined): JsonValue | undefined {
  if (v === null || v === undefined || typeof v !== 'object') return v;
  if (Array.isArray(v)) return v.map((x) => sortKeys(x) as JsonValue);
  return Object.fromEntries(
    Object.keys(v)
      .sort()
      .map((k) => [k, sortKeys(v[k]) as JsonValue]),
  );
}

function guard<T>(where: string, f: () => T): T | Mismatch {
  try {
    return f();
  } catch (e) {
    return {
      where,
      expected: 'no exception',
      actual: e instanceof Error ? (e.stack ?? e.message) : String(e),
    };
  }
}

/** Replay one golden trace; returns every difference (empty when identical). */
export function checkGoldenTrace(trace: GoldenTrace, data: BfclData = sharedData()): Mismatch[] {
  const task = data.byId.get(trace.id);
  if (!task) return [{ where: trace.id, expected: 'task in data', actual: 'missing' }];
  const env = guard(
    `${trace.id} setup`,
    () =>
      new TaskEnvironment({
        taskId: trace.id,
        involvedClasses: task.involvedClasses,
        initialConfig: task.initialConfig,
        longContext: trace.long_context,
        ...(trace.long_context ? { constants: data.longContextConstants() } : {}),
      }),
  );
  if (!(env instanceof TaskEnvironment)) return [env];
  const out: Mismatch[] = [];
  const initial = guard(`${trace.id} initial state`, () => stateSnapshot(env));
  if ('where' in initial) return [initial as Mismatch];
  out.push(
    ...stateMismatches(
      `${trace.id} initial`,
      trace.initial_state_sha256,
      initial as Record<string, Record<string, JsonValue>>,
      trace.initial_state,
    ),
  );
  for (const turn of trace.turns) {
    for (const [i, c] of turn.calls.entries()) {
      const actual = env.execute(c.call);
      if (actual !== c.result) {
        out.push({
          where: `${trace.id} turn ${turn.turn} call ${i} ${c.call}`,
          expected: c.result.slice(0, 600),
          actual: actual.slice(0, 600),
        });
      }
    }
    const snap = guard(`${trace.id} turn ${turn.turn} state`, () => stateSnapshot(env));
    if ('where' in snap) out.push(snap as Mismatch);
    else
      out.push(
        ...stateMismatches(
          `${trace.id} turn ${turn.turn}`,
          turn.state_sha256,
          snap as Record<string, Record<string, JsonValue>>,
          turn.state,
        ),
      );
  }
  return out;
}

/** Run one error case; returns every difference (empty when identical or a recorded variant). */
export function checkErrorCase(c: ErrorCase, data: BfclData = sharedData()): Mismatch[] {
  const task = c.task_id ? data.byId.get(c.task_id) : undefined;
  const initialConfig = task
    ? task.initialConfig
    : (parsePyJson(JSON.stringify(c.initial_config ?? {})) as PyDict);
  const env = guard(
    `${c.case_id} setup`,
    () =>
      new TaskEnvironment({
        taskId: c.task_id ?? 'synthetic',
        involvedClasses: c.involved_classes,
        initialConfig,
        longContext: c.long_context,
        modelName: 'errcase',
        ...(c.long_context ? { constants: data.longContextConstants() } : {}),
      }),
  );
  if (!(env instanceof TaskEnvironment)) return [env];
  const out: Mismatch[] = [];
  c.prior_calls.forEach((call, i) => {
    const actual = env.execute(call);
    if (actual !== c.prior_results[i])
      out.push({ where: `${c.case_id} prior ${i} ${call}`, expected: c.prior_results[i]!, actual });
  });
  const actual = env.execute(c.call);
  const accepted = c.result_variants && c.result_variants.length > 0 ? c.result_variants : [c.result];
  if (!accepted.includes(actual)) out.push({ where: `${c.case_id} ${c.call}`, expected: c.result, actual });
  const snap = guard(`${c.case_id} state`, () => stateSnapshot(env));
  if ('where' in snap) out.push(snap as Mismatch);
  else
    out.push(
      ...stateMismatches(
        `${c.case_id} after`,
        c.state_after_sha256,
        snap as Record<string, Record<string, JsonValue>>,
        c.state_after,
      ),
    );
  return out;
}
