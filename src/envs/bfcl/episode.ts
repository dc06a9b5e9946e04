/**
 * An episode plays one BFCL task the way the official inference loop does: user turns in order,
 * the miss_func turn that reveals held-out functions with a fixed user message, any number of
 * steps per turn (a step with no calls ends the turn), and a step limit per turn that the episode
 * alone enforces: a turn has `maxStepsPerTurn` steps (BFCL: 20), and a step beyond them that still
 * calls is executed and forces the whole task to quit, which the checker then fails as
 * force-terminated (the official loop's rule: its 21st step quits). Output that did not parse and
 * was answered so the policy may retry (the training protocol) is a step too.
 * Every episode owns its instances; many can run at once.
 */

import type { OpenAiTool } from '../tools.js';
import type { CheckResult } from './checker.js';
import { checkTask } from './checker.js';
import {
  type BfclData,
  type BfclTask,
  type ChatMessage,
  type FunctionDoc,
  isLongContext,
} from './data/tasks.js';
import { TaskEnvironment } from './executor.js';
import { toOpenAiTool } from './tools.js';

/** The official inference loop's step limit per turn, the default of every episode. */
export const MAX_STEPS_PER_TURN = 20;
export const ADDITIONAL_FUNCTION_MESSAGE =
  'I have updated some more functions you can choose from. What about now?';

export interface TurnObservation {
  readonly turn: number;
  /** The user messages that open this turn (the fixed message on the reveal turn). */
  readonly messages: readonly ChatMessage[];
  /** Docs the policy may call this turn, in the reference's order (held-out ones appended when revealed). */
  readonly functions: readonly FunctionDoc[];
  readonly tools: readonly OpenAiTool[];
  /** Set on the miss_func turn that reveals held-out functions. */
  readonly functionsAdded?: readonly FunctionDoc[];
}

export type StepStatus = 'continue' | 'turn_end' | 'force_quit';

export interface StepOutcome {
  readonly results: readonly string[];
  readonly status: StepStatus;
}

export type EpisodePhase = 'in_turn' | 'between_turns' | 'done';

export interface EpisodeOptions {
  /** the model name some instances record (the reference passes it to them) */
  readonly modelName?: string;
  /** steps a turn may take, retries after a parse error included (default: BFCL's 20) */
  readonly maxStepsPerTurn?: number;
}

/**
 * The function docs a policy is shown at `turn`, in the reference's order: the involved classes'
 * docs without the held-out ones, which are appended from their reveal turn on.
 */
export function visibleFunctions(task: BfclTask, data: BfclData, turn: number): FunctionDoc[] {
  const mf = task.missedFunction;
  const held = new Set(mf?.names ?? []);
  const docs = task.involvedClasses
    .flatMap((c) => data.docsByClass.get(c) ?? [])
    .filter((d) => !held.has(d.name));
  if (mf && turn >= mf.turn) docs.push(...mf.names.map((n) => data.docs.get(n)!.doc));
  return docs;
}

/**
 * The messages that open `turn`, as the policy is shown them: the task's own, or on the miss_func
 * turn that reveals held-out functions the fixed message the reference sends instead.
 */
export function turnMessages(task: BfclTask, turn: number): readonly ChatMessage[] {
  return task.missedFunction?.turn === turn
    ? [{ role: 'user', content: ADDITIONAL_FUNCTION_MESSAGE }]
    : (task.question[turn] ?? []);
}

export class BfclEpisode {
  private readonly env: TaskEnvironment;
  private visible: FunctionDoc[];
  private turnIdx = 0;
  private phase: EpisodePhase = 'in_turn';
  private stepsThisTurn = 0;
  private forceQuit = false;
  /** turn -> executed steps -> call strings (the BFCL result-file shape) */
  private readonly steps: string[][][] = [[]];
  private added: FunctionDoc[] | undefined;
  readonly maxStepsPerTurn: number;

  constructor(
    readonly task: BfclTask,
    private readonly data: BfclData,
    options: EpisodeOptions = {},
  ) {
    const limit = options.maxStepsPerTurn ?? MAX_STEPS_PER_TURN;
    if (!Number.isInteger(limit) || limit < 1)
      throw new RangeError(`maxStepsPerTurn must be a positive integer, got ${limit}`);
    this.maxStepsPerTurn = limit;
    const longContext = isLongContext(task);
    this.env = new TaskEnvironment({
      taskId: task.id,
      involvedClasses: task.involvedClasses,
      initialConfig: task.initialConfig,
      longContext,
      ...(longContext ? { constants: data.longContextConstants() } : {}),
      ...(options.modelName ? { modelName: options.modelName } : {}),
    });
    const held = new Set(task.missedFunction?.names ?? []);
    this.visible = task.involvedClasses
      .flatMap((c) => data.docsByClass.get(c) ?? [])
      .filter((d) => !held.has(d.name));
    this.openTurn();
  }

  get turn(): number {
    return this.turnIdx;
  }
  get turnCount(): number {
    return this.task.question.length;
  }
  get status(): EpisodePhase {
    return this.phase;
  }
  get forceQuitted(): boolean {
    return this.forceQuit;
  }
  /** The docs the policy may call now (what `observe()` lists, without building its tools). */
  get functions(): readonly FunctionDoc[] {
    return this.visible;
  }
  /** Steps taken in the current turn: executed ones and rejected ones. */
  get stepsTaken(): number {
    return this.stepsThisTurn;
  }
  /**
   * Whether output that failed to parse now may be answered for a retry: only when a step is left
   * for the retry. Otherwise it ends the turn, as a decode failure does in the official loop.
   */
  get canRetry(): boolean {
    return this.phase === 'in_turn' && this.stepsThisTurn + 1 < this.maxStepsPerTurn;
  }

  private openTurn(): void {
    this.added = undefined;
    const mf = this.task.missedFunction;
    if (mf && mf.turn === this.turnIdx) {
      this.added = mf.names.map((n) => this.data.docs.get(n)!.doc);
      this.visible = visibleFunctions(this.task, this.data, this.turnIdx);
    }
  }

  /** What the policy sees at the start of the current turn. */
  observe(): TurnObservation {
    const functions = [...this.visible];
    return {
      turn: this.turnIdx,
      messages: turnMessages(this.task, this.turnIdx),
      functions,
      tools: functions.map(toOpenAiTool),
      ...(this.added ? { functionsAdded: this.added } : {}),
    };
  }

  /**
   * End the episode where it is, as a forced quit: the policy cannot go on (its sampler refused the
   * next prompt). The turns not played are empty, as after the step limit.
   */
  abort(): void {
    this.forceQuit = true;
    this.phase = 'done';
  }

  /** Run one step's decoded calls. No calls (text answer, decode failure) ends the turn. */
  act(calls: readonly string[]): StepOutcome {
    if (this.phase !== 'in_turn') throw new Error(`act() called while the episode is ${this.phase}`);
    if (calls.length === 0) {
      this.phase = this.turnIdx + 1 < this.turnCount ? 'between_turns' : 'done';
      return { results: [], status: 'turn_end' };
    }
    const results = calls.map((c) => this.env.execute(c));
    this.steps[this.turnIdx]!.push([...calls]);
    this.stepsThisTurn++;
    if (this.stepsThisTurn > this.maxStepsPerTurn) {
      this.forceQuit = true;
      this.phase = 'done';
      return { results, status: 'force_quit' };
    }
    return { results, status: 'continue' };
  }

  /**
   * Count a step whose output did not parse and was answered with an error, leaving the turn open
   * for a retry (the training protocol; the official loop ends the turn instead: `act([])`).
   */
  reject(): void {
    if (!this.canRetry)
      throw new Error(
        `reject() with no step left for a retry (${this.stepsThisTurn} of ${this.maxStepsPerTurn} taken, episode ${this.phase})`,
      );
    this.stepsThisTurn++;
  }

  /** Move to the next user turn; false when the conversation is over. */
  nextTurn(): boolean {
    if (this.phase === 'in_turn') this.act([]);
    if (this.phase === 'done') return false;
    this.turnIdx++;
    this.stepsThisTurn = 0;
    this.steps.push([]);
    this.phase = 'in_turn';
    this.openTurn();
    return true;
  }

  /** The model's calls in the BFCL result shape: turn -> step -> call strings. */
  modelResult(): string[][][] {
    return this.steps.map((t) => t.map((s) => [...s]));
  }

  /** Instance state after everything so far (the executable evidence for diagnosis). */
  environment(): TaskEnvironment {
    return this.env;
  }

  /** The official verdict on what was played (replayed on fresh instances, as the evaluator does). */
  check(): CheckResult {
    return checkTask(this.task, this.modelResult(), this.data);
  }
}
