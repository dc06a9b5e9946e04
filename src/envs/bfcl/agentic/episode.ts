/**
 * One entry of a BFCL v4 agentic category (a memory question, a memory prerequisite conversation,
 * a web search question) as an episode of the one episode interface, played as the reference's
 * inference pipeline plays it:
 *
 * - every memory entry opens with the reference's memory system prompt (the scenario's setting,
 *   then the memory as it is at the entry's start); questions add the answer-format prompt after
 *   it, web search questions have that prompt alone; these are the episode's instructions, which
 *   follow the format's own system prompt as the reference's prompting models have them;
 * - the entry starts from its scenario's memory (the snapshot its suite hands it) and, for a
 *   prerequisite, leaves the memory it ends with in its record for the next one;
 * - web search: `show_snippet` false for web_search_no_snippet;
 * - a turn's steps go on while the agent calls tools; a message without calls (its text) ends the
 *   turn; a turn past the step limit (BFCL: 20) that still calls ends the entry.
 *
 * The record is the BFCL result shape `seal verify` scores (turn -> step: the call strings that
 * ran, or the text that ended the turn); a question's verdict is the reference's agentic checker.
 */
import { jsonDumps } from '../../py/format.js';
import { parsePyJson } from '../../py/json.js';
import type { PyDict } from '../../py/values.js';
import type { AgentInput, AgentMessage, Episode, Observation, Opening, Verdict } from '../../suite.js';
import type { OpenAiTool } from '../../tools.js';
import type { ClassName } from '../apis/api.js';
import type { MemoryKvInstance } from '../apis/memoryKv.js';
import type { MemoryRecSumInstance } from '../apis/memoryRecSum.js';
import type { MemoryVectorInstance } from '../apis/memoryVector.js';
import { MAX_STEPS_PER_TURN } from '../episode.js';
import { TaskEnvironment } from '../executor.js';
import { callStringOf } from '../suite.js';
import { type AgenticCheck, checkAgenticResult } from './checker.js';
import {
  AGENTIC_RESPONSE_FORMAT_PROMPT,
  type AgenticCategory,
  type AgenticTask,
  type MemoryScenario,
} from './data.js';

/** The reference's setting of each memory scenario. */
export const MEMORY_AGENT_SETTINGS: Readonly<Record<MemoryScenario, string>> = {
  student:
    'You are an academic-support assistant for college student. Remember key personal and academic details discussed across sessions, and draw on them to answer questions or give guidance.',
  customer:
    'You are a general customer support assistant for an e-commerce platform. Your task is to understand and remember information that can be used to provide information about user inquiries, preferences, and offer consistent, helpful assistance over multiple interactions.',
  finance:
    'You are a high-level executive assistant supporting a senior finance professional. Retain and synthesize both personal and professional information including facts, goals, prior decisions, and family life across sessions to provide strategic, context-rich guidance and continuity.',
  healthcare:
    'You are a healthcare assistant supporting a patient across appointments. Retain essential medical history, treatment plans, and personal preferences to offer coherent, context-aware guidance and reminders.',
  notetaker:
    'You are a personal organization assistant. Capture key information from conversations, like tasks, deadlines, and preferences, and use it to give reliable reminders and answers in future sessions.',
};

const CORE_ARCHIVAL_PROMPT = (setting: string, content: string) => `${setting}

You have access to an advanced memory system, consisting of two memory types 'Core Memory' and 'Archival Memory'. Both type of memory is persistent across multiple conversations with the user, and can be accessed in a later interactions. You should actively manage your memory data to keep track of important information, ensure that it is up-to-date and easy to retrieve to provide personalized responses to the user later.

The Core memory is limited in size, but always visible to you in context. The Archival Memory has a much larger capacity, but will be held outside of your immediate context due to its size.

Here is the content of your Core Memory from previous interactions:
${content}
`;

const UNIFIED_PROMPT = (setting: string, content: string) => `${setting}

You have access to an advanced memory system, which is persistent across multiple conversations with the user, and can be accessed in a later interactions. You should actively manage your memory data to keep track of important information, ensure that it is up-to-date and easy to retrieve to provide personalized responses to the user later.

Here is the content of your memory system from previous interactions:
${content}
`;

export const classOf = (c: AgenticCategory): ClassName =>
  c === 'memory_kv'
    ? 'MemoryAPI_kv'
    : c === 'memory_vector'
      ? 'MemoryAPI_vector'
      : c === 'memory_rec_sum'
        ? 'MemoryAPI_rec_sum'
        : 'WebSearchAPI';

/** The reference's `_dump_core_memory_to_context` of each backend. */
function memoryContent(env: TaskEnvironment, cls: ClassName): string {
  const inst = env.instances.get(cls);
  if (cls === 'MemoryAPI_rec_sum') {
    const m = (inst as MemoryRecSumInstance).memory;
    return m ? m : 'There is no content in the memory at this point.';
  }
  if (cls === 'MemoryAPI_kv') {
    const core = (inst as MemoryKvInstance).core.toDict();
    return core.size
      ? jsonDumps(core, { indent: 4 })
      : 'There is no content in the core memory at this point.';
  }
  // the reference's VectorStore has no length, so it is never empty: its store is always dumped
  const store: PyDict = new Map();
  for (const [id, text] of (inst as MemoryVectorInstance).core.store) store.set(BigInt(id), text);
  return jsonDumps(store, { indent: 4 });
}

/** A memory backend's state, in the shape its `snapshot` config takes (JSON). */
export type MemorySnapshot = unknown;

/** What an agentic episode records: the BFCL result, and for a prerequisite the memory it left. */
export interface AgenticRecord {
  readonly id: string;
  /** turn -> step: call strings, or the text that ended the turn */
  readonly result: (string[] | string)[][];
  readonly memory?: MemorySnapshot;
}

type MemoryInstance = MemoryKvInstance | MemoryVectorInstance | MemoryRecSumInstance;

export class AgenticEpisode implements Episode {
  readonly taskId: string;
  private readonly cls: ClassName;
  private env: TaskEnvironment | undefined;
  private readonly result: (string[] | string)[][] = [];
  private turn = 0;
  private steps = 0;
  private ended = false;
  private memoryAfter: MemorySnapshot | undefined;

  constructor(
    readonly task: AgenticTask,
    private readonly tools: readonly OpenAiTool[],
    /** the memory the entry starts from (its scenario's, as the last prerequisite left it) */
    private readonly memory: MemorySnapshot | undefined,
    private readonly maxStepsPerTurn: number = MAX_STEPS_PER_TURN,
  ) {
    this.taskId = task.id;
    this.cls = classOf(task.category);
  }

  async open(): Promise<Opening> {
    const config: Record<string, unknown> = {};
    if (this.memory !== undefined) config.snapshot = this.memory;
    if (this.cls === 'WebSearchAPI') config.show_snippet = this.task.category !== 'web_search_no_snippet';
    this.env = new TaskEnvironment({
      taskId: this.task.id,
      involvedClasses: [this.cls],
      initialConfig: parsePyJson(JSON.stringify({ [this.cls]: config })) as PyDict,
      longContext: false,
    });
    const system: string[] = [];
    const scenario = this.task.scenario;
    if (scenario) {
      const prompt = this.cls === 'MemoryAPI_rec_sum' ? UNIFIED_PROMPT : CORE_ARCHIVAL_PROMPT;
      system.push(prompt(MEMORY_AGENT_SETTINGS[scenario], memoryContent(this.env, this.cls)));
    }
    if (!this.task.prereq) system.push(AGENTIC_RESPONSE_FORMAT_PROMPT);
    return {
      tools: this.tools,
      instructions: system.join('\n\n'),
      inputs: this.turnInputs(),
      done: this.task.question.length === 0,
      ...(this.task.question.length === 0 ? { reason: 'finished' } : {}),
    };
  }

  private turnInputs(): AgentInput[] {
    return (this.task.question[this.turn] ?? []).map((m) =>
      m.role === 'assistant'
        ? { kind: 'assistant', content: m.content }
        : { kind: 'user', content: m.content },
    );
  }

  async send(message: AgentMessage): Promise<Observation> {
    const env = this.env;
    if (!env || this.ended) throw new Error(`${this.taskId}: the episode is not open`);
    if (this.result.length <= this.turn) this.result.push([]);
    const steps = this.result[this.turn]!;
    if (message.calls.length > 0) {
      const calls = message.calls.map(callStringOf);
      steps.push(calls);
      const inputs: AgentInput[] = calls.map((c, i) => ({
        kind: 'tool',
        callId: message.calls[i]!.id,
        name: message.calls[i]!.name,
        content: env.execute(c),
        error: false,
      }));
      this.steps++;
      if (this.steps > this.maxStepsPerTurn) return this.end(inputs, 'force_quit');
      return { inputs, done: false };
    }
    steps.push(message.text ?? '');
    this.turn++;
    this.steps = 0;
    if (this.turn >= this.task.question.length) return this.end([], 'finished');
    return { inputs: this.turnInputs(), done: false };
  }

  private end(inputs: AgentInput[], reason: string): Observation {
    this.ended = true;
    if (this.task.prereq && this.env) {
      const inst = this.env.instances.get(this.cls) as MemoryInstance;
      this.memoryAfter = JSON.parse(jsonDumps(inst.snapshot())) as MemorySnapshot;
    }
    return { inputs, done: true, reason };
  }

  abort(): void {
    this.ended = true;
  }

  /** questions: the agentic checker; a prerequisite scores nothing (it is not a question) */
  verdict(): Verdict {
    if (this.task.prereq) return { reward: 0, solved: false, detail: { prerequisite: true } };
    const check: AgenticCheck = checkAgenticResult(this.result, this.task.possibleAnswers ?? []);
    return { reward: check.valid ? 1 : 0, solved: check.valid, detail: check };
  }

  record(): AgenticRecord {
    return {
      id: this.taskId,
      result: this.result,
      ...(this.memoryAfter !== undefined ? { memory: this.memoryAfter } : {}),
    };
  }
}
