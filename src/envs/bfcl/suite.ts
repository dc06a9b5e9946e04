/**
 * BFCL multi-turn (and the mini suite, which has BFCL's shape) behind the one episode interface:
 * a BFCL episode played one agent message at a time. Calls run as the official loop runs them;
 * a message without calls ends the turn and opens the next user turn, or ends the task; the
 * step limit's forced quit ends it too. Output that did not decode ends the turn as the official
 * inference loop has it, or, under the training protocol, is answered for a retry while the turn
 * has a step left. The verdict is the official checker's.
 */
import { repr } from '../py/format.js';
import type {
  AgentCall,
  AgentInput,
  AgentMessage,
  Episode,
  MessageMeta,
  Observation,
  Opening,
  Suite,
} from '../suite.js';
import type { BfclData } from './data/tasks.js';
import { BfclEpisode, type EpisodeOptions, type TurnObservation } from './episode.js';

/** `name(k=repr(v), ...)`: the call string BFCL's executor runs, from a structured call. */
export function callStringOf(call: AgentCall): string {
  return `${call.name}(${[...call.arguments].map(([k, v]) => `${String(k)}=${repr(v)}`).join(',')})`;
}

/** One step as the episode played it, for a trace kept beside it. */
export interface PlayedStep {
  readonly turn: number;
  /** the calls run; none: the turn ended (a text answer, or output that did not decode) */
  readonly calls: readonly string[];
  readonly results: readonly string[];
  /** the tools the agent could call at this step, by name */
  readonly available: ReadonlySet<string>;
  /** the output did not decode: why */
  readonly unparsed?: string;
  readonly meta: MessageMeta;
}

export interface BfclSuiteOptions extends EpisodeOptions {
  /**
   * Output that did not decode: `end_turn` ends the turn (the official inference loop, strict
   * evaluation); `reply` answers it with the error and lets the agent retry while the turn has a
   * step left (the SEAL env service, training), each retry counting toward the step limit.
   */
  readonly onUnparsed?: 'end_turn' | 'reply';
  /** told of every step played, in order */
  readonly onStep?: (step: PlayedStep) => void;
}

/** the tool a call string names (`a.b(...)` -> `a.b`), for a result whose call had no structured form */
function calleeOf(call: string): string {
  return /^\s*([A-Za-z_][\w.]*)/.exec(call)?.[1] ?? '';
}

function userInputs(obs: TurnObservation): AgentInput[] {
  return obs.messages.map((m) => ({ kind: 'user', content: m.content }));
}

/** The tools revealed with a turn: the last of its tools (held-out functions are appended). */
function revealed(obs: TurnObservation): Pick<Observation, 'toolsAdded'> {
  return obs.functionsAdded
    ? { toolsAdded: obs.tools.slice(obs.tools.length - obs.functionsAdded.length) }
    : {};
}

export class BfclSuiteEpisode implements Episode {
  readonly taskId: string;
  readonly episode: BfclEpisode;
  private readonly onUnparsed: 'end_turn' | 'reply';
  private readonly onStep: ((step: PlayedStep) => void) | undefined;

  /** a task of `data` played afresh, or an episode already made (whose owner keeps its trace) */
  constructor(source: { taskId: string; data: BfclData } | BfclEpisode, options: BfclSuiteOptions = {}) {
    if (source instanceof BfclEpisode) this.episode = source;
    else {
      const task = source.data.byId.get(source.taskId);
      if (!task) throw new Error(`no BFCL task ${source.taskId}`);
      this.episode = new BfclEpisode(task, source.data, options);
    }
    this.taskId = this.episode.task.id;
    this.onUnparsed = options.onUnparsed ?? 'end_turn';
    this.onStep = options.onStep;
  }

  async open(): Promise<Opening> {
    const obs = this.episode.observe();
    return { inputs: userInputs(obs), done: false, tools: obs.tools, ...revealed(obs) };
  }

  async send(message: AgentMessage): Promise<Observation> {
    return this.play(message);
  }

  /** `send` as it runs: nothing in a BFCL step waits (`seal serve` steps its sessions with it). */
  play(message: AgentMessage): Observation {
    const ep = this.episode;
    const meta = message.meta ?? {};
    const turn = ep.turn;
    const available = new Set(ep.functions.map((f) => f.name));
    const { unparsed } = message;
    if (unparsed !== undefined && this.onUnparsed === 'reply' && ep.canRetry) {
      ep.reject();
      this.onStep?.({ turn, calls: [], results: [], available, unparsed, meta });
      return { inputs: [{ kind: 'format_error', content: unparsed }], done: false };
    }
    const calls = unparsed !== undefined ? [] : (message.callText ?? message.calls.map(callStringOf));
    const outcome = ep.act(calls);
    this.onStep?.({
      turn,
      calls,
      results: outcome.results,
      available,
      ...(unparsed !== undefined ? { unparsed } : {}),
      meta,
    });
    if (calls.length > 0) {
      const inputs: AgentInput[] = outcome.results.map((content, i) => ({
        kind: 'tool',
        callId: message.calls[i]?.id ?? `call_${i}`,
        name: message.calls[i]?.name ?? calleeOf(calls[i]!),
        content,
        error: false,
      }));
      return outcome.status === 'force_quit'
        ? { inputs, done: true, reason: 'force_quit' }
        : { inputs, done: false };
    }
    if (!ep.nextTurn()) return { inputs: [], done: true, reason: 'finished' };
    const obs = ep.observe();
    return { inputs: userInputs(obs), done: false, ...revealed(obs) };
  }

  abort(): void {
    this.episode.abort();
  }

  verdict() {
    const r = this.episode.check();
    return { reward: r.valid ? 1 : 0, solved: r.valid, detail: r };
  }

  /** the BFCL result shape: turn -> step -> call strings */
  record(): string[][][] {
    return this.episode.modelResult();
  }
}

/** BFCL's (or the mini suite's) tasks as a suite, grouped by category. */
export function bfclSuite(
  data: BfclData,
  taskIds?: ReadonlySet<string>,
  options: BfclSuiteOptions = {},
): Suite {
  const tasks = data.tasks
    .filter((t) => !taskIds || taskIds.has(t.id))
    .map((t) => ({ id: t.id, group: t.category }));
  return {
    name: data.suite,
    groups: [...new Set(tasks.map((t) => t.group))],
    tasks,
    episode: (taskId) => new BfclSuiteEpisode({ taskId, data }, options),
  };
}
