/**
 * The mini task generator: seeded scenarios over the 8 BFCL API classes in the four BFCL
 * categories, as `BfclTask`s that the BFCL executor runs and the official checker verifies.
 *
 * A task is built from one seed: pick 1-2 classes (3 for long_context), build each class's world,
 * draw 2-4 user turns of 1-3 calls from the worlds' actions, then turn it into the category's
 * shape (SPEC §6): miss_func holds one function out for a turn whose ground truth is `[]`, and the
 * next, empty question turn reveals it and makes the calls; miss_param asks without one value
 * (ground truth `[]`) and the next user turn gives it. Every ground truth is replayed in the real
 * executor; a draw whose calls fail is discarded and redrawn from a derived seed, so the same
 * seed always gives the same task.
 */

import { mixSeed, Rng } from '../../util/rng.js';
import { CLASS_NAMES, type ClassName } from '../bfcl/apis/api.js';
import { type BfclTask, CATEGORIES, type Category, type ChatMessage } from '../bfcl/data/tasks.js';
import { ERROR_PREFIX, TaskEnvironment } from '../bfcl/executor.js';
import type { PyDict } from '../py/values.js';
import { type Step, WORLD_BUILDERS } from './worlds.js';

export const MINI_PREFIX = 'mini';

export const miniTaskId = (category: Category, n: number) => `${MINI_PREFIX}_${category}_${n}`;

/** Whether a result string is an execution error (the same test the diagnosis applies). */
function failed(result: string): boolean {
  if (result.startsWith(ERROR_PREFIX)) return true;
  if (!result.startsWith('{')) return false;
  try {
    const parsed = JSON.parse(result) as unknown;
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) && 'error' in parsed;
  } catch {
    return /^\{'error': /.test(result);
  }
}

const fnName = (c: string) => c.slice(0, c.indexOf('('));

interface Draft {
  readonly classes: readonly ClassName[];
  readonly config: PyDict;
  readonly steps: readonly Step[];
}

/** Draw classes, worlds and 2-4 steps; undefined when the worlds ran out of applicable actions. */
function draftTask(rng: Rng, category: Category): Draft | undefined {
  const big = category === 'long_context';
  const nClasses = big ? rng.int(2, 3) : rng.int(1, 2);
  const classes = rng.sample(CLASS_NAMES, nClasses);
  // MathAPI alone has no state to check; pair it with something.
  if (classes.length === 1 && classes[0] === 'MathAPI') return undefined;
  const worlds = classes.map((c) => WORLD_BUILDERS[c](rng, { big }));
  const config: PyDict = new Map();
  for (const w of worlds) if (w.cls !== 'MathAPI') config.set(w.cls, w.config());

  const extra = category === 'miss_func' || category === 'miss_param' ? 1 : 0;
  const nSteps = rng.int(2, 4 - extra);
  const steps: Step[] = [];
  const order = rng.sample(worlds, worlds.length);
  for (let t = 0; t < nSteps; t++) {
    // every class gets a turn first, then any class
    const world = t < order.length ? order[t]! : rng.pick(worlds);
    let step: Step | undefined;
    for (let tries = 0; tries < 12 && !step; tries++) step = rng.pick(world.actions)(rng);
    if (!step) return undefined;
    // Sometimes two short requests share one turn (at most 3 calls).
    if (rng.chance(0.2) && step.calls.length === 1) {
      const second = rng.pick(world.actions)(rng);
      if (second && second.calls.length <= 2) {
        step = {
          text: `${step.text} ${rng.pick(['Then', 'After that,', 'Also'])} ${lowerFirst(second.text)}`,
          calls: [...step.calls, ...second.calls],
        };
      }
    }
    steps.push(step);
  }
  if (steps.some((s) => s.calls.length > 3)) return undefined;
  return { classes, config, steps };
}

function lowerFirst(s: string): string {
  return /^[A-Z][a-z]/.test(s) ? s[0]!.toLowerCase() + s.slice(1) : s;
}

const user = (content: string): ChatMessage[] => [{ role: 'user', content }];

/** Shape a draft into the category; undefined when the category's structure cannot be made. */
function shape(id: string, category: Category, d: Draft, rng: Rng): BfclTask | undefined {
  const base = {
    id,
    category,
    initialConfig: d.config,
    involvedClasses: d.classes,
    longContext: false,
  };
  if (category === 'base' || category === 'long_context') {
    return { ...base, question: d.steps.map((s) => user(s.text)), groundTruth: d.steps.map((s) => s.calls) };
  }
  if (category === 'miss_func') {
    const options: { turn: number; name: string }[] = [];
    d.steps.forEach((s, turn) => {
      const earlier = new Set(d.steps.slice(0, turn).flatMap((x) => x.calls.map(fnName)));
      const names = [...new Set(s.calls.map(fnName))].filter((n) => !earlier.has(n));
      for (const name of names) options.push({ turn, name });
    });
    if (options.length === 0) return undefined;
    const { turn, name } = rng.pick(options);
    const question: ChatMessage[][] = [];
    const groundTruth: string[][] = [];
    d.steps.forEach((s, t) => {
      question.push(user(s.text));
      if (t === turn) {
        groundTruth.push([]);
        question.push([]);
      }
      groundTruth.push([...s.calls]);
    });
    return { ...base, question, groundTruth, missedFunction: { turn: turn + 1, names: [name] } };
  }
  // miss_param
  const candidates = d.steps
    .map((s, turn) => ({ s, turn }))
    .filter(({ s, turn }) => {
      const m = s.missing;
      if (!m) return false;
      const before = [...d.steps.slice(0, turn).map((x) => x.text), m.text].join('\n');
      return (
        !before.includes(m.value) && m.followUp.includes(m.value) && s.calls.some((c) => c.includes(m.value))
      );
    });
  if (candidates.length === 0) return undefined;
  const { turn } = rng.pick(candidates);
  const question: ChatMessage[][] = [];
  const groundTruth: string[][] = [];
  d.steps.forEach((s, t) => {
    if (t === turn) {
      question.push(user(s.missing!.text), user(s.missing!.followUp));
      groundTruth.push([], [...s.calls]);
    } else {
      question.push(user(s.text));
      groundTruth.push([...s.calls]);
    }
  });
  return { ...base, question, groundTruth };
}

/** Replay the ground truth in the real executor: true when no call fails. */
export function groundTruthRuns(task: BfclTask): boolean {
  const env = new TaskEnvironment({
    taskId: task.id,
    involvedClasses: task.involvedClasses,
    initialConfig: task.initialConfig,
    longContext: false,
  });
  return task.groundTruth.every((turn) => turn.every((c) => !failed(env.execute(c))));
}

/**
 * One task from one seed, deterministic. `accept` may veto a candidate (the fixed splits use it
 * to keep test scenarios out of train); a vetoed or failing draw is redrawn from a derived seed.
 */
export function generateTask(
  seed: number,
  category: Category,
  id: string,
  accept: (task: BfclTask) => boolean = () => true,
): BfclTask {
  for (let attempt = 0; attempt < 1000; attempt++) {
    const rng = new Rng(mixSeed(seed, attempt, CATEGORIES.indexOf(category)), 'mulberry32');
    const draft = draftTask(rng, category);
    if (!draft) continue;
    const task = shape(id, category, draft, rng);
    if (task && groundTruthRuns(task) && accept(task)) return task;
  }
  throw new Error(`mini: no valid ${category} task for seed ${seed} after 1000 attempts`);
}

export interface GenerateOptions {
  /** ids are `mini_<category>_<start + i>` (default 0) */
  readonly start?: number;
  /** veto candidates (redrawn), e.g. to keep fresh training tasks out of the test split */
  readonly accept?: (task: BfclTask) => boolean;
}

/** `n` fresh tasks of a category from a seed, deterministic. */
export function generate(
  seed: number,
  category: Category,
  n: number,
  options: GenerateOptions = {},
): BfclTask[] {
  const start = options.start ?? 0;
  return Array.from({ length: n }, (_, i) =>
    generateTask(mixSeed(seed, i), category, miniTaskId(category, start + i), options.accept),
  );
}
