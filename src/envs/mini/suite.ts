/**
 * The mini suite as `BfclData`: fixed train and test splits (400 tasks each, 100 per category), a
 * development split (400 more) for every choice made while training, plus the suite's own function
 * docs, so the BFCL episode, checker, diagnosis and `seal eval` run on it unchanged. Nothing is
 * read from disk.
 *
 * Non-overlap of the splits: test, train and dev tasks come from three seed ranges; a train
 * candidate whose initial state or whose whole dialogue text equals a test task's is redrawn, and
 * a dev candidate equal in either to a test or a train task likewise (single generic sentences
 * may recur, whole scenarios do not). The dev split thus stands to the training split as the test
 * split does, so a setting chosen on it is chosen on the same kind of generalisation, without
 * looking at the test split.
 */

import { mixSeed } from '../../util/rng.js';
import type { ClassName } from '../bfcl/apis/api.js';
import {
  type BfclData,
  type BfclTask,
  CATEGORIES,
  type Category,
  type FunctionDoc,
} from '../bfcl/data/tasks.js';
import { MINI_DOCS } from './docs.js';
import { type GenerateOptions, generate, generateTask, miniTaskId } from './generate.js';
import { pyJson } from './util.js';

export const MINI_SPLIT_SIZE = 400;
export const MINI_PER_CATEGORY = 100;
/** Seeds of the fixed splits (disjoint ranges). */
export const MINI_TEST_SEED = 20_260_001;
export const MINI_TRAIN_SEED = 7_000_001;
export const MINI_DEV_SEED = 41_000_001;
/** Train ids are `mini_<category>_<n>` with n in [0, 100), test ids n in [100, 200), dev [200, 300). */
export const MINI_TEST_OFFSET = 100;
export const MINI_DEV_OFFSET = 200;

/** The parts of a task the non-overlap rule compares. */
export function scenarioKeys(task: BfclTask): { state: string; dialogue: string } {
  return {
    state: pyJson(task.initialConfig),
    dialogue: task.question.map((turn) => turn.map((m) => m.content).join('\n')).join('\n--\n'),
  };
}

/**
 * Canonical JSON of a task in the BFCL question-line shape plus its ground truth (Python ints and
 * floats kept apart, so `parsePyJson` reads `initial_config` back exactly), e.g. for hashing.
 */
export function miniTaskToJson(task: BfclTask): string {
  const head = JSON.stringify({
    id: task.id,
    category: task.category,
    question: task.question,
    involved_classes: task.involvedClasses,
    ...(task.missedFunction
      ? { missed_function: { [task.missedFunction.turn]: task.missedFunction.names } }
      : {}),
    ground_truth: task.groundTruth,
    long_context: task.longContext ?? false,
  });
  return `${head.slice(0, -1)},"initial_config":${pyJson(task.initialConfig)}}`;
}

export interface MiniSplits {
  readonly train: readonly BfclTask[];
  readonly test: readonly BfclTask[];
  readonly dev: readonly BfclTask[];
}

/** A predicate that is false for tasks sharing an initial state or a dialogue with any of `tasks`. */
function scenarioDisjoint(tasks: readonly BfclTask[]): (task: BfclTask) => boolean {
  const states = new Set(tasks.map((t) => scenarioKeys(t).state));
  const dialogues = new Set(tasks.map((t) => scenarioKeys(t).dialogue));
  return (task) => {
    const k = scenarioKeys(task);
    return !states.has(k.state) && !dialogues.has(k.dialogue);
  };
}

/** 100 tasks per category from one seed range, ids from `offset`, each accepted by `accept` */
function splitOf(seed: number, offset: number, accept?: (t: BfclTask) => boolean): BfclTask[] {
  return CATEGORIES.flatMap((category) =>
    Array.from({ length: MINI_PER_CATEGORY }, (_, i) =>
      generateTask(
        mixSeed(seed, CATEGORIES.indexOf(category), i),
        category,
        miniTaskId(category, offset + i),
        accept,
      ),
    ),
  );
}

/** Build the three fixed splits (deterministic). */
export function buildMiniSplits(): MiniSplits {
  const test = splitOf(MINI_TEST_SEED, MINI_TEST_OFFSET);
  const train = splitOf(MINI_TRAIN_SEED, 0, scenarioDisjoint(test));
  const dev = splitOf(MINI_DEV_SEED, MINI_DEV_OFFSET, scenarioDisjoint([...test, ...train]));
  return { train, test, dev };
}

/** The suite's docs as the BFCL loader shapes them. */
export function miniDocs(): Pick<BfclData, 'docs' | 'docsByClass'> {
  const docs = new Map<string, { className: ClassName; doc: FunctionDoc }>();
  const docsByClass = new Map<ClassName, FunctionDoc[]>();
  for (const [className, list] of Object.entries(MINI_DOCS) as [ClassName, readonly FunctionDoc[]][]) {
    docsByClass.set(className, [...list]);
    for (const doc of list) docs.set(doc.name, { className, doc });
  }
  return { docs, docsByClass };
}

/** Wrap any mini tasks (e.g. fresh ones from `generate`) as `BfclData`. */
export function miniData(
  tasks: readonly BfclTask[],
  split: { train: readonly string[]; test: readonly string[]; dev?: readonly string[] },
): BfclData {
  const { docs, docsByClass } = miniDocs();
  return {
    suite: 'mini',
    dir: '',
    tasks,
    byId: new Map(tasks.map((t) => [t.id, t])),
    docs,
    docsByClass,
    split: {
      train: split.train,
      test: split.test,
      ...(split.dev ? { dev: split.dev } : {}),
      seed: MINI_TEST_SEED,
    },
    longContextConstants() {
      throw new Error(
        'the mini suite never runs in long-context mode (its long_context category uses larger states, not the reference constants)',
      );
    },
  };
}

let cached: BfclData | undefined;

/** The mini suite: 1,200 tasks (train + test + dev), its docs and its splits. Built once per process. */
export function loadMiniSuite(): BfclData {
  if (!cached) {
    const { train, test, dev } = buildMiniSplits();
    const ids = (ts: readonly BfclTask[]) => ts.map((t) => t.id);
    cached = miniData([...train, ...test, ...dev], { train: ids(train), test: ids(test), dev: ids(dev) });
  }
  return cached;
}

/** A predicate that is false for tasks sharing an initial state or a dialogue with the test split. */
export function notInTestSplit(): (task: BfclTask) => boolean {
  const data = loadMiniSuite();
  const test = data.split.test.map((id) => scenarioKeys(data.byId.get(id)!));
  const states = new Set(test.map((k) => k.state));
  const dialogues = new Set(test.map((k) => k.dialogue));
  return (task) => {
    const k = scenarioKeys(task);
    return !states.has(k.state) && !dialogues.has(k.dialogue);
  };
}

/** Fresh tasks for training: like `generate`, but never a scenario of the fixed test split. */
export function generateForTraining(
  seed: number,
  category: Category,
  n: number,
  options: Omit<GenerateOptions, 'accept'> = {},
): BfclTask[] {
  return generate(seed, category, n, { ...options, accept: notInTestSplit() });
}
