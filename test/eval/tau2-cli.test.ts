/**
 * `seal eval --suite tau2 --domain all` as a user runs it: a real process, an agent and a user
 * behind two OpenAI-compatible servers on loopback. Both are scripted to play each task's gold
 * conversation: the user names its task, the agent makes the gold calls (asking the user to make
 * the user's, on the phone), then says everything the task wants said, and the user stops. Every
 * task then scores 1, as the ground truth does in BFCL; a run killed midway and started again
 * plays only the rest; `seal verify --suite tau2` scores the results file the run wrote the same.
 *
 * Several telecom tasks share one scenario, so the user cannot tell its task from its prompt:
 * the run goes one simulation at a time and the user takes the tasks in the run's order.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { jsonDumps } from '../../src/envs/py/format.js';
import { loadTau2Tasks } from '../../src/envs/tau2/tasks.js';
import { TAU2_DOMAINS, type Tau2Task } from '../../src/envs/tau2/types.js';
import { ROOT, seal } from '../support/cli.js';
import {
  type ChatRequestBody,
  type FakeModelServer,
  type FakeReply,
  startFakeModelServer,
} from '../support/fakeModelServer.js';
import { HAS_TAU2, noteMissingTau2, TAU2_ROOT } from '../support/tau2-data.js';

noteMissingTau2('seal eval --suite tau2');

const TASKS = new Map<string, Tau2Task>();
const ORDER: string[] = [];
if (HAS_TAU2)
  for (const d of TAU2_DOMAINS)
    for (const t of loadTau2Tasks(TAU2_ROOT, d)) {
      TASKS.set(`${d}/${t.id}`, t);
      ORDER.push(`${d}/${t.id}`);
    }

const text = (m: Record<string, unknown> | undefined) => (typeof m?.content === 'string' ? m.content : '');
const actionsOf = (key: string) => TASKS.get(key)!.evaluation_criteria?.actions ?? [];

/** The agent: the task from the user's first words, then the gold actions in order, then the facts. */
function agentReply(body: ChatRequestBody): FakeReply {
  const msgs = body.messages ?? [];
  const key = text(msgs.find((m) => m.role === 'user')).replace(/^task /, '');
  const done =
    msgs.filter((m) => m.role === 'tool').length +
    msgs.filter((m) => m.role === 'user' && text(m) === 'done').length;
  const actions = actionsOf(key);
  const next = actions[done];
  if (next?.requestor === 'assistant')
    return { toolCalls: [{ id: `a${done}`, name: next.name, arguments: jsonDumps(next.arguments) }] };
  if (next) return { content: `please do ${next.action_id}` };
  const facts = TASKS.get(key)!.evaluation_criteria?.communicate_info ?? [];
  return { content: facts.length > 0 ? `Here you are: ${facts.join('; ')}.` : 'All done.' };
}

/** The user: takes the next task of `queue` when a conversation starts, makes its phone calls, stops at the end. */
function userScript(queue: string[]) {
  let next = 0;
  return (body: ChatRequestBody): FakeReply => {
    const msgs = (body.messages ?? []).slice(1); // the system prompt
    const own = msgs.filter((m) => m.role === 'assistant');
    if (own.length === 0) return { content: `task ${queue[next++]}` };
    const key = text(own[0]).replace(/^task /, '');
    const last = msgs.at(-1);
    if (last?.role === 'tool') return { content: 'done' };
    const asked = /^please do (.+)$/.exec(text(last));
    if (asked) {
      const action = actionsOf(key).find((a) => a.action_id === asked[1])!;
      return {
        toolCalls: [{ id: `u${own.length}`, name: action.name, arguments: jsonDumps(action.arguments) }],
      };
    }
    return { content: 'Thank you. ###STOP###' };
  };
}

const servers: FakeModelServer[] = [];
const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function models(queue: string[]) {
  const agent = await startFakeModelServer(agentReply);
  const user = await startFakeModelServer(userScript(queue));
  servers.push(agent, user);
  return { agent: agent.url, user: user.url };
}

const evalArgs = (urls: { agent: string; user: string }, out: string) => [
  'eval',
  '--suite',
  'tau2',
  '--domain',
  'all',
  '--tau2-data',
  TAU2_ROOT,
  '--model',
  'gold-agent',
  '--base-url',
  urls.agent,
  '--user-model',
  'gold-user',
  '--user-base-url',
  urls.user,
  '--concurrency',
  '1',
  '--out',
  out,
];

const finishedKeys = (out: string): string[] => {
  try {
    return readFileSync(join(out, 'episodes.jsonl'), 'utf8')
      .split('\n')
      .filter((l) => l.trim())
      .map((l) => (JSON.parse(l) as { task_id: string }).task_id);
  } catch {
    return [];
  }
};

describe.runIf(HAS_TAU2)('seal eval --suite tau2 --domain all', () => {
  it('plays every task; killed midway it resumes; the gold conversations score 1 everywhere; verify agrees', async () => {
    const out = mkdtempSync(join(tmpdir(), 'seal-tau2-eval-'));
    dirs.push(out);
    const env = { OPENAI_API_KEY: 'test' };

    // first run: killed once a few simulations are on disk
    const first = await models(ORDER);
    const child = spawn('node', [join(ROOT, 'bin', 'seal.js'), ...evalArgs(first, out)], {
      stdio: 'ignore',
      env: { ...process.env, ...env },
    });
    const exited = new Promise((r) => child.on('exit', r));
    while (finishedKeys(out).length < 5) {
      if (child.exitCode !== null) throw new Error('the run ended before it could be killed');
      await new Promise((r) => setTimeout(r, 20));
    }
    child.kill('SIGKILL');
    await exited;
    const kept = finishedKeys(out);
    expect(kept.length).toBeGreaterThanOrEqual(5);

    // second run: the same command plays only the rest, in the same order
    const rest = ORDER.filter((k) => !kept.includes(k));
    const second = await models(rest);
    const r = await seal(evalArgs(second, out), env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(`eval: ${kept.length}/${ORDER.length} tasks already done`);
    expect(r.stdout).toContain(`${rest.length} simulation(s) run, ${kept.length} kept from before`);
    expect(r.stdout).toMatch(/\| gold-agent \| 100\.00 \| 100\.00 \| 100\.00 \| 100\.00 \|/);
    expect(new Set(finishedKeys(out))).toEqual(new Set(ORDER));
    const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as {
      groups: { group: string; tasks: number }[];
    };
    expect(summary.groups.map((g) => [g.group, g.tasks])).toEqual([
      ['retail', 114],
      ['airline', 50],
      ['telecom', 114],
    ]);

    // the results file the run wrote is the reference's format, and seal's verify scores it alike
    const v = await seal([
      'verify',
      '--suite',
      'tau2',
      '--tau2-data',
      TAU2_ROOT,
      '--results',
      join(out, 'tau2_airline.json'),
      '--json',
    ]);
    expect(v.stderr).toBe('');
    expect(JSON.parse(v.stdout)).toMatchObject({
      domain: 'airline',
      simulations: 50,
      average_reward: 1,
      rewards_changed: 0,
    });
    // 278 conversations, each scored by replaying it: about two minutes alone, more beside other tests
  }, 900_000);
  it('episodes without their run.json are not adopted: refused before anything is played, the folder untouched', async () => {
    const out = mkdtempSync(join(tmpdir(), 'seal-tau2-orphan-'));
    dirs.push(out);
    const line = '{"task_id": "retail/0", "trial": 0, "reward": 1}\n';
    writeFileSync(join(out, 'episodes.jsonl'), line);
    const dead = { agent: 'http://127.0.0.1:9/v1', user: 'http://127.0.0.1:9/v1' };
    const r = await seal(evalArgs(dead, out));
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('holds episodes.jsonl but no run.json');
    expect(r.stderr).toContain('--force');
    expect(readdirSync(out)).toEqual(['episodes.jsonl']);
    expect(readFileSync(join(out, 'episodes.jsonl'), 'utf8')).toBe(line);
  });
});
