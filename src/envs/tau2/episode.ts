/**
 * One τ² simulation as an `Episode`: v0.2.0's orchestrator with the agent driven from outside.
 * The environment is set up from the task's initial state, the agent's fixed greeting opens the
 * conversation, and the simulated user answers it (acting on its own tools first where it has
 * them). Each agent message then goes to the environment (tool calls) or to the user (text), as
 * the reference routes it, and the agent is handed back what comes to it.
 *
 * Steps count as the reference counts them: every agent message, every user message and every
 * batch of tool results is one step; at `maxSteps` (200) the conversation ends as `max_steps`,
 * checked after each step, so a stop in the last step is recorded as `max_steps` too. The
 * reference declares `max_errors` (10) but never counts an error in v0.2.0, so
 * `too_many_errors` never happens there; seal keeps that.
 */
import { UserError } from '../../util/errors.js';
import type {
  AgentInput,
  AgentMessage,
  Episode,
  Observation,
  Opening,
  UserModel,
  Verdict,
} from '../suite.js';
import type { RewardInfo, TerminationReason } from './evaluator/reward.js';
import { simulationText } from './results.js';
import type {
  Tau2Environment,
  Tau2Message,
  Tau2ParticipantMessage,
  Tau2Task,
  Tau2ToolCall,
  Tau2ToolMessage,
} from './types.js';
import { flipForUser, isUserStop } from './user.js';

/** The reference's first agent message. */
export const AGENT_GREETING = 'Hi! How can I help you today?';
export const MAX_STEPS = 200;
export const MAX_ERRORS = 10;

export type { TerminationReason };

/** A finished (or ended) simulation in the reference's `SimulationRun` shape, before scoring. */
export interface Tau2Simulation {
  readonly id: string;
  readonly task_id: string;
  readonly start_time: string;
  readonly end_time: string;
  readonly duration: number;
  readonly termination_reason: TerminationReason;
  readonly agent_cost: number | null;
  readonly user_cost: number | null;
  readonly messages: readonly Tau2Message[];
  readonly seed: number | null;
  readonly trial?: number;
}

export interface Tau2EpisodeOptions {
  readonly user: UserModel;
  /** the user model's system prompt (guidelines and this task's scenario) */
  readonly userSystemPrompt: string;
  /** the agent's framing: seal's instructions and the domain policy */
  readonly framing: string;
  readonly maxSteps?: number;
  readonly seed?: number;
  /** the reference's scorer for a finished simulation */
  readonly evaluate: (simulation: Tau2Simulation) => Verdict;
  /** timestamps (tests fix them); default: now, in Python's isoformat */
  readonly clock?: () => Date;
  readonly simulationId?: string;
}

/** Python's `datetime.isoformat()` of a local naive time: `2025-06-01T12:00:00.123000`. */
export function pythonIsoformat(d: Date): string {
  const p = (n: number, w = 2) => String(n).padStart(w, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}.${p(d.getMilliseconds() * 1000, 6)}`;
}

export class Tau2Episode implements Episode {
  private readonly trajectory: Tau2Message[] = [];
  private steps = 0;
  private ended: TerminationReason | undefined;
  private started: Date | undefined;
  private finished: Date | undefined;
  private readonly maxSteps: number;
  private readonly clock: () => Date;
  private agentCost: number | null = null;
  private userCost: number | null = null;
  private callCounter = 0;

  constructor(
    readonly task: Tau2Task,
    private readonly env: Tau2Environment,
    private readonly options: Tau2EpisodeOptions,
  ) {
    this.maxSteps = options.maxSteps ?? MAX_STEPS;
    if (!Number.isInteger(this.maxSteps) || this.maxSteps < 1)
      throw new RangeError(`maxSteps must be a positive integer, got ${this.maxSteps}`);
    this.clock = options.clock ?? (() => new Date());
  }

  get taskId(): string {
    return this.task.id;
  }
  get done(): boolean {
    return this.ended !== undefined;
  }
  get terminationReason(): TerminationReason | undefined {
    return this.ended;
  }
  get messages(): readonly Tau2Message[] {
    return this.trajectory;
  }

  private now(): string {
    return pythonIsoformat(this.clock());
  }

  /** Count a step; at the limit the conversation ends as `max_steps`, whatever ended it in that step. */
  private step(): void {
    this.steps++;
    if (this.steps >= this.maxSteps) this.end('max_steps', true);
  }

  private end(reason: TerminationReason, overwrite = false): void {
    if (this.ended === undefined || overwrite) this.ended = reason;
    this.finished ??= this.clock();
  }

  private setUp(): void {
    const init = this.task.initial_state;
    if (init?.message_history && init.message_history.length > 0)
      throw new UserError(
        `task ${this.task.id} starts from a message history, which seal's τ² runner does not replay yet`,
      );
    const data = init?.initialization_data;
    if (data?.agent_data) this.env.updateDb('assistant', data.agent_data);
    if (data?.user_data) this.env.updateDb('user', data.user_data);
    for (const action of init?.initialization_actions ?? []) this.env.runFunction(action);
    this.env.syncTools();
  }

  private runTools(calls: readonly Tau2ToolCall[]): Tau2ToolMessage[] {
    const out = calls.map((call): Tau2ToolMessage => {
      const r = this.env.respond(call);
      return {
        id: call.id,
        role: 'tool',
        content: r.content,
        requestor: call.requestor,
        error: r.error,
        turn_idx: null,
        timestamp: this.now(),
      };
    });
    this.env.syncTools();
    this.trajectory.push(...out);
    this.step();
    return out;
  }

  /** The user answers whatever came to it last, acting on its tools until it speaks to the agent. */
  private async userTurn(signal?: AbortSignal): Promise<Observation> {
    for (;;) {
      const reply = await this.options.user(
        {
          messages: [
            { role: 'system', content: this.options.userSystemPrompt },
            ...flipForUser(this.trajectory),
          ],
          ...(this.env.userTools().length > 0 ? { tools: this.env.userTools() } : {}),
          ...(this.options.seed !== undefined ? { seed: this.options.seed } : {}),
        },
        signal,
      );
      if (reply.cost !== undefined) this.userCost = (this.userCost ?? 0) + reply.cost;
      const calls = reply.toolCalls.map((c) => ({
        id: c.id,
        name: c.name,
        arguments: c.arguments,
        requestor: 'user' as const,
      }));
      const message: Tau2ParticipantMessage = {
        role: 'user',
        content: reply.content,
        tool_calls: calls.length > 0 ? calls : null,
        turn_idx: null,
        timestamp: this.now(),
        cost: reply.cost ?? null,
        usage: reply.usage ?? null,
        raw_data: null,
      };
      const hasText = message.content !== null && message.content.trim() !== '';
      if (!hasText && calls.length === 0)
        throw new UserError(
          `the user model sent an empty message in task ${this.task.id} (the reference stops the run there too); check the user model`,
        );
      this.trajectory.push(message);
      if (calls.length === 0 && isUserStop(message.content)) this.end('user_stop');
      this.step();
      if (this.done) return { inputs: [], done: true, reason: this.ended! };
      if (calls.length === 0)
        return { inputs: [{ kind: 'user', content: message.content ?? '' }], done: false };
      this.runTools(calls);
      if (this.done) return { inputs: [], done: true, reason: this.ended! };
    }
  }

  async open(signal?: AbortSignal): Promise<Opening> {
    if (this.started) throw new Error('open() called twice');
    this.started = this.clock();
    this.setUp();
    const greeting: Tau2ParticipantMessage = {
      role: 'assistant',
      content: AGENT_GREETING,
      tool_calls: null,
      turn_idx: null,
      timestamp: this.now(),
      cost: 0,
    };
    this.trajectory.push(greeting);
    const first = await this.userTurn(signal);
    const inputs: AgentInput[] = [{ kind: 'assistant', content: AGENT_GREETING }, ...first.inputs];
    return { ...first, inputs, framing: this.options.framing, tools: this.env.agentTools() };
  }

  async send(message: AgentMessage, signal?: AbortSignal): Promise<Observation> {
    if (!this.started) throw new Error('send() before open()');
    if (this.done) throw new Error(`send() after the conversation ended (${this.ended})`);
    const calls: Tau2ToolCall[] = message.calls.map((c) => ({
      id: c.id || `call_${this.callCounter++}`,
      name: c.name,
      arguments: c.arguments,
      requestor: 'assistant',
    }));
    const text = message.text;
    const agentMessage: Tau2ParticipantMessage = {
      role: 'assistant',
      content: text,
      tool_calls: calls.length > 0 ? calls : null,
      turn_idx: null,
      timestamp: this.now(),
    };
    if (calls.length === 0 && (text === null || text.trim() === '')) {
      // the reference's message check raises here and the run stops; seal ends this simulation instead
      this.end('agent_error');
      return { inputs: [], done: true, reason: this.ended! };
    }
    this.trajectory.push(agentMessage);
    this.step();
    if (this.done) return { inputs: [], done: true, reason: this.ended! };
    if (calls.length === 0) return this.userTurn(signal);
    const results = this.runTools(calls);
    if (this.done) return { inputs: [], done: true, reason: this.ended! };
    return {
      inputs: results.map((r, i) => ({
        kind: 'tool',
        callId: r.id,
        name: calls[i]!.name,
        content: r.content ?? '',
        error: r.error,
      })),
      done: false,
    };
  }

  abort(reason: string): void {
    void reason;
    this.end('agent_error');
  }

  /** The simulation in the reference's shape: messages numbered in order, as `get_trajectory` numbers them. */
  simulation(): Tau2Simulation {
    const start = this.started ?? this.clock();
    const end = this.finished ?? this.clock();
    return {
      id: this.options.simulationId ?? `${this.task.id}`,
      task_id: this.task.id,
      start_time: pythonIsoformat(start),
      end_time: pythonIsoformat(end),
      duration: (end.getTime() - start.getTime()) / 1000,
      termination_reason: this.ended ?? 'agent_error',
      agent_cost: this.agentCost,
      user_cost: this.userCost,
      messages: this.trajectory.map((m, i) => ({ ...m, turn_idx: i })),
      seed: this.options.seed ?? null,
    };
  }

  /** add what an agent's sample cost, when its server says */
  addAgentCost(cost: number): void {
    this.agentCost = (this.agentCost ?? 0) + cost;
  }

  private scored: Verdict | undefined;

  /** The reference's score (computed once: the evaluator replays the conversation). */
  verdict(): Verdict {
    this.scored ??= this.options.evaluate(this.simulation());
    return this.scored;
  }

  /**
   * The simulation as the reference's results file writes it (Python's JSON, so that a stored
   * record keeps every Python type), with its reward info when the episode was scored.
   */
  record(): string {
    const sim = this.simulation();
    const info = this.scored?.detail as RewardInfo | undefined;
    return simulationText({
      ...sim,
      timestamp: sim.end_time,
      reward_info: info ?? null,
      trial: sim.trial ?? null,
    });
  }
}
