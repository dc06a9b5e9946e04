/**
 * One environment instance of the service: a BFCL episode played one assistant message at a
 * time, the way `bfcl/rollout.ts` plays it in process (same recorder, same formats, same
 * interface calls), turned inside out so that a remote trainer holds the policy.
 *
 * The observation after each step is what the rollout loop would append to the chat: tool
 * results in the format's shape, the environment's answer to output that does not parse (the
 * policy may retry, each try counting toward the step limit), the next user turn or the
 * miss_func reveal, and `[CONVERSATION_COMPLETED]` at the end.
 */
import type { ConversationView } from '../agent/conversation.js';
import type { FormatAdapter } from '../agent/format.js';
import { formatAdapter } from '../agent/formats/index.js';
import { interfaceView, type TrainingInterface } from '../bfcl/interface-view.js';
import { EpisodeRecorder, type StepMeta } from '../bfcl/recorder.js';
import type { CallRecorder } from '../bfcl/trajectory.js';
import type { BfclData, BfclTask } from '../envs/bfcl/data/tasks.js';
import { ADDITIONAL_FUNCTION_MESSAGE, type TurnObservation } from '../envs/bfcl/episode.js';
import { BfclSuiteEpisode } from '../envs/bfcl/suite.js';
import { toOpenAiTool } from '../envs/bfcl/tools.js';
import type { OpenAiTool } from '../envs/tools.js';
import type { ChatMessage, Completion, NativeToolCall } from '../policy/policy.js';
import { diagnose, type TurnDiagnosis } from '../seal/diagnosis.js';
import { COMPONENTS, type InterfaceState, promptView } from '../seal/interface.js';
import type { Label } from '../seal/labels.js';
import type { Trajectory } from '../seal/trajectory.js';
import { HttpError } from './errors.js';
import type { AssistantMessage, InstanceOptions } from './protocol.js';
import type { SessionSeal } from './seal-state.js';

/** The reference's end-of-conversation observation. */
export const CONVERSATION_COMPLETED = '[CONVERSATION_COMPLETED]';

export interface StepData {
  readonly state: readonly ChatMessage[];
  readonly reward: number;
  readonly is_terminated: boolean;
  readonly info: Record<string, unknown>;
}

interface Verdict {
  readonly steps: number;
  readonly trajectory: Trajectory;
  readonly diagnosis: readonly TurnDiagnosis[];
  readonly labels: readonly Label[];
}

/** The shared interface with the components this instance switched off set to `off`. */
function instanceInterface(state: InterfaceState, options: InstanceOptions): InterfaceState {
  const components = { ...state.components };
  for (const c of COMPONENTS) if (!options.components[c]) components[c] = 'off';
  return { ...state, components };
}

function completionOf(msg: AssistantMessage): Completion {
  const toolCalls: NativeToolCall[] = (msg.tool_calls ?? []).map((tc, i) => ({
    id: tc.id ?? `call_${i}`,
    type: 'function',
    function: {
      name: tc.function.name,
      arguments:
        typeof tc.function.arguments === 'string'
          ? tc.function.arguments
          : JSON.stringify(tc.function.arguments ?? {}),
    },
  }));
  return { text: msg.content ?? '', ...(toolCalls.length ? { toolCalls } : {}), latencyMs: 0 };
}

/**
 * A bounded memo of rendered text for one generation (what the shared interface shows): texts
 * of an earlier view are asked for again only by instances switching components off, so a new
 * generation starts empty, and a full cache is cleared whole (the working set is small: tool
 * sets x variants).
 */
export class TextCache {
  private readonly map = new Map<string, RenderedText>();
  private generation: string | undefined;
  constructor(private readonly limit = 4096) {}

  get(generation: string, key: string, make: () => string): RenderedText {
    if (generation !== this.generation) {
      this.map.clear();
      this.generation = generation;
    }
    let v = this.map.get(key);
    if (v === undefined) {
      if (this.map.size >= this.limit) this.map.clear();
      const text = make();
      v = { text, json: JSON.stringify(text) };
      this.map.set(key, v);
    }
    return v;
  }
}

/** A rendered text and its JSON string literal: a system prompt takes longer to encode than to look up. */
export interface RenderedText {
  readonly text: string;
  readonly json: string;
}

/** Stands for the system prompt in `/create`'s data until its encoded text is spliced in. */
const SYSTEM_SLOT = '\u0000system prompt\u0000';
const SYSTEM_SLOT_JSON = JSON.stringify(SYSTEM_SLOT);

/** What all instances of one server share. */
export interface SessionShared {
  readonly recorder: CallRecorder;
  readonly seal: SessionSeal;
  readonly prompts: TextCache;
}

export class ServeSession {
  private readonly rec: EpisodeRecorder;
  /** the episode the caller's messages are played into, traced by `rec` */
  private readonly episode: BfclSuiteEpisode;
  private readonly format: FormatAdapter;
  private readonly ti: TrainingInterface | undefined;
  private steps = 0;
  private terminated = false;
  private verdict: Verdict | undefined;
  private weight: number | undefined;

  private readonly seal: SessionSeal;
  /** what this instance's interface shows in its prompt and tools */
  private readonly view: string;
  /** the interface as this instance shows it, as the rollout loop shows it */
  private readonly shown: ConversationView | undefined;

  constructor(
    readonly id: string,
    readonly task: BfclTask,
    private readonly data: BfclData,
    readonly options: InstanceOptions,
    private readonly shared: SessionShared,
  ) {
    const seal = shared.seal;
    this.seal = seal;
    this.rec = new EpisodeRecorder(task, data, { recorder: shared.recorder });
    this.episode = new BfclSuiteEpisode(this.rec.episode, {
      onUnparsed: options.onParseError === 'reply' ? 'reply' : 'end_turn',
      onStep: (step) => this.rec.played(step),
    });
    // python lists: training instances read them leniently (positional arguments bound, a list
    // inside prose found), as the project's training rollouts do; validation instances by BFCL's
    // official prompting rule, as strict evaluation does
    this.format = formatAdapter(options.format, options.validation ? 'official' : 'lenient');
    this.ti = options.validation
      ? undefined
      : { ctx: seal.ctx, state: instanceInterface(seal.interface, options) };
    this.view = this.ti ? promptView(this.ti.ctx, this.ti.state) : 'none';
    this.shown = this.ti ? interfaceView(this.ti, this.ti.state, this.format, this.rec) : undefined;
  }

  get finished(): boolean {
    return this.terminated;
  }

  private shownTools(tools: readonly OpenAiTool[]): OpenAiTool[] {
    return this.shown ? [...this.shown.tools(tools)] : [...tools];
  }

  /** The current turn's opening: its user messages in one, or the miss_func reveal. */
  private turnMessages(): ChatMessage[] {
    const obs = this.rec.episode.observe();
    if (obs.functionsAdded)
      return [
        {
          role: 'user',
          content: this.format.addedFunctionsMessage(
            obs.functionsAdded.map(toOpenAiTool),
            ADDITIONAL_FUNCTION_MESSAGE,
          ),
        },
      ];
    // The reference's clients expect exactly one user message per observation.
    return [{ role: 'user', content: obs.messages.map((m) => m.content).join('\n\n') }];
  }

  /** Native policies get the tools in the request, not the prompt: they travel in `info.tools`. */
  private toolsInfoField(): { tools?: OpenAiTool[] } {
    if (this.options.format !== 'native') return {};
    return { tools: this.shownTools(this.rec.episode.observe().tools) };
  }

  /**
   * `/create`'s data as JSON text: the system prompt with the tools in this format, the first
   * user turn, info. The prompt (~27 KB of tool schemas) goes in encoded once per cache entry:
   * encoding it took longer than all the rest of a /create.
   */
  startJson(): string {
    const first = this.rec.episode.observe();
    const system = this.shared.prompts.get(this.seal.promptView, this.promptKey(first.functions), () => {
      const base = this.format.systemPrompt(this.shownTools(first.tools));
      return this.shown ? this.shown.system(base) : base;
    });
    // The slot is the first string written: `state` is the first key and the prompt its first message.
    return JSON.stringify(this.opening(first)).replace(SYSTEM_SLOT_JSON, () => system.json);
  }

  private opening(first: TurnObservation): StepData {
    return {
      state: [{ role: 'system', content: SYSTEM_SLOT }, ...this.turnMessages()],
      reward: 0,
      is_terminated: false,
      info: {
        instance_id: this.id,
        task_id: this.task.id,
        test_id: this.task.id,
        category: this.task.category,
        tools_count: first.functions.length,
        questions_count: this.task.question.length,
        format: this.options.format,
        mode: this.options.validation ? 'validation' : 'train',
        interface_round: this.ti ? this.ti.state.round : null,
        ...this.toolsInfoField(),
      },
    };
  }

  /**
   * What the system prompt depends on: the format, what the interface shows (not its round:
   * rounds that change nothing visible, the common case, keep their prompts) and the tools.
   * Rendering it is the costliest part of a /create.
   */
  private promptKey(functions: readonly { readonly name: string }[]): string {
    return `${this.options.format}|${this.view}|${functions.map((f) => f.name).join(',')}`;
  }

  /** One assistant message in, the environment's answer out. */
  step(msg: AssistantMessage): StepData {
    if (this.terminated)
      throw new HttpError(
        409,
        `instance ${this.id} has finished its episode; /evaluate or /release it, or /create it again`,
      );
    const completion = completionOf(msg);
    const decoded = this.format.decode(completion);
    const meta: StepMeta = { rawText: completion.text, latencyMs: 0 };
    this.steps++;
    this.verdict = undefined;
    const base = { turn: this.rec.episode.turn, step: this.steps };

    const played = this.episode.play({
      text: null,
      calls: [],
      ...(decoded.kind === 'calls' ? { callText: decoded.calls } : {}),
      ...(decoded.kind === 'parse_error' ? { unparsed: decoded.error } : {}),
      meta,
    });

    if (decoded.kind === 'calls') {
      const records = this.rec.lastStep()!.calls;
      const results = played.inputs.flatMap((i) => (i.kind === 'tool' ? [i.content] : []));
      const view = this.shown;
      const shown = view ? results.map((r, i) => view.toolResult(r, decoded.calls[i]!, i)) : results;
      const state = this.format.toolResultMessages(completion, decoded, shown);
      const failed = records.find((r) => r.executionError);
      const info = {
        ...base,
        calls: decoded.calls,
        ...(failed ? { error_type: 'tool_error', bfcl_error_type: 'tool_error', error: failed.output } : {}),
      };
      if (played.done) return this.end(state, { ...info, force_quit: true });
      return { state, reward: 0, is_terminated: false, info };
    }

    const parseInfo =
      decoded.kind === 'parse_error'
        ? { error_type: 'parse_error', bfcl_error_type: 'parse_error', error: decoded.error }
        : {};
    const refused = played.inputs.find((i) => i.kind === 'format_error');
    if (refused) {
      const help = this.shown?.formatHelp(refused.content);
      const state = this.format.parseErrorMessage(
        completion,
        help ? `${refused.content}\n${help}` : refused.content,
      );
      return { state, reward: 0, is_terminated: false, info: { ...base, ...parseInfo } };
    }

    // A text answer (or output that does not parse, when no retry is left) ended the turn.
    if (played.done)
      return this.end([{ role: 'user', content: CONVERSATION_COMPLETED }], { ...base, ...parseInfo });
    const next = this.rec.episode.observe();
    return {
      state: this.turnMessages(),
      reward: 0,
      is_terminated: false,
      info: {
        ...base,
        ...parseInfo,
        next_turn: next.turn,
        ...(next.functionsAdded ? { functions_added: next.functionsAdded.map((f) => f.name) } : {}),
        ...(next.functionsAdded ? this.toolsInfoField() : {}),
      },
    };
  }

  private end(state: readonly ChatMessage[], info: Record<string, unknown>): StepData {
    this.terminated = true;
    return { state, reward: this.judge().trajectory.reward, is_terminated: true, info };
  }

  /** The official verdict on what was played so far, diagnosed; recomputed only after new steps. */
  private judge(): Verdict {
    if (this.verdict?.steps === this.steps) return this.verdict;
    const trajectory = this.rec.finish();
    const diagnosis = diagnose(trajectory, (name) => this.data.docs.get(name)?.className);
    this.verdict = { steps: this.steps, trajectory, diagnosis, labels: diagnosis.map((d) => d.label) };
    return this.verdict;
  }

  /**
   * `/evaluate`: the sparse verifier score, or the dense report. A training rollout joins the
   * server's failure profile once, at its first evaluation, with the weight w_j it then gets.
   */
  evaluate(sparse: boolean): number | Record<string, unknown> {
    const v = this.judge();
    const t = v.trajectory;
    if (this.weight === undefined) {
      this.weight = this.seal.weightOf(v.labels);
      if (this.ti)
        this.seal.observe({
          instance_id: this.id,
          task_id: this.task.id,
          category: this.task.category,
          reward: t.reward,
          labels: v.labels,
          weight: this.weight,
          round: this.ti.state.round,
        });
    }
    if (sparse) return t.reward;
    const scorable = t.turns.filter((x) => x.check.checked);
    const irrelevance = t.turns.filter((x) => !x.check.checked);
    const passed = scorable.filter((x) => x.check.passed === true).length;
    const passedIrrelevance = v.labels.filter((l) => l === 'correct_abstention').length;
    return {
      accuracy: t.reward,
      completed: this.terminated,
      bfcl_progress: scorable.length ? passed / scorable.length : 0,
      bfcl_progress_with_irrelevance: t.turns.length ? (passed + passedIrrelevance) / t.turns.length : 0,
      bfcl_progress_info: {
        passed_turns: passed,
        scorable_turns: scorable.length,
        passed_irrelevance_turns: passedIrrelevance,
        irrelevance_turns: irrelevance.length,
      },
      labels: v.labels,
      diagnosis: v.diagnosis.map((d) => ({
        turn: d.turn,
        label: d.label,
        candidates: d.candidates,
        ...(d.recovered ? { recovered: true } : {}),
      })),
      weight: this.weight,
      ...(t.errorType ? { error_type: t.errorType } : {}),
      ...(t.checkerError ? { checker_error: t.checkerError } : {}),
      force_quit: t.forceQuit,
      task_id: this.task.id,
      category: this.task.category,
      mode: this.options.validation ? 'validation' : 'train',
      interface_round: this.ti ? this.ti.state.round : null,
    };
  }

  /** `/get_info`: the tools of the current turn, as the reference lists them. */
  toolsInfo(): string {
    const names = this.rec.episode.observe().functions.map((f) => `- ${f.name}`);
    return `Available tools:\n${names.join('\n')}`;
  }
}
