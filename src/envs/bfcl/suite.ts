/**
 * BFCL multi-turn (and the mini suite, which has BFCL's shape) behind the one episode interface:
 * a BFCL episode played one agent message at a time. Calls run as the official loop runs them;
 * a message without calls ends the turn and opens the next user turn, or ends the task; the
 * step limit's forced quit ends it too. The verdict is the official checker's.
 */
import { repr } from '../py/format.js';
import type { AgentCall, AgentInput, AgentMessage, Episode, Observation, Opening, Suite } from '../suite.js';
import type { BfclData } from './data/tasks.js';
import { BfclEpisode, type EpisodeOptions, type TurnObservation } from './episode.js';

/** `name(k=repr(v), ...)`: the call string BFCL's executor runs, from a structured call. */
export function callStringOf(call: AgentCall): string {
  return `${call.name}(${[...call.arguments].map(([k, v]) => `${String(k)}=${repr(v)}`).join(',')})`;
}

function turnInputs(obs: TurnObservation): AgentInput[] {
  return obs.messages.map((m) => ({ kind: 'user', content: m.content }));
}

export class BfclSuiteEpisode implements Episode {
  readonly episode: BfclEpisode;
  constructor(
    readonly taskId: string,
    data: BfclData,
    options: EpisodeOptions = {},
  ) {
    const task = data.byId.get(taskId);
    if (!task) throw new Error(`no BFCL task ${taskId}`);
    this.episode = new BfclEpisode(task, data, options);
  }

  async open(): Promise<Opening> {
    const obs = this.episode.observe();
    return { inputs: turnInputs(obs), done: false, tools: obs.tools };
  }

  async send(message: AgentMessage): Promise<Observation> {
    const ep = this.episode;
    if (message.calls.length > 0) {
      const outcome = ep.act(message.calls.map(callStringOf));
      const inputs: AgentInput[] = outcome.results.map((content, i) => ({
        kind: 'tool',
        callId: message.calls[i]!.id,
        name: message.calls[i]!.name,
        content,
        error: false,
      }));
      return outcome.status === 'force_quit'
        ? { inputs, done: true, reason: 'force_quit' }
        : { inputs, done: false };
    }
    ep.act([]);
    if (!ep.nextTurn()) return { inputs: [], done: true, reason: 'finished' };
    const obs = ep.observe();
    return {
      inputs: turnInputs(obs),
      done: false,
      ...(obs.functionsAdded
        ? { toolsAdded: obs.tools.slice(obs.tools.length - obs.functionsAdded.length) }
        : {}),
    };
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
  options: EpisodeOptions = {},
): Suite {
  const tasks = data.tasks
    .filter((t) => !taskIds || taskIds.has(t.id))
    .map((t) => ({ id: t.id, group: t.category }));
  return {
    name: data.suite,
    groups: [...new Set(tasks.map((t) => t.group))],
    tasks,
    episode: (id) => new BfclSuiteEpisode(id, data, options),
  };
}
