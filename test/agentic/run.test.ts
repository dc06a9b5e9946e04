/**
 * The memory categories played end to end on the reference data: prerequisite conversations first,
 * their memory kept per scenario and backend, then the questions. A scripted policy that stores
 * the facts during the prerequisite conversations and answers from memory scores 100 on every
 * backend; one that stores nothing scores what answering blind scores ("I do not know" matches no
 * possible answer: 0, by the reference's checker). memory_vector's embeddings come from a stand-in
 * server on 127.0.0.1.
 */

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AGENTIC_FILES, type AgenticCategory, type AgenticTask } from '../../src/envs/bfcl/agentic/data.js';
import { ServerEmbedder } from '../../src/envs/bfcl/agentic/embeddings.js';
import {
  type AgenticMessage,
  type AgenticPolicy,
  runAgenticCategory,
} from '../../src/envs/bfcl/agentic/run.js';
import { configureVectorEmbedder } from '../../src/envs/bfcl/apis/memoryVector.js';
import { summariseAgentic } from '../../src/eval/agentic-summary.js';
import { AGENTIC_DATA, HAS_AGENTIC_DATA, reportMissingAgenticData } from '../support/agentic-data.js';
import { type StandIns, startStandIns } from '../support/agentic-standins.js';

reportMissingAgenticData('test/agentic/run.test.ts');

const pyStr = (s: string) => `'${s.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`;

/** question number (the N of memory_N-scenario-M) -> its first possible answer, per scenario */
function facts(): Map<string, [number, string][]> {
  const byScenario = new Map<string, [number, string][]>();
  if (!HAS_AGENTIC_DATA) return byScenario;
  for (const line of readFileSync(join(AGENTIC_DATA, AGENTIC_FILES.memoryAnswers), 'utf8')
    .trim()
    .split('\n')) {
    const { id, ground_truth } = JSON.parse(line) as { id: string; ground_truth: string[] };
    const [, n, scenario] = /^memory_(\d+)-([a-z]+)-\d+$/.exec(id)!;
    byScenario.set(scenario!, [...(byScenario.get(scenario!) ?? []), [Number(n), ground_truth[0]!]]);
  }
  return byScenario;
}

const questionNumber = (entry: AgenticTask) => Number(/_(\d+)-[a-z]+-\d+$/.exec(entry.id)![1]);

/** Stores every fact of the scenario at the first prerequisite step, then answers from memory. */
function rememberingPolicy(category: AgenticCategory): AgenticPolicy {
  const all = facts();
  const stored = new Set<string>();
  return async (messages: readonly AgenticMessage[], _tools, entry) => {
    const last = messages[messages.length - 1]!;
    if (entry.prereq) {
      if (last.role !== 'user' || stored.has(entry.scenario!)) return { calls: [], text: 'Noted.' };
      stored.add(entry.scenario!);
      const f = all.get(entry.scenario!)!;
      const calls = f.map(([n, a]) =>
        category === 'memory_kv'
          ? `archival_memory_add(key='q_${n}', value=${pyStr(a)})`
          : category === 'memory_vector'
            ? `archival_memory_add(text=${pyStr(`q_${n}=${a}`)})`
            : `memory_append(text=${pyStr(`q_${n}=${a};`)})`,
      );
      return { calls, text: '' };
    }
    const n = questionNumber(entry);
    if (last.role === 'user') {
      const call =
        category === 'memory_kv'
          ? `archival_memory_retrieve(key='q_${n}')`
          : category === 'memory_vector'
            ? 'archival_memory_retrieve_all()'
            : 'memory_retrieve()';
      return { calls: [call], text: '' };
    }
    const seen = last.content;
    let answer = 'I do not know';
    if (category === 'memory_kv') answer = (JSON.parse(seen) as { value?: string }).value ?? answer;
    else if (category === 'memory_vector') {
      const rows = (JSON.parse(seen) as { result: { text: string }[] }).result;
      answer = rows.find((r) => r.text.startsWith(`q_${n}=`))?.text.slice(`q_${n}=`.length) ?? answer;
    } else {
      const content = (JSON.parse(seen) as { memory_content?: string }).memory_content ?? '';
      answer = new RegExp(`(?:^|;)q_${n}=([^;]*);`).exec(content)?.[1] ?? answer;
    }
    return { calls: [], text: `{'answer': ${pyStr(answer)}, 'context': 'from memory'}` };
  };
}

const forgetful: AgenticPolicy = async (_m, _t, entry) => ({
  calls: [],
  text: entry.prereq ? 'Noted.' : "{'answer': 'I do not know', 'context': 'I do not know'}",
});

let s: StandIns;
beforeAll(async () => {
  s = await startStandIns();
  configureVectorEmbedder(new ServerEmbedder({ baseUrl: `${s.base}/v1`, model: 'all-MiniLM-L6-v2' }));
});
afterAll(async () => {
  configureVectorEmbedder(undefined);
  await s.close();
});

describe.skipIf(!HAS_AGENTIC_DATA)('memory categories end to end', () => {
  for (const category of ['memory_kv', 'memory_vector', 'memory_rec_sum'] as const) {
    it(`${category}: remembering scores 100, forgetting scores blind (0)`, async () => {
      const done = await runAgenticCategory(AGENTIC_DATA, category, rememberingPolicy(category));
      const questions = done.filter((r) => r.valid !== undefined);
      expect(questions).toHaveLength(155);
      // prerequisites come first, with the reference's ids
      expect(done[0]!.id).toMatch(new RegExp(`^${category}_prereq_\\d+-student-0$`));
      expect(done.findIndex((r) => r.valid !== undefined)).toBe(done.length - 155);
      expect(summariseAgentic(questions.map((r) => ({ category, valid: r.valid! }))).memory).toBe(100);
      const blind = (await runAgenticCategory(AGENTIC_DATA, category, forgetful)).filter(
        (r) => r.valid !== undefined,
      );
      expect(summariseAgentic(blind.map((r) => ({ category, valid: r.valid! }))).memory).toBe(0);
    }, 120_000);
  }

  it('opens a question with the memory prompt, the core memory as it is, and the answer format', async () => {
    const seen: string[] = [];
    await runAgenticCategory(AGENTIC_DATA, 'memory_kv', async (messages, _t, entry) => {
      if (entry.id === 'memory_kv_prereq_22-student-0' && messages.length === 2)
        return { calls: ["core_memory_add(key='major', value='Computer Science')"], text: '' };
      if (entry.id === 'memory_kv_80-student-0' && messages.at(-1)!.role === 'user')
        seen.push(messages[0]!.content);
      return { calls: [], text: 'ok' };
    });
    expect(seen[0]).toMatch(/^You are an academic-support assistant/);
    expect(seen[0]).toContain(
      'Here is the content of your Core Memory from previous interactions:\n{\n    "major": "Computer Science"\n}\n\n\nFor your final answer to the user',
    );
  });
});
