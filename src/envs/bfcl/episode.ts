/**
 * An episode plays one BFCL task the way the official inference loop does: user turns in order,
 * the miss_func turn that reveals held-out functions with a fixed user message, any number of
 * steps per turn (a step with no calls ends the turn), and at most 20 executed steps per turn
 * (the 21st forces the whole task to quit, which the checker then fails as force-terminated).
 * Every episode owns its instances; many can run at once.
 */
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
import { type OpenAiTool, toOpenAiTool } from './tools.js';

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

  constructor(
    readonly task: BfclTask,
    private readonly data: BfclData,
    options: { modelName?: string } = {},
  ) {
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
    const messages = this.added
      ? [{ role: 'user' as const, content: ADDITIONAL_FUNCTION_MESSAGE }]
      : this.task.question[this.turnIdx]!;
    return {
      turn: this.turnIdx,
      messages,
      functions,
      tools: functions.map(toOpenAiTool),
      ...(this.added ? { functionsAdded: this.added } : {}),
    };
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
    if (this.stepsThisTurn > MAX_STEPS_PER_TURN) {
      this.forceQuit = true;
      this.phase = 'done';
      return { results, status: 'force_quit' };
    }
    return { results, status: 'continue' };
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
