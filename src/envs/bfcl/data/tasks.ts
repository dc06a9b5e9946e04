/**
 * BFCL multi-turn tasks as the rest of the project sees them, and their loading from a data
 * directory laid out like gorilla's `bfcl_eval/data` (plus the derived long-context constants
 * and the SEAL split).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { UserError } from '../../../util/errors.js';
import { parsePyJson } from '../../py/json.js';
import type { PyDict, PyValue } from '../../py/values.js';
import type { JsonSchemaLike } from '../../tools.js';
import type { ClassName, LongContextConstants, MultiTurnClassName } from '../apis/api.js';
import { isClassName } from '../apis/api.js';

export const CATEGORIES = ['base', 'miss_func', 'miss_param', 'long_context'] as const;
export type Category = (typeof CATEGORIES)[number];

export const CATEGORY_TITLES: Record<Category, string> = {
  base: 'Base',
  miss_func: 'Miss Func',
  miss_param: 'Miss Param',
  long_context: 'Long Context',
};

export interface ChatMessage {
  readonly role: 'user' | 'system' | 'assistant' | 'tool';
  readonly content: string;
}

export interface FunctionDoc {
  readonly name: string;
  readonly description: string;
  readonly parameters: {
    readonly type: string;
    readonly properties: Readonly<Record<string, JsonSchemaLike>>;
    readonly required?: readonly string[];
  };
  readonly response?: unknown;
}

export interface BfclTask {
  readonly id: string;
  readonly category: Category;
  /** One entry per user turn; an empty turn is the miss_func turn that reveals held-out functions. */
  readonly question: readonly (readonly ChatMessage[])[];
  readonly initialConfig: PyDict;
  readonly involvedClasses: readonly ClassName[];
  /** miss_func only: at `turn`, these functions join the tool list. */
  readonly missedFunction?: { readonly turn: number; readonly names: readonly string[] };
  readonly excludedFunction?: readonly string[];
  readonly groundTruth: readonly (readonly string[])[];
  /**
   * Load the classes in the reference's long-context mode. Unset means: exactly when the category
   * is long_context (BFCL); other suites decide for themselves.
   */
  readonly longContext?: boolean;
}

/** Whether a task's instances run in the reference's long-context mode. */
export function isLongContext(task: BfclTask): boolean {
  return task.longContext ?? task.category === 'long_context';
}

export interface SealSplit {
  readonly train: readonly string[];
  readonly test: readonly string[];
  /**
   * tasks held out from both for every choice made while training (validation, settings): a suite
   * that has none (BFCL) validates on a held-out part of the training split instead
   */
  readonly dev?: readonly string[];
  readonly seed: number;
}

/** The task suites the environment can play: BFCL itself and the synthetic mini suite. */
export const SUITES = ['bfcl', 'mini'] as const;
export type SuiteName = (typeof SUITES)[number];

export interface BfclData {
  readonly suite: SuiteName;
  readonly dir: string;
  readonly tasks: readonly BfclTask[];
  readonly byId: ReadonlyMap<string, BfclTask>;
  /** Every function doc by name, with the class that implements it. */
  readonly docs: ReadonlyMap<string, { readonly className: ClassName; readonly doc: FunctionDoc }>;
  readonly docsByClass: ReadonlyMap<ClassName, readonly FunctionDoc[]>;
  readonly split: SealSplit;
  /** Lazily loaded: only long-context tasks need them. */
  longContextConstants(): LongContextConstants;
}

export const FUNC_DOC_FILES: Readonly<Record<MultiTurnClassName, string>> = {
  GorillaFileSystem: 'gorilla_file_system.json',
  MathAPI: 'math_api.json',
  MessageAPI: 'message_api.json',
  TwitterAPI: 'posting_api.json',
  TicketAPI: 'ticket_api.json',
  TradingBot: 'trading_bot.json',
  TravelAPI: 'travel_booking.json',
  VehicleControlAPI: 'vehicle_control.json',
};

export const questionFile = (c: Category) => `BFCL_v4_multi_turn_${c}.json`;
export const answerFile = (c: Category) => join('possible_answer', `BFCL_v4_multi_turn_${c}.json`);
export const LONG_CONTEXT_CONSTANTS_FILE = join('derived', 'long_context_constants.json');
export const SPLIT_FILE = 'seal_400_split.json';

/** Raised when the data directory is missing or incomplete; the message says how to fix it. */
export class DataMissingError extends UserError {}

export function categoryOf(id: string): Category {
  const m = /^multi_turn_(.+)_\d+$/.exec(id);
  const c = m?.[1];
  if (!c || !(CATEGORIES as readonly string[]).includes(c))
    throw new Error(`not a BFCL multi-turn task id: ${id}`);
  return c as Category;
}

function readJsonLines(path: string): string[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.trim().length > 0);
}

function fixHint(dir: string): string {
  return (
    `BFCL data not found or incomplete in ${dir}. Run \`seal data pull bfcl\` to download it, ` +
    'or point at a local copy with --data-dir DIR or the SEAL_BFCL_DATA environment variable.'
  );
}

export function loadBfclData(dir: string): BfclData {
  const required = [
    ...CATEGORIES.flatMap((c) => [questionFile(c), answerFile(c)]),
    ...Object.values(FUNC_DOC_FILES).map((f) => join('multi_turn_func_doc', f)),
  ];
  const missing = required.filter((f) => !existsSync(join(dir, f)));
  if (missing.length > 0)
    throw new DataMissingError(
      `${fixHint(dir)} Missing: ${missing.slice(0, 3).join(', ')}${missing.length > 3 ? ', ...' : ''}`,
    );

  const tasks: BfclTask[] = [];
  for (const category of CATEGORIES) {
    const answers = new Map<string, string[][]>();
    for (const line of readJsonLines(join(dir, answerFile(category)))) {
      const a = JSON.parse(line) as { id: string; ground_truth: string[][] };
      answers.set(a.id, a.ground_truth);
    }
    for (const line of readJsonLines(join(dir, questionFile(category)))) {
      tasks.push(parseTask(line, category, answers));
    }
  }
  const byId = new Map(tasks.map((t) => [t.id, t]));

  const docs = new Map<string, { className: ClassName; doc: FunctionDoc }>();
  const docsByClass = new Map<ClassName, FunctionDoc[]>();
  for (const [className, file] of Object.entries(FUNC_DOC_FILES) as [ClassName, string][]) {
    const list = readJsonLines(join(dir, 'multi_turn_func_doc', file)).map(
      (l) => JSON.parse(l) as FunctionDoc,
    );
    docsByClass.set(className, list);
    for (const doc of list) docs.set(doc.name, { className, doc });
  }

  const split = loadSplit(dir);
  let constants: LongContextConstants | undefined;
  return {
    suite: 'bfcl',
    dir,
    tasks,
    byId,
    docs,
    docsByClass,
    split,
    longContextConstants() {
      constants ??= loadLongContextConstants(dir);
      return constants;
    },
  };
}

function parseTask(line: string, category: Category, answers: Map<string, string[][]>): BfclTask {
  const raw = JSON.parse(line) as {
    id: string;
    question: ChatMessage[][];
    involved_classes: string[];
    missed_function?: Record<string, string[]>;
    excluded_function?: string[];
  };
  // initial_config needs Python's int/float distinction, so it is re-read with the Python JSON reader.
  const pyTask = parsePyJson(line) as PyDict;
  const initialConfig = (pyTask.get('initial_config') as PyDict | undefined) ?? new Map<string, PyValue>();
  const involved = raw.involved_classes.map((c) => {
    if (!isClassName(c)) throw new Error(`${raw.id}: unknown class ${c}`);
    return c;
  });
  const groundTruth = answers.get(raw.id);
  if (!groundTruth) throw new Error(`${raw.id}: no ground truth in the answer file`);
  let missedFunction: BfclTask['missedFunction'];
  if (raw.missed_function && Object.keys(raw.missed_function).length > 0) {
    const [turn, names] = Object.entries(raw.missed_function)[0]!;
    missedFunction = { turn: Number(turn), names };
  }
  return {
    id: raw.id,
    category,
    question: raw.question,
    initialConfig,
    involvedClasses: involved,
    ...(missedFunction ? { missedFunction } : {}),
    ...(raw.excluded_function ? { excludedFunction: raw.excluded_function } : {}),
    groundTruth,
  };
}

function loadSplit(dir: string): SealSplit {
  const local = join(dir, SPLIT_FILE);
  const path = existsSync(local)
    ? local
    : new URL('../../../../manifests/seal_400_split.json', import.meta.url);
  return JSON.parse(readFileSync(path, 'utf8')) as SealSplit;
}

/** The reference's long-context constants, from the JSON export the data directory carries. */
export function loadLongContextConstants(dir: string): LongContextConstants {
  const path = join(dir, LONG_CONTEXT_CONSTANTS_FILE);
  if (!existsSync(path)) {
    throw new DataMissingError(
      `${fixHint(dir)} Missing: ${LONG_CONTEXT_CONSTANTS_FILE} (needed by long-context tasks)`,
    );
  }
  const value = parsePyJson(readFileSync(path, 'utf8'), { ellipsisMarker: true });
  if (!(value instanceof Map)) throw new Error(`${path}: expected a JSON object`);
  const out = new Map<string, PyValue>();
  for (const [k, v] of value) if (typeof k === 'string' && k !== 'note') out.set(k, v);
  return out;
}
