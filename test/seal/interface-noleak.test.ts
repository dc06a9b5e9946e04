// @module-tag bfcl-data
/**
 * No hidden information in cues: for every BFCL task, everything the interface can add (schema
 * cues on every turn's tools, the system prompt with every component and guideline on, repair
 * hints for real error results, parse-failure help in every format) must not contain a
 * ground-truth argument value the policy could not already see (user messages, the public
 * schema, tool outputs of the episode).
 */
import { describe, expect, it } from 'vitest';
import { CALL_SKELETONS, TOOL_CALL_FORMATS } from '../../src/agent/format.js';
import type { BfclTask, FunctionDoc } from '../../src/envs/bfcl/data/tasks.js';
import { BfclEpisode } from '../../src/envs/bfcl/episode.js';
import { floatRepr } from '../../src/envs/py/format.js';
import { type Expr, literalValue, parsePythonExpression } from '../../src/envs/py/parse.js';
import { PySet, PyTuple, type PyValue } from '../../src/envs/py/values.js';
import type { JsonSchemaLike, OpenAiTool } from '../../src/envs/tools.js';
import {
  applyObservation,
  calledName,
  decorateSystemPrompt,
  decorateToolResult,
  evolve,
  GUIDELINE_LABELS,
  type InterfaceConfig,
  type InterfaceState,
  initialInterfaceState,
  parseFailureHelp,
  trainingContext,
} from '../../src/seal/interface.js';
import type { Label } from '../../src/seal/labels.js';
import type { LabelStats, ProfileView } from '../../src/seal/profile.js';
import { ArgumentChecker } from '../../src/seal/schema.js';
import { sharedData } from '../support/golden.js';

const data = sharedData();
const ctx = trainingContext('no-leak');
const checker = new ArgumentChecker(new Map([...data.docs].map(([n, d]) => [n, d.doc])));

/** Every component forced on and every guideline label active. */
function everything(): InterfaceState {
  const stats: LabelStats = { count: 30, prevalence: 0.3, meanReward: 0.1, rollouts: 30 };
  const labels = Object.fromEntries(GUIDELINE_LABELS.map((l) => [l, stats])) as Partial<
    Record<Label, LabelStats>
  >;
  const view: ProfileView = {
    overall: { turns: 100, rollouts: 25, meanReward: 0.1, labels },
    byCategory: {},
    byPosition: {},
    lastDominantByTask: {},
  };
  const config: InterfaceConfig = {
    components: { schemaCues: 'on', errorFeedback: 'on', guidelines: 'on' },
    maxGuidelines: GUIDELINE_LABELS.length,
  };
  return evolve(initialInterfaceState(config), { version: 1, window: view, total: view }, config);
}
const full = everything();

// ---- ground-truth values -------------------------------------------------------------------

function collect(v: PyValue, out: Set<string>): void {
  if (typeof v === 'string') {
    if (v.length >= 3) out.add(v);
  } else if (typeof v === 'bigint' || typeof v === 'number') {
    for (const text of new Set([typeof v === 'number' ? floatRepr(v) : v.toString(), String(Number(v))]))
      if ((text.match(/\d/g) ?? []).length >= 2) out.add(text);
  } else if (Array.isArray(v)) for (const x of v) collect(x, out);
  else if (v instanceof PyTuple) for (const x of v.items) collect(x, out);
  else if (v instanceof PySet) for (const x of v.items) collect(x, out);
  else if (v instanceof Map)
    for (const [k, x] of v) {
      collect(k as PyValue, out);
      collect(x, out);
    }
}

function callArgs(call: string): { positional: PyValue[]; keywords: Map<string, PyValue> } {
  const e: Expr = parsePythonExpression(call);
  if (e.kind !== 'call') throw new Error(`not a call: ${call}`);
  const lit = (x: Expr) => {
    const v = literalValue(x);
    if (v === undefined) throw new Error(`non-literal argument in ${call}`);
    return v;
  };
  return { positional: e.args.map(lit), keywords: new Map(e.kwargs.map((k) => [k.name, lit(k.value)])) };
}

function groundTruthValues(task: BfclTask): Set<string> {
  const out = new Set<string>();
  for (const call of task.groundTruth.flat()) {
    const { positional, keywords } = callArgs(call);
    for (const v of positional) collect(v, out);
    for (const v of keywords.values()) collect(v, out);
  }
  return out;
}

/** Python values to the JSON the schema checker reads. */
function toJson(v: PyValue): unknown {
  if (typeof v === 'bigint') return Number(v);
  if (Array.isArray(v)) return v.map(toJson);
  if (v instanceof PyTuple) return v.items.map(toJson);
  if (v instanceof Map) return Object.fromEntries([...v].map(([k, x]) => [String(k), toJson(x)]));
  return v;
}

// ---- what the interface adds ---------------------------------------------------------------

/** The text a decoration appended to each description (asserting it only ever appends). */
function addedDescriptions(
  before: JsonSchemaLike | undefined,
  after: JsonSchemaLike | undefined,
  out: string[],
): void {
  if (!before || !after) return;
  const a = before.description ?? '';
  const b = after.description ?? '';
  if (!b.startsWith(a))
    throw new Error(`description rewritten: ${JSON.stringify(a)} -> ${JSON.stringify(b)}`);
  if (b.length > a.length) out.push(b.slice(a.length));
  for (const [k, p] of Object.entries(before.properties ?? {}))
    addedDescriptions(p, after.properties?.[k], out);
  addedDescriptions(before.items, after.items, out);
}

function addedByDocs(before: readonly FunctionDoc[], after: readonly FunctionDoc[], out: string[]): void {
  before.forEach((d, i) => {
    const a = after[i]!;
    addedDescriptions(
      { description: d.description, properties: d.parameters.properties },
      {
        description: a.description,
        properties: a.parameters.properties,
      },
      out,
    );
  });
}

function addedByTools(before: readonly OpenAiTool[], after: readonly OpenAiTool[], out: string[]): void {
  before.forEach((t, i) => {
    const a = after[i]!.function;
    addedDescriptions(
      { description: t.function.description, properties: t.function.parameters.properties },
      {
        description: a.description,
        properties: a.parameters.properties,
      },
      out,
    );
  });
}

/** Deliberately wrong calls built from the visible schema only, with values of our own. */
function wrongCalls(functions: readonly FunctionDoc[]): string[] {
  const calls = ['frobnicate()', 'ls(a=True'];
  const withRequired = functions.find((f) => (f.parameters.required ?? []).length > 0);
  if (withRequired) calls.push(`${withRequired.name}()`);
  const first = functions[0];
  if (first) calls.push(`${first.name}(zz_extra='zzz')`);
  for (const f of functions) {
    const stringParam = Object.entries(f.parameters.properties).find(([, p]) => p.type === 'string');
    if (stringParam) {
      calls.push(`${f.name}(${stringParam[0]}=0)`);
      break;
    }
  }
  const numberParam = functions.find((f) =>
    Object.values(f.parameters.properties).some((p) => p.type === 'integer'),
  );
  if (numberParam) {
    const [k] = Object.entries(numberParam.parameters.properties).find(([, p]) => p.type === 'integer')!;
    calls.push(`${numberParam.name}(${k}='zzz')`);
  }
  return calls;
}

interface Exposure {
  /** what the interface added, over the whole episode */
  readonly added: string[];
  /** what the policy could see without the interface */
  readonly visible: string[];
  readonly hints: number;
}

function expose(task: BfclTask): Exposure {
  const added: string[] = [];
  const visible: string[] = [];
  let hints = 0;
  const docs = task.involvedClasses.flatMap((c) => data.docsByClass.get(c) ?? []);
  visible.push(
    JSON.stringify(docs),
    ...docs.flatMap((d) => [
      d.description,
      ...Object.values(d.parameters.properties).map((p) => p.description ?? ''),
    ]),
  );
  const prompt = decorateSystemPrompt(ctx, full, '');
  added.push(prompt);

  const ep = new BfclEpisode(task, data);
  do {
    const obs = ep.observe();
    visible.push(...obs.messages.map((m) => m.content));
    const shown = applyObservation(ctx, full, obs);
    addedByDocs(obs.functions, shown.functions, added);
    addedByTools(obs.tools, shown.tools, added);
    if (obs.functionsAdded) addedByDocs(obs.functionsAdded, shown.functionsAdded!, added);

    const toolNames = obs.functions.map((f) => f.name);
    for (const format of TOOL_CALL_FORMATS)
      added.push(
        parseFailureHelp(ctx, full, {
          skeleton: CALL_SKELETONS[format],
          toolNames,
          error: 'invalid syntax (<string>, line 1)',
        })!,
      );

    for (const call of [...wrongCalls(obs.functions), ...(task.groundTruth[ep.turn] ?? [])]) {
      if (ep.status !== 'in_turn') break;
      const outcome = ep.act([call]);
      const result = outcome.results[0]!;
      visible.push(result);
      const name = calledName(call);
      let issues: ReturnType<ArgumentChecker['check']> = [];
      try {
        const { keywords } = callArgs(call);
        if (name)
          issues = checker.check(name, Object.fromEntries([...keywords].map(([k, v]) => [k, toJson(v)])));
      } catch {
        // a deliberately malformed call has no arguments to check
      }
      const decorated = decorateToolResult(ctx, full, result, { call, issues, functions: obs.functions });
      if (!decorated.startsWith(result)) throw new Error(`tool result rewritten for ${call}`);
      if (decorated.length > result.length) {
        hints++;
        added.push(decorated.slice(result.length));
      }
    }
  } while (ep.nextTurn());
  return { added, visible, hints };
}

// ---- the check -----------------------------------------------------------------------------

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** `value` as a whole token of `text`: `log` does not occur in "login", `10` not in "100". */
function occurs(value: string, text: string): boolean {
  const numeric = /^-?\d/.test(value);
  const before = numeric ? '(?<![\\d.])' : /^\w/.test(value) ? '(?<!\\w)' : '';
  const after = numeric ? '(?![\\d]|\\.\\d)' : /\w$/.test(value) ? '(?!\\w)' : '';
  return new RegExp(`${before}${escapeRegExp(value)}${after}`).test(text);
}

function leaks(values: ReadonlySet<string>, exposure: Exposure): string[] {
  const added = exposure.added.join('\n');
  const visible = exposure.visible.join('\n');
  return [...values].filter((v) => occurs(v, added) && !visible.includes(v));
}

describe('no hidden information in cues', () => {
  it('adds no ground-truth argument value that the policy could not already see, for all 800 tasks', () => {
    expect(data.tasks).toHaveLength(800);
    const found: string[] = [];
    let hidden = 0;
    let hints = 0;
    let probe: { values: Set<string>; exposure: Exposure } | undefined;
    for (const task of data.tasks) {
      const values = groundTruthValues(task);
      const exposure = expose(task);
      hints += exposure.hints;
      const visible = exposure.visible.join('\n');
      const unseen = [...values].filter((v) => !visible.includes(v));
      hidden += unseen.length;
      if (!probe && unseen.length > 0) probe = { values: new Set(unseen), exposure };
      for (const v of leaks(values, exposure)) found.push(`${task.id}: ${JSON.stringify(v)}`);
    }
    expect(found).toEqual([]);
    // the check has teeth: hidden values exist, the interface produced hints, and a planted value is caught
    expect(hidden).toBeGreaterThan(0);
    expect(hints).toBeGreaterThan(800 * 4);
    const [planted] = probe!.values;
    expect(
      leaks(probe!.values, { ...probe!.exposure, added: [...probe!.exposure.added, `use ${planted}`] }),
    ).toContain(planted);
  }, 60_000);

  it('finds token boundaries the way the check needs', () => {
    expect(occurs('log', 'log in first')).toBe(true);
    expect(occurs('log', 'login first')).toBe(false);
    expect(occurs('10', 'between 10 and 20')).toBe(true);
    expect(occurs('10', '100')).toBe(false);
    expect(occurs('10', '10.5')).toBe(false);
    expect(occurs('10', 'costs 10.')).toBe(true);
    expect(occurs('a b', 'x a b y')).toBe(true);
  });
});
