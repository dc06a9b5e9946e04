/**
 * `seal eval --suite bfcl --categories ...` on BFCL v4's agentic categories as a user runs it: a
 * real process, a scripted OpenAI-compatible model on loopback, and stand-ins (also on loopback)
 * for the embeddings server, the search provider and the web pages.
 *
 * - Memory, all three backends: a model that stores the facts during the prerequisite
 *   conversations and answers from memory scores 100 on each; killed after its first questions,
 *   the run resumes and still scores 100 (the memory the prerequisites left is rebuilt from the run
 *   folder); a model that stores nothing scores what answering blind scores (0); `seal verify`
 *   scores the result files the run wrote the same.
 * - Web search, both variants: a model that searches, reads a page and knows the answer to every
 *   third question scores exactly that; the run repeats offline from its cache with the stand-ins
 *   gone, the model seeing the same tool results.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { AGENTIC_FILES, MEMORY_SCENARIOS } from '../../src/envs/bfcl/agentic/data.js';
import { MEMORY_AGENT_SETTINGS } from '../../src/envs/bfcl/agentic/episode.js';
import { AGENTIC_DATA, HAS_AGENTIC_DATA, reportMissingAgenticData } from '../support/agentic-data.js';
import { type StandIns, startStandIns } from '../support/agentic-standins.js';
import { ROOT, seal } from '../support/cli.js';
import {
  type ChatRequestBody,
  type FakeModelServer,
  type FakeReply,
  startFakeModelServer,
} from '../support/fakeModelServer.js';

reportMissingAgenticData('test/eval/agentic-cli.test.ts');

type Msg = Record<string, unknown>;
const text = (m: Msg | undefined) => (typeof m?.content === 'string' ? m.content : '');
const jsonLines = <T>(path: string): T[] =>
  readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as T);

/** scenario -> question text -> (question number, first possible answer); the first prerequisite message per scenario */
const QUESTIONS = new Map<string, Map<string, { n: number; answer: string }>>();
const FIRST_PREREQ = new Map<string, string>();
const WEB = new Map<string, { n: number; answer: string }>();
if (HAS_AGENTIC_DATA) {
  const answers = new Map(
    [
      ...jsonLines<{ id: string; ground_truth: string[] }>(join(AGENTIC_DATA, AGENTIC_FILES.memoryAnswers)),
      ...jsonLines<{ id: string; ground_truth: string[] }>(join(AGENTIC_DATA, AGENTIC_FILES.webAnswers)),
    ].map((r) => [r.id, r.ground_truth[0]!]),
  );
  for (const q of jsonLines<{ id: string; scenario: string; question: Msg[][] }>(
    join(AGENTIC_DATA, AGENTIC_FILES.memoryQuestions),
  )) {
    const byText = QUESTIONS.get(q.scenario) ?? new Map();
    QUESTIONS.set(q.scenario, byText);
    byText.set(text(q.question[0]![0]), {
      n: Number(/^memory_(\d+)-/.exec(q.id)![1]),
      answer: answers.get(q.id)!,
    });
  }
  for (const s of MEMORY_SCENARIOS) {
    const first = jsonLines<{ question: Msg[][] }>(join(AGENTIC_DATA, AGENTIC_FILES.prereq(s)))[0]!;
    FIRST_PREREQ.set(s, text(first.question[0]![0]));
  }
  for (const q of jsonLines<{ id: string; question: Msg[][] }>(
    join(AGENTIC_DATA, AGENTIC_FILES.webQuestions),
  ))
    WEB.set(text(q.question[0]![0]), { n: Number(/_(\d+)$/.exec(q.id)![1]), answer: answers.get(q.id)! });
}

const backendOf = (body: ChatRequestBody): 'kv' | 'vector' | 'rec_sum' => {
  const names = (body.tools ?? []).map((t) => (t.function as { name: string }).name);
  if (names.includes('memory_append')) return 'rec_sum';
  const add = (body.tools ?? []).find((t) => (t.function as { name: string }).name === 'archival_memory_add');
  const params = (add!.function as { parameters: { properties?: object } }).parameters;
  const props = params.properties ?? {};
  return 'key' in props ? 'kv' : 'vector';
};
const answer = (a: string): FakeReply => ({ content: JSON.stringify({ answer: a, context: 'from memory' }) });

/** Stores every fact of a scenario at its first prerequisite message, then answers from memory. */
function remembering(body: ChatRequestBody): FakeReply {
  const msgs = body.messages ?? [];
  const system = text(msgs[0]);
  const scenario = MEMORY_SCENARIOS.find((s) => system.includes(MEMORY_AGENT_SETTINGS[s]))!;
  const backend = backendOf(body);
  const last = msgs[msgs.length - 1]!;
  if (!system.includes('For your final answer')) {
    if (last.role !== 'user' || text(last) !== FIRST_PREREQ.get(scenario)) return { content: 'Noted.' };
    return {
      toolCalls: [...QUESTIONS.get(scenario)!.values()].map(({ n, answer: a }, i) => ({
        id: `s${i}`,
        name: backend === 'rec_sum' ? 'memory_append' : 'archival_memory_add',
        arguments:
          backend === 'kv'
            ? { key: `q_${n}`, value: a }
            : { text: backend === 'vector' ? `q_${n}=${a}` : `q_${n}=${a};` },
      })),
    };
  }
  const { n } = QUESTIONS.get(scenario)!.get(text(msgs.find((m) => m.role === 'user')))!;
  if (last.role === 'user')
    return backend === 'kv'
      ? { toolCalls: [{ id: 'r', name: 'archival_memory_retrieve', arguments: { key: `q_${n}` } }] }
      : backend === 'vector'
        ? { toolCalls: [{ id: 'r', name: 'archival_memory_retrieve_all', arguments: {} }] }
        : { toolCalls: [{ id: 'r', name: 'memory_retrieve', arguments: {} }] };
  const seen = text(last);
  if (backend === 'kv') return answer((JSON.parse(seen) as { value?: string }).value ?? 'I do not know');
  if (backend === 'vector') {
    const rows = (JSON.parse(seen) as { result: { text: string }[] }).result;
    return answer(
      rows.find((r) => r.text.startsWith(`q_${n}=`))?.text.slice(`q_${n}=`.length) ?? 'I do not know',
    );
  }
  const content = (JSON.parse(seen) as { memory_content?: string }).memory_content ?? '';
  return answer(new RegExp(`(?:^|;)q_${n}=([^;]*);`).exec(content)?.[1] ?? 'I do not know');
}

const forgetful = (body: ChatRequestBody): FakeReply =>
  text(body.messages?.[0]).includes('For your final answer')
    ? { content: "{'answer': 'I do not know', 'context': 'I do not know'}" }
    : { content: 'Noted.' };

/** Searches, reads the first page, then answers every third question right. */
function searcher(pageUrl: string) {
  return (body: ChatRequestBody): FakeReply => {
    const msgs = body.messages ?? [];
    const q = WEB.get(text(msgs.find((m) => m.role === 'user')))!;
    const tools = msgs.filter((m) => m.role === 'tool').length;
    if (tools === 0)
      return {
        toolCalls: [{ id: 'q', name: 'search_engine_query', arguments: { keywords: `question ${q.n}` } }],
      };
    if (tools === 1)
      return { toolCalls: [{ id: 'p', name: 'fetch_url_content', arguments: { url: pageUrl } }] };
    // what the tools returned goes into the answer's context, so the record shows what was seen
    const seen = createHash('sha256')
      .update(
        msgs
          .filter((m) => m.role === 'tool')
          .map(text)
          .join('\n'),
      )
      .digest('hex')
      .slice(0, 16);
    const said = q.n % 3 === 0 ? q.answer.replaceAll("'", "\\'") : 'I do not know';
    return { content: `{'answer': '${said}', 'context': 'saw ${seen}'}` };
  };
}

const servers: FakeModelServer[] = [];
const dirs: string[] = [];
let standIns: StandIns | undefined;
afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
  await standIns?.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const tmp = (name: string) => {
  const d = mkdtempSync(join(tmpdir(), `seal-agentic-${name}-`));
  dirs.push(d);
  return d;
};
const model = async (reply: (b: ChatRequestBody) => FakeReply) => {
  const s = await startFakeModelServer(reply);
  servers.push(s);
  return s.url;
};
const evalArgs = (url: string, name: string, categories: string, out: string, extra: string[] = []) => [
  'eval',
  '--suite',
  'bfcl',
  '--categories',
  categories,
  '--data-dir',
  AGENTIC_DATA,
  '--model',
  name,
  '--base-url',
  url,
  '--out',
  out,
  ...extra,
];
const rowsOf = (out: string) =>
  (() => {
    try {
      return jsonLines<{ task_id: string; scored?: false; record: { result: unknown } }>(
        join(out, 'episodes.jsonl'),
      );
    } catch {
      return [];
    }
  })();

describe.runIf(HAS_AGENTIC_DATA)('seal eval on the agentic categories', () => {
  it('memory: remembering scores 100 on every backend, killed after its first questions it resumes; forgetting scores 0; verify agrees', async () => {
    standIns = await startStandIns();
    const embeddings = ['--embeddings-url', `${standIns.base}/v1`];
    const env = { OPENAI_API_KEY: 'test' };
    const out = tmp('memory');
    const url = await model(remembering);
    const child = spawn(
      'node',
      [
        join(ROOT, 'bin', 'seal.js'),
        ...evalArgs(url, 'remembers', 'memory', out, [...embeddings, '--concurrency', '1']),
      ],
      { stdio: 'ignore', env: { ...process.env, ...env } },
    );
    const exited = new Promise((r) => child.on('exit', r));
    // one at a time: every prerequisite of memory_kv comes before its questions
    while (rowsOf(out).filter((r) => r.scored === undefined).length < 3) {
      if (child.exitCode !== null) throw new Error('the run ended before it could be killed');
      await new Promise((r) => setTimeout(r, 20));
    }
    child.kill('SIGKILL');
    await exited;
    const kept = rowsOf(out).length;
    const r = await seal(evalArgs(url, 'remembers', 'memory', out, embeddings), env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`kept from before`);
    expect(r.stdout).toContain(`, ${kept} kept from before`);
    expect(r.stdout).toMatch(/\| remembers \| - \| 100\.00 \| 100\.00 \|/);
    expect(r.stdout).toMatch(/\| remembers \| 100\.00 \| 100\.00 \| 100\.00 \|/);
    const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as {
      groups: { group: string; tasks: number }[];
    };
    expect(summary.groups.map((g) => [g.group, g.tasks])).toEqual([
      ['memory_kv', 155],
      ['memory_vector', 155],
      ['memory_rec_sum', 155],
    ]);
    for (const backend of ['kv', 'vector', 'rec_sum']) {
      const v = await seal([
        'verify',
        '--data-dir',
        AGENTIC_DATA,
        '--results',
        join(out, `BFCL_v4_memory_${backend}_result.json`),
        '--json',
      ]);
      expect(v.code, v.stderr).toBe(0);
      expect(JSON.parse(v.stdout)).toMatchObject({ memory: 100, average: 100 });
    }

    const blind = tmp('blind');
    const b = await seal(
      evalArgs(await model(forgetful), 'forgets', 'memory_kv,memory_rec_sum', blind, ['--concurrency', '4']),
      env,
    );
    expect(b.code, b.stderr).toBe(0);
    expect(b.stdout).toMatch(/\| forgets \| - \| 0\.00 \| 0\.00 \|/);

    // compare: Table 2's columns, then the categories; task by task over the questions both played
    const c = await seal(['compare', out, blind]);
    expect(c.code, c.stderr).toBe(0);
    expect(c.stdout).toMatch(
      /\| run +\| +Average \| web search \| +memory \| +memory_kv \| memory_vector \| memory_rec_sum \|/,
    );
    // the prerequisite conversations are not questions: 2 x 155 tasks, all lost
    expect(c.stdout).toMatch(/\| seal-agentic-blind-\S+ +\| +310 \| +0 \| +310 \|/);
  }, 600_000);

  it('web search: scores as its answers warrant, and repeats offline from its cache', async () => {
    standIns ??= await startStandIns();
    const out = tmp('web');
    const url = await model(searcher(`${standIns.base}/page/1`));
    const right = [...WEB.values()].filter((q) => q.n % 3 === 0).length / WEB.size;
    const expected = (100 * right).toFixed(2);
    const online = await seal(
      evalArgs(url, 'searcher', 'web_search', out, ['--search-url', standIns.base, '--concurrency', '4']),
      { OPENAI_API_KEY: 'test', SERPAPI_API_KEY: 'test-key' },
    );
    expect(online.code, online.stderr).toBe(0);
    expect(online.stdout).toContain(`| searcher | ${expected} | - | ${expected} |`);
    expect(online.stdout).toMatch(/web: \d+ answer\(s\) from the cache, \d+ fetched/);
    const searches = await standIns.searches();
    expect(searches).toBe(WEB.size);
    await standIns.close();
    standIns = undefined;

    const again = tmp('offline');
    const offline = await seal(
      evalArgs(url, 'searcher', 'web_search', again, [
        '--web-offline',
        '--web-cache',
        join(out, 'web-cache'),
        '--concurrency',
        '4',
      ]),
      { OPENAI_API_KEY: 'test' },
    );
    expect(offline.code, offline.stderr).toBe(0);
    expect(offline.stdout).toContain(`| searcher | ${expected} | - | ${expected} |`);
    expect(offline.stdout).toContain(`web: ${4 * WEB.size} answer(s) from the cache, 0 fetched`);
    const results = (dir: string) =>
      Object.fromEntries(rowsOf(dir).map((r) => [r.task_id, JSON.stringify(r.record.result)]));
    expect(results(again)).toEqual(results(out));
  }, 300_000);
});

describe('--categories', () => {
  const bad = async (args: string[], message: RegExp, env: Record<string, string> = {}) => {
    const r = await seal(['eval', '--model', 'm', '--base-url', 'http://127.0.0.1:9/v1', ...args], {
      OPENAI_API_KEY: 'test',
      SERPAPI_API_KEY: '',
      ...env,
    });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(r.stderr).not.toMatch(/^\s+at /m);
  };

  it('refuses what it cannot do, saying what to do instead', async () => {
    const out = tmp('refusals');
    await bad(
      ['--categories', 'base,memory_kv', '--out', out],
      /mixes multi-turn and agentic.*its own --out/,
    );
    await bad(
      ['--categories', 'memroy', '--out', out],
      /unknown category memroy\. .*memory, web_search, agentic/,
    );
    await bad(
      ['--suite', 'tau2', '--categories', 'memory', '--out', out],
      /for tau2 pick domains with --domain/,
    );
    await bad(
      ['--suite', 'mini', '--web-offline', '--out', out],
      /--web-offline: for BFCL v4's memory and web search/,
    );
    if (!HAS_AGENTIC_DATA) return;
    await bad(
      ['--categories', 'memory_vector', '--data-dir', AGENTIC_DATA, '--out', out],
      /memory_vector needs sentence embeddings: give --embeddings-url/,
    );
    await bad(
      ['--categories', 'web_search_base', '--data-dir', AGENTIC_DATA, '--out', out],
      /set SERPAPI_API_KEY, or repeat a recorded run from its cache with --web-offline/,
    );
    await bad(
      [
        '--categories',
        'memory_kv',
        '--split',
        'memory_kv_999-student-0',
        '--data-dir',
        AGENTIC_DATA,
        '--out',
        out,
      ],
      /no entry memory_kv_999-student-0 in memory_kv/,
    );
  });

  it('picks multi-turn categories within the split', async () => {
    const out = tmp('mini');
    const url = await model(() => ({ content: 'done' }));
    const r = await seal(
      [
        'eval',
        '--suite',
        'mini',
        '--categories',
        'multi_turn_miss_param',
        '--model',
        'm',
        '--base-url',
        url,
        '--out',
        out,
      ],
      { OPENAI_API_KEY: 'test' },
    );
    expect(r.code, r.stderr).toBe(0);
    const ids = jsonLines<{ id: string }>(join(out, 'results.jsonl')).map((x) => x.id);
    expect(ids.length).toBeGreaterThan(0);
    expect(ids.every((id) => id.includes('miss_param'))).toBe(true);
  });
});
