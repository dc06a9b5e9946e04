/**
 * BFCL v4's agentic categories (memory with three backends, web search with and without
 * snippets), their entry ids and their data, laid out as in gorilla's `bfcl_eval/data`.
 *
 * The ids are the reference's: one question file per kind, its ids rewritten per category
 * (`memory_0-customer-0` -> `memory_kv_0-customer-0`, `web_search_3` -> `web_search_no_snippet_3`),
 * and the prerequisite conversations of a scenario become `memory_kv_prereq_22-student-0`, ...
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ChatMessage, FunctionDoc } from '../data/tasks.js';
import { DataMissingError } from '../data/tasks.js';

export const MEMORY_BACKENDS = ['kv', 'vector', 'rec_sum'] as const;
export type MemoryBackend = (typeof MEMORY_BACKENDS)[number];

export const AGENTIC_CATEGORIES = [
  'web_search_base',
  'web_search_no_snippet',
  'memory_kv',
  'memory_vector',
  'memory_rec_sum',
] as const;
export type AgenticCategory = (typeof AGENTIC_CATEGORIES)[number];

/** Table 2's two groups: web search's two variants, memory's three backends */
export const WEB_SEARCH_CATEGORIES = ['web_search_base', 'web_search_no_snippet'] as const;
export const MEMORY_CATEGORIES = ['memory_kv', 'memory_vector', 'memory_rec_sum'] as const;

export const AGENTIC_TITLES: Record<AgenticCategory, string> = {
  web_search_base: 'Base',
  web_search_no_snippet: 'No Snippet',
  memory_kv: 'KV',
  memory_vector: 'Vector',
  memory_rec_sum: 'Rec Sum',
};

export const MEMORY_SCENARIOS = ['student', 'customer', 'finance', 'healthcare', 'notetaker'] as const;
export type MemoryScenario = (typeof MEMORY_SCENARIOS)[number];

/** The files, relative to the BFCL data directory (the pull's manifest lists the same). */
export const AGENTIC_FILES = {
  memoryQuestions: 'BFCL_v4_memory.json',
  memoryAnswers: join('possible_answer', 'BFCL_v4_memory.json'),
  webQuestions: 'BFCL_v4_web_search.json',
  webAnswers: join('possible_answer', 'BFCL_v4_web_search.json'),
  prereq: (s: MemoryScenario) => join('memory_prereq_conversation', `memory_${s}.json`),
  doc: (d: 'memory_kv' | 'memory_vector' | 'memory_rec_sum' | 'web_search') =>
    join('multi_turn_func_doc', `${d}.json`),
} as const;

/** The reference's system prompt asking agentic questions for `{'answer': ..., 'context': ...}`. */
export const AGENTIC_RESPONSE_FORMAT_PROMPT =
  "For your final answer to the user, you must respond in this format: {'answer': A short and precise answer to the question, 'context': A brief explanation of how you arrived at this answer or why it is correct}. If you do not know the answer, respond with {'answer': 'I do not know', 'context': 'I do not know'}. If you think the question cannot be properly answered, response with {'answer': 'I cannot answer this question', 'context': A short reason explaining why this question cannot be answered}.\n";

export interface AgenticId {
  readonly category: AgenticCategory;
  /** the id in the question and possible-answer files (`memory_0-customer-0`, `web_search_3`) */
  readonly baseId: string;
  /** a memory prerequisite conversation, not a scored question */
  readonly prereq: boolean;
}

const MEMORY_ID = /^memory_(kv|vector|rec_sum)_(prereq_)?(\d+-[a-z]+-\d+)$/;
const WEB_ID = /^web_search_(base|no_snippet)_(\d+)$/;

/** The category of an agentic entry id, or undefined when it is not one. */
export function parseAgenticId(id: string): AgenticId | undefined {
  const m = MEMORY_ID.exec(id);
  if (m)
    return {
      category: `memory_${m[1]}` as AgenticCategory,
      baseId: `memory_${m[2] ?? ''}${m[3]}`,
      prereq: m[2] !== undefined,
    };
  const w = WEB_ID.exec(id);
  if (w)
    return { category: `web_search_${w[1]}` as AgenticCategory, baseId: `web_search_${w[2]}`, prereq: false };
  return undefined;
}

export function isAgenticId(id: string): boolean {
  return parseAgenticId(id) !== undefined;
}

export const isMemoryCategory = (c: AgenticCategory): c is `memory_${MemoryBackend}` =>
  c.startsWith('memory_');

export function backendOf(c: `memory_${MemoryBackend}`): MemoryBackend {
  return c.slice('memory_'.length) as MemoryBackend;
}

function lines(path: string): unknown[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as unknown);
}

function need(dir: string, files: readonly string[]): void {
  const missing = files.filter((f) => !existsSync(join(dir, f)));
  if (missing.length > 0)
    throw new DataMissingError(
      `BFCL v4 agentic data not found or incomplete in ${dir}. Run \`seal data pull bfcl\` to download it, ` +
        `or point at a local copy with --data-dir DIR or the SEAL_BFCL_DATA environment variable. Missing: ${missing.slice(0, 3).join(', ')}${missing.length > 3 ? ', ...' : ''}`,
    );
}

/** Possible answers by base id (`memory_0-customer-0`, `web_search_3`). */
export function loadAgenticAnswers(
  dir: string,
  kinds: { readonly memory: boolean; readonly web: boolean },
): Map<string, readonly string[]> {
  const files = [
    ...(kinds.memory ? [AGENTIC_FILES.memoryAnswers] : []),
    ...(kinds.web ? [AGENTIC_FILES.webAnswers] : []),
  ];
  need(dir, files);
  const out = new Map<string, readonly string[]>();
  for (const f of files)
    for (const row of lines(join(dir, f)) as { id: string; ground_truth: string[] }[])
      out.set(row.id, row.ground_truth);
  return out;
}

/** One question or prerequisite conversation as BFCL runs it. */
export interface AgenticTask {
  readonly id: string;
  readonly category: AgenticCategory;
  readonly question: readonly (readonly ChatMessage[])[];
  /** memory only */
  readonly scenario?: MemoryScenario;
  readonly prereq: boolean;
  /** questions only */
  readonly possibleAnswers?: readonly string[];
}

/**
 * A category's entries in the reference's order: for memory, each scenario's prerequisite
 * conversations (in file order; they share one memory) come before every question.
 */
export function loadAgenticTasks(dir: string, category: AgenticCategory): AgenticTask[] {
  if (!isMemoryCategory(category)) {
    need(dir, [AGENTIC_FILES.webQuestions, AGENTIC_FILES.webAnswers]);
    const answers = loadAgenticAnswers(dir, { memory: false, web: true });
    return (lines(join(dir, AGENTIC_FILES.webQuestions)) as { id: string; question: ChatMessage[][] }[]).map(
      (q) => ({
        id: q.id.replace('web_search', category),
        category,
        question: q.question,
        prereq: false,
        possibleAnswers: answers.get(q.id) ?? [],
      }),
    );
  }
  need(dir, [
    AGENTIC_FILES.memoryQuestions,
    AGENTIC_FILES.memoryAnswers,
    ...MEMORY_SCENARIOS.map(AGENTIC_FILES.prereq),
  ]);
  const answers = loadAgenticAnswers(dir, { memory: true, web: false });
  const out: AgenticTask[] = [];
  for (const scenario of MEMORY_SCENARIOS)
    for (const p of lines(join(dir, AGENTIC_FILES.prereq(scenario))) as {
      id: string;
      question: ChatMessage[][];
    }[])
      out.push({
        id: p.id.replace('memory', category),
        category,
        question: p.question,
        scenario,
        prereq: true,
      });
  const questions = lines(join(dir, AGENTIC_FILES.memoryQuestions)) as {
    id: string;
    question: ChatMessage[][];
    scenario: MemoryScenario;
  }[];
  for (const q of questions)
    out.push({
      id: q.id.replace('memory', category),
      category,
      question: q.question,
      scenario: q.scenario,
      prereq: false,
      possibleAnswers: answers.get(q.id) ?? [],
    });
  return out;
}

/** The tool docs of one agentic class family. */
export function loadAgenticDocs(
  dir: string,
  which: 'memory_kv' | 'memory_vector' | 'memory_rec_sum' | 'web_search',
): FunctionDoc[] {
  need(dir, [AGENTIC_FILES.doc(which)]);
  return lines(join(dir, AGENTIC_FILES.doc(which))) as FunctionDoc[];
}
