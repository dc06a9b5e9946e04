/**
 * Supervised demonstrations for the embedded policy's base checkpoint: generated mini tasks played
 * with their ground truth, rendered exactly as a rollout in the embedded policy's tool-call format
 * (`compact`: python call lists, tools as one-line signatures) shows them
 * to the policy (system prompt with the tool docs, user turns, the reveal message on the miss_func
 * turn, assistant call lists `[f(a=1)]`, the tool results as the executor really returned them,
 * a short text answer closing each turn, abstentions on turns whose ground truth is empty).
 * A call that needs a value only an earlier call's result shows is made in a later step, after
 * that result (see `ScriptedTeacher`).
 *
 * Variety: a share of demonstrations is rendered through the training interface (schema marks,
 * instruction and affordance lines, guidelines, repair hints on failed results), and a share
 * contains a recovery: a call missing a required argument is really executed (so the error text
 * is the executor's), then the correct calls follow. Everything is deterministic from the seed,
 * and only tasks from `generateForTraining` are used (never a scenario of the fixed test split).
 *
 * A `habit` teaches a systematic failure on purpose, for the experiments that need a base whose
 * failures the interface can speak to (`guess-missing-value`: see `HABITS`). Such demonstrations
 * do not pass the verifier, by design; no other demonstration is changed by it.
 */
import type { FormatAdapter } from '../../agent/format.js';
import { formatAdapter } from '../../agent/formats/index.js';
import { rolloutTranscript } from '../../bfcl/rollout.js';
import { type BfclData, type BfclTask, CATEGORIES, type Category } from '../../envs/bfcl/data/tasks.js';
import { generateForTraining, miniData } from '../../envs/mini/index.js';
import { type ChatRole, messageText } from '../../nn/tokenizer.js';
import { EMBEDDED_TOOL_FORMAT } from '../../policy/embedded/policy.js';
import type { Completion, CompletionRequest, Policy } from '../../policy/policy.js';
import {
  type ActiveGuideline,
  GUIDELINE_LABELS,
  GUIDELINE_TEXT,
  type InterfaceState,
  initialInterfaceState,
  summarise,
  type TrainingContext,
  trainingContext,
} from '../../seal/interface.js';
import { mixSeed, Rng } from '../../util/rng.js';

export interface DemoMessage {
  readonly role: ChatRole;
  readonly content: string;
}

/**
 * Failure habits a demonstration set can teach. `guess-missing-value`: on the miss_param turn whose
 * request lacks a value, the assistant calls the next turn's functions with a value guessed from
 * the request's own words instead of asking, unless the interface in front of it shows the
 * guideline against calling when a value was never given (`spurious_tool_call`'s); then it asks,
 * as every demonstration without a habit does. The result is a policy that fails one category
 * systematically and that the SEAL interface's cue can steer, as instruction-following LLMs are
 * steered by such notes. `guess-missing-value-paired`: the same, with every miss_param
 * demonstration shown through the interface twice, once with the cue (asking) and once through the
 * same interface without it (guessing): the cue is then the only thing that tells the two apart,
 * which a small model otherwise picks up only in part (it kept asking unprompted now and then).
 */
export const HABITS = ['guess-missing-value', 'guess-missing-value-paired'] as const;
export type Habit = (typeof HABITS)[number];

/** the guideline whose presence makes a demonstration with the `guess-missing-value` habit ask */
export const HABIT_CUE_LABEL = 'spurious_tool_call';

export interface Demonstration {
  readonly taskId: string;
  readonly category: Category;
  /** rendered through the training interface */
  readonly cues: boolean;
  /** contains a failed call followed by its repair */
  readonly recovery: boolean;
  /** shows the habit's failure (and so fails the verifier) */
  readonly habit: boolean;
  /** the chat as the embedded policy sees it (`messageText` of the rollout's messages) */
  readonly messages: readonly DemoMessage[];
}

export interface DemonstrationOptions {
  readonly seed: number;
  /** number of tasks (spread evenly over the categories, in `CATEGORIES` order) */
  readonly tasks: number;
  /** the categories the tasks come from (default: all four) */
  readonly categories?: readonly Category[];
  /** share rendered with interface cues; default 0.35 */
  readonly cueShare?: number;
  /** share with an error recovery; default 0.3 */
  readonly recoveryShare?: number;
  /** a failure habit to teach (none by default) */
  readonly habit?: Habit;
}

export const DONE_PHRASES: readonly string[] = [
  'Done.',
  'Done. Anything else?',
  'All set.',
  'That is done.',
  'Finished.',
  'Completed.',
];

export const NO_TOOL_PHRASES: readonly string[] = [
  'None of the available functions can do that, so I cannot complete this request yet.',
  'I cannot do that with the functions I have.',
  'No listed function fits this request.',
];

export const ASK_PHRASES: readonly string[] = [
  'I need more information: a required value was not given. Please provide it.',
  'Which value should I use? The request is missing a required detail.',
  'Please tell me the missing value first; I will not guess it.',
];

/**
 * The training tasks the demonstrations are built on: `generateForTraining` per category, `n`
 * spread evenly over `categories` (each category draws from its own stream whichever others are
 * chosen, so a subset gives the same tasks of a category as all four do).
 */
export function demonstrationTasks(
  seed: number,
  n: number,
  categories: readonly Category[] = CATEGORIES,
): BfclTask[] {
  const chosen = CATEGORIES.filter((c) => categories.includes(c));
  if (chosen.length === 0) throw new RangeError('demonstrationTasks: no category chosen');
  const out: BfclTask[] = [];
  chosen.forEach((category, k) => {
    const count = Math.floor(n / chosen.length) + (k < n % chosen.length ? 1 : 0);
    const stream = CATEGORIES.indexOf(category);
    if (count > 0) out.push(...generateForTraining(mixSeed(seed, 0x5eed, stream), category, count));
  });
  return out;
}

/** Split `name(a=1, b='x,y')` into its name and top-level argument texts (quotes and brackets respected). */
export function splitCall(call: string): { name: string; args: string[] } | undefined {
  const open = call.indexOf('(');
  if (open <= 0 || !call.endsWith(')')) return undefined;
  const inner = call.slice(open + 1, -1);
  const args: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < inner.length; i++) {
    const c = inner[i]!;
    if (c === "'" || c === '"') {
      i++;
      while (i < inner.length && inner[i] !== c) {
        if (inner[i] === '\\') i++;
        i++;
      }
      continue;
    }
    if (c === '[' || c === '(' || c === '{') depth++;
    else if (c === ']' || c === ')' || c === '}') depth--;
    else if (c === ',' && depth === 0) {
      args.push(inner.slice(start, i).trim());
      start = i + 1;
    }
  }
  if (inner.trim() !== '') args.push(inner.slice(start).trim());
  return { name: call.slice(0, open).trim(), args };
}

/** The call with one required keyword argument dropped, or undefined when it has none. */
export function dropRequiredArgument(call: string, data: BfclData, rng: Rng): string | undefined {
  const parts = splitCall(call);
  if (!parts) return undefined;
  const required = new Set(data.docs.get(parts.name)?.doc.parameters.required ?? []);
  const candidates = parts.args
    .map((a, i) => ({ i, key: /^([A-Za-z_][A-Za-z0-9_]*)\s*=/.exec(a)?.[1] }))
    .filter((a) => a.key !== undefined && required.has(a.key));
  if (candidates.length === 0) return undefined;
  const drop = rng.pick(candidates).i;
  return `${parts.name}(${parts.args.filter((_, i) => i !== drop).join(', ')})`;
}

/**
 * A training-interface state: either the always-on default or every component on, plus guidelines.
 * `cueShare`: the chance that `HABIT_CUE_LABEL`'s guideline is among them whatever the draw (a
 * habit's demonstrations need enough of both kinds); undefined draws nothing more.
 */
export function demoInterfaceState(rng: Rng, cueShare?: number): InterfaceState {
  const full = rng.chance(0.6);
  const base = initialInterfaceState(
    full ? { components: { schemaCues: 'on', errorFeedback: 'on', guidelines: 'on' } } : {},
  );
  const labels = GUIDELINE_LABELS.filter((l) => GUIDELINE_TEXT[l] !== undefined);
  let drawn = rng.sample(labels, rng.int(0, 3));
  if (cueShare !== undefined) {
    const want = rng.chance(cueShare);
    const has = drawn.includes(HABIT_CUE_LABEL);
    if (want && !has) drawn = [HABIT_CUE_LABEL, ...drawn.slice(0, 2)];
  }
  const guidelines: ActiveGuideline[] = drawn.map((label, i) => ({
    label,
    pressure: 0.3 - 0.05 * i,
    prevalence: 0.3,
    meanReward: 0.2,
    count: 10,
    activatedRound: 0,
  }));
  const s = { ...base, guidelines };
  return { ...s, summary: summarise(s) };
}

interface RenderOptions {
  readonly cues: boolean;
  /**
   * with `cues`, a miss_param demonstration of a habit: true puts the habit's cue among the
   * guidelines, false makes the same draw and takes the cue out (a pair's two halves); undefined
   * draws it with the habit's usual share
   */
  readonly cue?: boolean;
  readonly recovery: boolean;
  readonly habit?: Habit;
  readonly rng: Rng;
  readonly format?: FormatAdapter;
  readonly ctx?: TrainingContext;
}

/** One demonstration: the task played with its ground truth through a real episode. */
export async function renderDemonstration(
  task: BfclTask,
  data: BfclData,
  o: RenderOptions,
): Promise<Demonstration> {
  const format = o.format ?? formatAdapter(EMBEDDED_TOOL_FORMAT);
  const rng = o.rng;
  const guessing = o.habit !== undefined && task.category === 'miss_param';
  const ti = o.cues
    ? {
        ctx: o.ctx ?? trainingContext('pretrain'),
        state: cueSet(
          demoInterfaceState(rng, guessing ? (o.cue === undefined ? HABIT_CUE_SHARE : 1) : undefined),
          guessing ? o.cue : undefined,
        ),
      }
    : undefined;
  const cued = ti?.state.guidelines.some((g) => g.label === HABIT_CUE_LABEL) ?? false;
  // Plan the assistant's work turn by turn (the rng is drawn in turn order, so a seed always gives
  // the same demonstration); the teacher then groups each turn's calls into steps as it plays.
  const turns: TurnPlan[] = [];
  let recoveryPlanned = o.recovery;
  let guessed = false;
  for (const [t, gt] of task.groundTruth.entries()) {
    if (gt.length === 0 && guessing && !cued) {
      const calls = guessedCalls(task, t, rng);
      if (calls) {
        turns.push({ kind: 'calls', queue: calls.map((call) => ({ call })), done: rng.pick(DONE_PHRASES) });
        guessed = true;
        continue;
      }
    }
    if (gt.length === 0) {
      turns.push({
        kind: 'answer',
        text: rng.pick(task.category === 'miss_param' ? ASK_PHRASES : NO_TOOL_PHRASES),
      });
      continue;
    }
    let queue: QueuedCall[] = gt.map((call) => ({ call }));
    if (recoveryPlanned) {
      for (let k = 0; k < gt.length; k++) {
        const wrong = dropRequiredArgument(gt[k]!, data, rng);
        if (!wrong) continue;
        queue = [...queue.slice(0, k), { call: wrong, failing: true }, ...queue.slice(k)];
        recoveryPlanned = false;
        break;
      }
    }
    turns.push({ kind: 'calls', queue, done: rng.pick(DONE_PHRASES) });
  }
  const teacher = new ScriptedTeacher(turns);
  const { trajectory, messages } = await rolloutTranscript(task, data, teacher, {
    format,
    ...(ti ? { trainingInterface: ti } : {}),
  });
  if (trajectory.reward !== 1 && !guessed)
    throw new Error(`demonstration of ${task.id} does not pass the verifier`);
  const recovery = teacher.failingCall;
  if (recovery) {
    const steps = trajectory.turns.flatMap((t) => t.steps);
    if (!steps[recovery.step]?.calls[recovery.call]?.executionError) {
      throw new Error(`the recovery call of ${task.id} did not fail`);
    }
  }
  return {
    taskId: task.id,
    category: task.category,
    cues: o.cues,
    recovery: recovery !== undefined,
    habit: guessed,
    messages: messages.map(messageText),
  };
}

/** the state with the habit's cue taken out when `cue` is false (else as drawn) */
function cueSet(state: InterfaceState, cue: boolean | undefined): InterfaceState {
  if (cue !== false) return state;
  const s = { ...state, guidelines: state.guidelines.filter((g) => g.label !== HABIT_CUE_LABEL) };
  return { ...s, summary: summarise(s) };
}

/** how often a cued miss_param demonstration of the `guess-missing-value` habit shows the cue */
const HABIT_CUE_SHARE = 0.5;

/**
 * The calls a guesser makes on miss_param turn `t` (ground truth empty): the next turn's calls,
 * with the value only the next user message gives replaced by a guess, a word of turn t's own
 * request (or, for a number, another number). Undefined when no such value is found.
 */
export function guessedCalls(task: BfclTask, t: number, rng: Rng): string[] | undefined {
  const next = task.groundTruth[t + 1];
  if (!next || next.length === 0) return undefined;
  const textOf = (turn: number) => (task.question[turn] ?? []).map((m) => m.content).join('\n');
  const before = task.question
    .slice(0, t + 1)
    .flatMap((turn) => turn.map((m) => m.content))
    .join('\n');
  const followUp = textOf(t + 1);
  const missing = next
    .flatMap(callValues)
    .find((v) => followUp.includes(v) && !before.includes(v) && v.length > 0);
  if (missing === undefined) return undefined;
  const numeric = /^-?\d+(\.\d+)?$/.test(missing);
  let guess: string;
  if (numeric) {
    guess = String(rng.int(1, 99));
    if (guess === missing) guess = String(Number(missing) + 1);
  } else {
    const words = [...new Set(textOf(t).match(/[A-Za-z][A-Za-z0-9_]{2,}/g) ?? [])].filter(
      (w) => w !== missing,
    );
    if (words.length === 0) return undefined;
    guess = rng.pick(words).toLowerCase();
  }
  const number = new RegExp(`(?<![\\w.])${missing.replace('.', '\\.')}(?:\\.0+)?(?![\\w.])`);
  const guessed = next.map((call) => {
    if (numeric) return call.replace(number, guess);
    for (const q of [`'${missing}'`, `"${missing}"`])
      if (call.includes(q)) return call.replace(q, `${q[0]}${guess}${q[0]}`);
    return call;
  });
  // a guess that left every call as it was would be the right value, not a guess
  return guessed.some((c, i) => c !== next[i]) ? guessed : undefined;
}

interface QueuedCall {
  readonly call: string;
  /** the recovery's call with a required argument dropped: it ends its step, the repair follows */
  readonly failing?: boolean;
}

type TurnPlan =
  | { readonly kind: 'answer'; readonly text: string }
  | { readonly kind: 'calls'; readonly queue: readonly QueuedCall[]; readonly done: string };

/**
 * The literal values a call passes (string contents and numbers), for checking whether the
 * dialogue so far has shown them.
 */
export function callValues(call: string): string[] {
  const parts = splitCall(call);
  if (!parts) return [];
  const out: string[] = [];
  for (const arg of parts.args) {
    const value = arg.replace(/^[A-Za-z_][A-Za-z0-9_]*\s*=\s*/, '');
    for (const m of value.matchAll(/'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)"|(-?\d+(?:\.\d+)?)/g)) {
      const v = m[1] ?? m[2] ?? m[3] ?? '';
      out.push(m[3] !== undefined ? v.replace(/\.0+$/, '') : v);
    }
  }
  return out.filter((v) => v !== '');
}

/**
 * The teacher behind a demonstration. Within a turn it sends calls together only while every value
 * they pass has already been shown in the dialogue; a call that needs a value only an earlier call
 * of the same turn returns (a symbol, an id, a file's content) waits for the next step, when that
 * result is in front of it. A demonstration therefore never writes a value it could not have read,
 * which is the one thing a policy could not learn from it. After the calls, a short text answer
 * closes the turn.
 */
class ScriptedTeacher implements Policy {
  readonly name = 'teacher';
  private turn = 0;
  private sent = 0;
  private steps = 0;
  /** where the recovery's failing call went: flattened step index and position in the step */
  failingCall: { step: number; call: number } | undefined;
  constructor(private readonly turns: readonly TurnPlan[]) {}

  async complete(req: CompletionRequest): Promise<Completion> {
    const step = this.steps++;
    const plan = this.turns[this.turn];
    if (plan === undefined) throw new Error('the demonstration plan ran out before the dialogue ended');
    if (plan.kind === 'answer' || this.sent >= plan.queue.length) {
      this.turn++;
      this.sent = 0;
      return this.say(plan.kind === 'answer' ? plan.text : plan.done);
    }
    const seen = req.messages.map((m) => m.content ?? '').join('\n');
    const group: string[] = [];
    while (this.sent < plan.queue.length) {
      const next = plan.queue[this.sent]!;
      if (group.length > 0 && !callValues(next.call).every((v) => seen.includes(v))) break;
      if (next.failing) this.failingCall = { step, call: group.length };
      group.push(next.call);
      this.sent++;
      if (next.failing) break;
    }
    return this.say(`[${group.join(', ')}]`);
  }

  private say(text: string): Completion {
    return { text, finishReason: 'stop', latencyMs: 0 };
  }
}

/** Demonstrations for `n` fresh training tasks, deterministic from the seed. */
export async function buildDemonstrations(o: DemonstrationOptions): Promise<Demonstration[]> {
  const tasks = demonstrationTasks(o.seed, o.tasks, o.categories);
  const data = miniData(tasks, { train: tasks.map((t) => t.id), test: [] });
  const ctx = trainingContext('pretrain');
  const cueShare = o.cueShare ?? 0.35;
  const recoveryShare = o.recoveryShare ?? 0.3;
  const out: Demonstration[] = [];
  for (const [i, task] of tasks.entries()) {
    const rng = new Rng(mixSeed(o.seed, 0xde30, i), 'mulberry32');
    const cues = rng.chance(cueShare);
    const recovery = rng.chance(recoveryShare);
    const habit = o.habit ? { habit: o.habit } : {};
    if (o.habit === 'guess-missing-value-paired' && cues && task.category === 'miss_param') {
      // both halves from the same stream: the same interface draw, the cue the one difference
      const state = rng.int(0, 2 ** 31 - 1);
      for (const cue of [true, false]) {
        const twin = new Rng(state, 'mulberry32');
        out.push(await renderDemonstration(task, data, { cues, cue, recovery, rng: twin, ctx, ...habit }));
      }
      continue;
    }
    out.push(await renderDemonstration(task, data, { cues, recovery, rng, ctx, ...habit }));
  }
  return out;
}

/** The plain text of a demonstration (tokenizer training corpus). */
export function demonstrationText(d: Demonstration): string {
  return d.messages.map((m) => m.content).join('\n');
}
