/**
 * Playing a BFCL v4 agentic category the way the reference's inference pipeline does, for any
 * policy given as one function per step:
 *
 * - memory: per scenario, the prerequisite conversations first, in file order, sharing one memory
 *   (each starts from the snapshot the previous one left); then every question of the scenario,
 *   each from the snapshot the last prerequisite left (questions never change it);
 * - every memory entry opens with the reference's memory system prompt (the scenario's setting,
 *   then the core memory as it is at the entry's start); questions add the answer-format prompt
 *   after it, web search questions have that prompt alone;
 * - web search: `show_snippet` false for web_search_no_snippet;
 * - a turn's steps go on while the policy calls tools; a step without calls (its text) ends the
 *   turn; a turn past the step limit (BFCL: 20) that still calls ends the entry.
 *
 * The result of an entry is the BFCL result shape `seal verify` scores: turn -> step, a step being
 * the list of call strings that ran, or the text that ended the turn.
 */
import { jsonDumps } from '../../py/format.js';
import { parsePyJson } from '../../py/json.js';
import type { PyDict } from '../../py/values.js';
import type { ClassName } from '../apis/api.js';
import type { MemoryKvInstance } from '../apis/memoryKv.js';
import type { MemoryRecSumInstance } from '../apis/memoryRecSum.js';
import type { MemoryVectorInstance } from '../apis/memoryVector.js';
import { MAX_STEPS_PER_TURN } from '../episode.js';
import { TaskEnvironment } from '../executor.js';
import { type OpenAiTool, toOpenAiTool } from '../tools.js';
import { checkAgenticResult } from './checker.js';
import {
  AGENTIC_RESPONSE_FORMAT_PROMPT,
  type AgenticCategory,
  type AgenticTask,
  isMemoryCategory,
  loadAgenticDocs,
  loadAgenticTasks,
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

export interface AgenticMessage {
  readonly role: 'system' | 'user' | 'assistant' | 'tool';
  readonly content: string;
  /** assistant steps that called tools: the call strings */
  readonly calls?: readonly string[];
}

/** What the policy did in one step: tool calls (decoded to call strings), or a text that ends the turn. */
export interface AgenticStep {
  readonly calls: readonly string[];
  readonly text: string;
}

export type AgenticPolicy = (
  messages: readonly AgenticMessage[],
  tools: readonly OpenAiTool[],
  entry: AgenticTask,
) => Promise<AgenticStep>;

export interface AgenticEntryResult {
  readonly id: string;
  /** turn -> step: call strings, or the text that ended the turn */
  readonly result: (string[] | string)[][];
  /** questions only: the agentic checker's verdict */
  readonly valid?: boolean;
}

const classOf = (c: AgenticCategory): ClassName =>
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

export interface RunAgenticOptions {
  readonly maxStepsPerTurn?: number;
  /** called after each entry (prerequisites too), in order */
  readonly onEntry?: (r: AgenticEntryResult) => void;
}

/** Play one agentic category; the results of its questions (and prerequisites) in the reference's order. */
export async function runAgenticCategory(
  dataDir: string,
  category: AgenticCategory,
  policy: AgenticPolicy,
  options: RunAgenticOptions = {},
): Promise<AgenticEntryResult[]> {
  const cls = classOf(category);
  const tools = loadAgenticDocs(dataDir, isMemoryCategory(category) ? category : 'web_search').map(
    toOpenAiTool,
  );
  const tasks = loadAgenticTasks(dataDir, category);
  const out: AgenticEntryResult[] = [];
  const snapshots = new Map<MemoryScenario, unknown>();
  const ordered = [...tasks.filter((t) => t.prereq), ...tasks.filter((t) => !t.prereq)];
  for (const task of ordered) {
    const config: Record<string, unknown> = {};
    if (task.scenario && snapshots.has(task.scenario)) config.snapshot = snapshots.get(task.scenario);
    if (cls === 'WebSearchAPI') config.show_snippet = category !== 'web_search_no_snippet';
    const env = new TaskEnvironment({
      taskId: task.id,
      involvedClasses: [cls],
      initialConfig: parsePyJson(JSON.stringify({ [cls]: config })) as PyDict,
      longContext: false,
    });
    const r = await playEntry(task, env, cls, tools, policy, options.maxStepsPerTurn ?? MAX_STEPS_PER_TURN);
    if (task.prereq && task.scenario) {
      const inst = env.instances.get(cls) as MemoryKvInstance | MemoryVectorInstance | MemoryRecSumInstance;
      snapshots.set(task.scenario, JSON.parse(jsonDumps(inst.snapshot())));
    }
    const entry: AgenticEntryResult = task.prereq
      ? { id: task.id, result: r }
      : { id: task.id, result: r, valid: checkAgenticResult(r, task.possibleAnswers ?? []).valid };
    options.onEntry?.(entry);
    out.push(entry);
  }
  return out;
}

async function playEntry(
  task: AgenticTask,
  env: TaskEnvironment,
  cls: ClassName,
  tools: readonly OpenAiTool[],
  policy: AgenticPolicy,
  maxSteps: number,
): Promise<(string[] | string)[][]> {
  const messages: AgenticMessage[] = [];
  const system: string[] = [];
  if (task.scenario) {
    const prompt = cls === 'MemoryAPI_rec_sum' ? UNIFIED_PROMPT : CORE_ARCHIVAL_PROMPT;
    system.push(prompt(MEMORY_AGENT_SETTINGS[task.scenario], memoryContent(env, cls)));
  }
  if (!task.prereq) system.push(AGENTIC_RESPONSE_FORMAT_PROMPT);
  if (system.length) messages.push({ role: 'system', content: system.join('\n\n') });
  const result: (string[] | string)[][] = [];
  for (const turn of task.question) {
    messages.push(...turn);
    const steps: (string[] | string)[] = [];
    result.push(steps);
    let forced = false;
    for (let n = 0; ; n++) {
      const step = await policy(messages, tools, task);
      if (step.calls.length === 0) {
        steps.push(step.text);
        messages.push({ role: 'assistant', content: step.text });
        break;
      }
      steps.push([...step.calls]);
      messages.push({ role: 'assistant', content: step.text, calls: step.calls });
      for (const c of step.calls) messages.push({ role: 'tool', content: env.execute(c) });
      if (n + 1 > maxSteps) {
        forced = true;
        break;
      }
    }
    if (forced) break;
  }
  return result;
}
