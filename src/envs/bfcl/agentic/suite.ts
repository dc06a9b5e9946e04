/**
 * BFCL v4's agentic categories as a suite of the one episode interface, in the order and with the
 * state the reference's pipeline gives them:
 *
 * - memory: per scenario, the prerequisite conversations first, in file order, each starting from
 *   the memory the previous one left (a chain: each is `after` the one before); then every
 *   question of the scenario, each from the memory the last prerequisite left (questions never
 *   change it, so they may run side by side). The prerequisites are played and kept, not scored;
 * - memory is kept per trial, category and scenario, handed on through `settle` from each
 *   prerequisite's record, so a resumed run rebuilds it from its folder;
 * - web search: each question on its own.
 *
 * The summary's columns are Table 2's, whichever categories were played: web search (the mean of
 * its two variants), memory (of its three backends), and their average.
 */
import type { Suite, SuiteTask, SummaryColumn, TrialOptions } from '../../suite.js';
import { toOpenAiTool } from '../tools.js';
import {
  AGENTIC_CATEGORIES,
  type AgenticCategory,
  type AgenticTask,
  isMemoryCategory,
  loadAgenticDocs,
  loadAgenticTasks,
  MEMORY_CATEGORIES,
  WEB_SEARCH_CATEGORIES,
} from './data.js';
import { AgenticEpisode, type AgenticRecord, type MemorySnapshot } from './episode.js';

/** Table 2's columns */
export const AGENTIC_COLUMNS: readonly SummaryColumn[] = [
  { name: 'web search', groups: WEB_SEARCH_CATEGORIES },
  { name: 'memory', groups: MEMORY_CATEGORIES },
];

export interface AgenticSuiteOptions {
  readonly maxStepsPerTurn?: number;
}

/** The agentic categories `categories` (any of AGENTIC_CATEGORIES) of the data in `dataDir`. */
export function agenticSuite(
  dataDir: string,
  categories: readonly AgenticCategory[],
  options: AgenticSuiteOptions = {},
): Suite {
  const chosen = AGENTIC_CATEGORIES.filter((c) => categories.includes(c));
  const byId = new Map<string, AgenticTask>();
  const tools = new Map<AgenticCategory, ReturnType<typeof toOpenAiTool>[]>();
  const tasks: SuiteTask[] = [];
  for (const category of chosen) {
    tools.set(
      category,
      loadAgenticDocs(dataDir, isMemoryCategory(category) ? category : 'web_search').map(toOpenAiTool),
    );
    const entries = loadAgenticTasks(dataDir, category);
    // the last prerequisite of each scenario so far: the one the next entry of the scenario follows
    const last = new Map<string, string>();
    for (const t of entries) {
      byId.set(t.id, t);
      const before = t.scenario ? last.get(t.scenario) : undefined;
      tasks.push({
        id: t.id,
        group: category,
        ...(before ? { after: [before] } : {}),
        ...(t.prereq ? { scored: false } : {}),
      });
      if (t.prereq && t.scenario) last.set(t.scenario, t.id);
    }
  }
  const memory = new Map<string, MemorySnapshot>();
  const memoryKey = (task: AgenticTask, trial: number | undefined) =>
    `${trial ?? 0}/${task.category}/${task.scenario}`;
  const taskOf = (id: string): AgenticTask => {
    const t = byId.get(id);
    if (!t) throw new Error(`no agentic task ${id} in ${chosen.join(', ')}`);
    return t;
  };
  return {
    name: 'bfcl',
    groups: chosen,
    tasks,
    columns: AGENTIC_COLUMNS,
    episode(taskId: string, play: TrialOptions) {
      const task = taskOf(taskId);
      const start = task.scenario ? memory.get(memoryKey(task, play.trial)) : undefined;
      return new AgenticEpisode(task, tools.get(task.category)!, start, options.maxStepsPerTurn);
    },
    settle(taskId: string, play: TrialOptions, record: unknown) {
      const task = taskOf(taskId);
      const left = (record as AgenticRecord | undefined)?.memory;
      if (task.prereq && left !== undefined) memory.set(memoryKey(task, play.trial), left);
    },
  };
}
