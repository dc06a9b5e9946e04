/**
 * The memory categories played end to end on the reference data through the suite's episodes:
 * prerequisite conversations first, their memory kept per scenario and backend, then the
 * questions. A scripted agent that stores the facts during the prerequisite conversations and
 * answers from memory scores 100 on every backend; one that stores nothing scores what answering
 * blind scores ("I do not know" matches no possible answer: 0, by the reference's checker).
 * memory_vector's embeddings come from a stand-in server on 127.0.0.1.
 */

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callParts } from '../../src/agent/conversation.js';
import { summariseAgentic } from '../../src/bfcl/agentic-summary.js';
import { AGENTIC_FILES, type AgenticCategory } from '../../src/envs/bfcl/agentic/data.js';
import { ServerEmbedder } from '../../src/envs/bfcl/agentic/embeddings.js';
import type { AgenticRecord } from '../../src/envs/bfcl/agentic/episode.js';
import { agenticSuite } from '../../src/envs/bfcl/agentic/suite.js';
import { configureVectorEmbedder } from '../../src/envs/bfcl/apis/memoryVector.js';
import type { AgentInput, AgentMessage, Opening, Suite } from '../../src/envs/suite.js';
import { AGENTIC_DATA, HAS_AGENTIC_DATA, reportMissingAgenticData } from '../support/agentic-data.js';
import { type StandIns, startStandIns } from '../support/agentic-standins.js';

reportMissingAgenticData('test/agentic/suite.test.ts');

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

interface Entry {
  readonly id: string;
  readonly prereq: boolean;
  readonly scenario: string;
}

/** What a scripted agent sees at each step: its entry, the opening, and the last inputs. */
type Agent = (entry: Entry, opening: Opening, last: readonly AgentInput[]) => AgentMessage;

const say = (text: string): AgentMessage => ({ text, calls: [] });
const call = (...calls: string[]): AgentMessage => ({
  text: null,
  calls: calls.map((c, i) => ({ id: `c${i}`, ...callParts(c) })),
});

/** Every task in the suite's order, one at a time, each settled before the next opens. */
async function playAll(suite: Suite, agent: Agent) {
  const out: { id: string; scored: boolean; valid: boolean; record: AgenticRecord }[] = [];
  for (const t of suite.tasks) {
    const m = /(prereq_)?\d+-([a-z]+)-\d+$/.exec(t.id)!;
    const entry: Entry = { id: t.id, prereq: m[1] !== undefined, scenario: m[2]! };
    const episode = suite.episode(t.id, { trial: 0 });
    const opening = await episode.open();
    let obs: { inputs: readonly AgentInput[]; done: boolean } = opening;
    while (!obs.done) obs = await episode.send(agent(entry, opening, obs.inputs));
    const record = JSON.parse(JSON.stringify(episode.record())) as AgenticRecord;
    suite.settle?.(t.id, { trial: 0 }, record);
    out.push({ id: t.id, scored: t.scored !== false, valid: episode.verdict().solved, record });
  }
  return out;
}

const questionNumber = (id: string) => Number(/_(\d+)-[a-z]+-\d+$/.exec(id)![1]);

/** Stores every fact of the scenario at the first prerequisite step, then answers from memory. */
function remembering(category: AgenticCategory): Agent {
  const all = facts();
  const stored = new Set<string>();
  return (entry, _opening, last) => {
    const input = last[last.length - 1];
    if (entry.prereq) {
      if (input?.kind !== 'user' || stored.has(entry.scenario)) return say('Noted.');
      stored.add(entry.scenario);
      return call(
        ...all
          .get(entry.scenario)!
          .map(([n, a]) =>
            category === 'memory_kv'
              ? `archival_memory_add(key='q_${n}', value=${pyStr(a)})`
              : category === 'memory_vector'
                ? `archival_memory_add(text=${pyStr(`q_${n}=${a}`)})`
                : `memory_append(text=${pyStr(`q_${n}=${a};`)})`,
          ),
      );
    }
    const n = questionNumber(entry.id);
    if (input?.kind === 'user')
      return call(
        category === 'memory_kv'
          ? `archival_memory_retrieve(key='q_${n}')`
          : category === 'memory_vector'
            ? 'archival_memory_retrieve_all()'
            : 'memory_retrieve()',
      );
    const seen = input!.content;
    let answer = 'I do not know';
    if (category === 'memory_kv') answer = (JSON.parse(seen) as { value?: string }).value ?? answer;
    else if (category === 'memory_vector') {
      const rows = (JSON.parse(seen) as { result: { text: string }[] }).result;
      answer = rows.find((r) => r.text.startsWith(`q_${n}=`))?.text.slice(`q_${n}=`.length) ?? answer;
    } else {
      const content = (JSON.parse(seen) as { memory_content?: string }).memory_content ?? '';
      answer = new RegExp(`(?:^|;)q_${n}=([^;]*);`).exec(content)?.[1] ?? answer;
    }
    return say(`{'answer': ${pyStr(answer)}, 'context': 'from memory'}`);
  };
}

const forgetful: Agent = (entry) =>
  say(entry.prereq ? 'Noted.' : "{'answer': 'I do not know', 'context': 'I do not know'}");

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
      const suite = agenticSuite(AGENTIC_DATA, [category]);
      // prerequisites come first, with the reference's ids, each after the one before
      expect(suite.tasks[0]!.id).toMatch(new RegExp(`^${category}_prereq_\\d+-student-0$`));
      expect(suite.tasks[0]!.after).toBeUndefined();
      expect(suite.tasks[1]!.after).toEqual([suite.tasks[0]!.id]);
      const done = await playAll(suite, remembering(category));
      const questions = done.filter((r) => r.scored);
      expect(questions).toHaveLength(155);
      expect(done.findIndex((r) => r.scored)).toBe(done.length - 155);
      // a prerequisite's record carries the memory it left; a question's does not
      expect(done[0]!.record.memory).toBeDefined();
      expect(questions[0]!.record.memory).toBeUndefined();
      expect(summariseAgentic(questions.map((r) => ({ category, valid: r.valid }))).memory).toBe(100);
      const blind = (await playAll(agenticSuite(AGENTIC_DATA, [category]), forgetful)).filter(
        (r) => r.scored,
      );
      expect(summariseAgentic(blind.map((r) => ({ category, valid: r.valid }))).memory).toBe(0);
    }, 120_000);
  }

  it('opens a question with the memory prompt, the core memory as it is, and the answer format', async () => {
    const seen: string[] = [];
    await playAll(agenticSuite(AGENTIC_DATA, ['memory_kv']), (entry, opening, last) => {
      if (entry.id === 'memory_kv_prereq_22-student-0' && last === opening.inputs)
        return call("core_memory_add(key='major', value='Computer Science')");
      if (entry.id === 'memory_kv_80-student-0' && last === opening.inputs) seen.push(opening.instructions!);
      return say('ok');
    });
    expect(seen[0]).toMatch(/^You are an academic-support assistant/);
    expect(seen[0]).toContain(
      'Here is the content of your Core Memory from previous interactions:\n{\n    "major": "Computer Science"\n}\n\n\nFor your final answer to the user',
    );
  });

  it('keeps memory per trial: a second trial starts from what its own prerequisites left', async () => {
    const suite = agenticSuite(AGENTIC_DATA, ['memory_kv']);
    const first = suite.tasks.find((t) => t.id.includes('-student-') && t.scored === false)!;
    const question = suite.tasks.find((t) => t.id === 'memory_kv_80-student-0')!;
    const last = suite.tasks.filter((t) => t.scored === false && t.id.includes('-student-')).at(-1)!;
    expect(question.after).toEqual([last.id]);
    suite.settle!(
      last.id,
      { trial: 0 },
      { id: last.id, result: [], memory: { core_memory: { a: 'trial zero' }, archival_memory: {} } },
    );
    const zero = await suite.episode(question.id, { trial: 0 }).open();
    const one = await suite.episode(question.id, { trial: 1 }).open();
    expect(zero.instructions).toContain('trial zero');
    expect(one.instructions).not.toContain('trial zero');
    expect(first.after).toBeUndefined();
  });
});
