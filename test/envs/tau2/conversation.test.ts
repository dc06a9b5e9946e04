/**
 * The τ² episode (v0.2.0's orchestrator) played by the agent loop against scripted models on real
 * sockets: the message order the reference writes, the user's stop, the step limit, and the
 * evaluation folder that resumes. The domain is a toy one implementing the domain contract, so
 * these tests need no τ² data.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { converse } from '../../../src/agent/conversation.js';
import { formatAdapter } from '../../../src/agent/formats/index.js';
import { userModelFrom } from '../../../src/agent/user-model.js';
import { trialSeeds } from '../../../src/cli/eval-tau2.js';
import { jsonDumps } from '../../../src/envs/py/format.js';
import type { PyDict } from '../../../src/envs/py/values.js';
import { Tau2Episode, type Tau2Simulation } from '../../../src/envs/tau2/episode.js';
import { tau2Suite } from '../../../src/envs/tau2/suite.js';
import type { Tau2Domain, Tau2Environment, Tau2Task, Tau2ToolSchema } from '../../../src/envs/tau2/types.js';
import { flipForUser, scenarioText } from '../../../src/envs/tau2/user.js';
import { readEpisodes, runEpisodes } from '../../../src/eval/episodes.js';
import { OpenAiCompatiblePolicy } from '../../../src/policy/openai.js';
import { compareTable } from '../../../src/report/compare.js';
import {
  type FakeModelServer,
  type FakeScript,
  startFakeModelServer,
} from '../../support/fakeModelServer.js';

const TOOLS: Tau2ToolSchema[] = [
  {
    type: 'function',
    function: {
      name: 'add',
      description: 'add',
      parameters: {
        properties: { n: { title: 'N', type: 'integer' } },
        required: ['n'],
        title: 'parameters',
        type: 'object',
      },
    },
  },
];

/** A counter behind one write tool: enough to see calls routed, results returned and state scored. */
function toyEnvironment(): Tau2Environment & { count: bigint } {
  const env = {
    count: 0n,
    domain: 'retail' as const,
    policy: 'Add what the user asks.',
    agentTools: () => TOOLS,
    userTools: () => [],
    toolKind: (_r: string, name: string) => (name === 'add' ? ('write' as const) : undefined),
    respond(call: { name: string; arguments: PyDict }) {
      if (call.name !== 'add') return { content: `Error: Tool '${call.name}' not found.`, error: true };
      const n = call.arguments.get('n');
      if (typeof n !== 'bigint') return { content: 'Error: n must be an int', error: true };
      env.count += n;
      return { content: String(env.count), error: false };
    },
    makeToolCall: () => null,
    updateDb() {},
    runFunction: () => null,
    syncTools() {},
    dbText: () => jsonDumps(new Map([['count', env.count]])),
  };
  return env;
}

const TASK: Tau2Task = {
  id: '0',
  user_scenario: {
    instructions: { domain: 'toy', reason_for_call: 'add two', task_instructions: 'Ask to add 2.' },
  },
  evaluation_criteria: { reward_basis: ['DB'] },
};

function toyDomain(): Tau2Domain & { envs: ReturnType<typeof toyEnvironment>[] } {
  const envs: ReturnType<typeof toyEnvironment>[] = [];
  return {
    name: 'retail',
    tasks: [TASK],
    envs,
    makeEnvironment() {
      const e = toyEnvironment();
      envs.push(e);
      return e;
    },
  };
}

const servers: FakeModelServer[] = [];
const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function models(agent: FakeScript, user: FakeScript) {
  const a = await startFakeModelServer(agent);
  const u = await startFakeModelServer(user);
  servers.push(a, u);
  return {
    agent: new OpenAiCompatiblePolicy({ baseUrl: a.url, model: 'agent', apiKey: 'x' }),
    user: userModelFrom(new OpenAiCompatiblePolicy({ baseUrl: u.url, model: 'user', apiKey: 'x' })),
    agentServer: a,
    userServer: u,
  };
}

/** The agent adds 2, then says so; the user asks, then stops. */
const agentScript: FakeScript = (body) => {
  const last = body.messages?.at(-1);
  return last?.role === 'tool'
    ? { content: 'Done: the count is 2.' }
    : { toolCalls: [{ name: 'add', arguments: { n: 2 }, id: 'c1' }] };
};
const userScript: FakeScript = (_body, i) => ({ content: i === 0 ? 'Please add 2.' : 'Thanks! ###STOP###' });

const clock = () => {
  let t = Date.UTC(2025, 0, 1);
  return () => {
    t += 1000;
    return new Date(t);
  };
};

describe('a τ² episode played by the agent loop', () => {
  it('routes calls to the environment and text to the user, in the reference message order, until the user stops', async () => {
    const m = await models(agentScript, userScript);
    const env = toyEnvironment();
    const episode = new Tau2Episode(TASK, env, {
      user: m.user,
      userSystemPrompt: 'guidelines\n\n<scenario>\nx\n</scenario>',
      framing: 'policy',
      evaluate: (s: Tau2Simulation) => ({
        reward: env.count === 2n ? 1 : 0,
        solved: env.count === 2n,
        detail: s.termination_reason,
      }),
      clock: clock(),
    });
    const played = await converse(episode, m.agent, { format: formatAdapter('native') });
    expect(played.reason).toBe('user_stop');
    const sim = episode.simulation();
    expect(sim.messages.map((x) => `${x.role}${'tool_calls' in x && x.tool_calls ? '+calls' : ''}`)).toEqual([
      'assistant',
      'user',
      'assistant+calls',
      'tool',
      'assistant',
      'user',
    ]);
    expect(sim.messages.map((x) => x.turn_idx)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(sim.messages[0]!.content).toBe('Hi! How can I help you today?');
    expect(sim.messages[3]).toMatchObject({
      role: 'tool',
      id: 'c1',
      content: '2',
      requestor: 'assistant',
      error: false,
    });
    expect(episode.verdict().reward).toBe(1);
    // the user saw the greeting and the agent's text only, roles flipped; never the agent's tool traffic
    const userChat = m.userServer.requests[1]!.messages!;
    expect(userChat.map((x) => x.role)).toEqual(['system', 'user', 'assistant', 'user']);
    expect(userChat[3]!.content).toBe('Done: the count is 2.');
    // the agent saw its framing, the greeting as its own message, then the user
    const agentChat = m.agentServer.requests[0]!.messages!;
    expect(agentChat.map((x) => x.role)).toEqual(['system', 'assistant', 'user']);
    expect(agentChat[0]!.content).toBe('policy');
  });

  it('ends at the step limit as max_steps, even when the user stops in the last step', async () => {
    const m = await models(agentScript, userScript);
    const env = toyEnvironment();
    // steps: user (1), agent calls (2), tool results (3), agent text (4), user stop (5)
    const episode = new Tau2Episode(TASK, env, {
      user: m.user,
      userSystemPrompt: 's',
      framing: 'p',
      maxSteps: 5,
      evaluate: () => ({ reward: 0, solved: false, detail: null }),
    });
    expect((await converse(episode, m.agent, { format: formatAdapter('native') })).reason).toBe('max_steps');
    const fresh = await models(agentScript, userScript);
    const short = new Tau2Episode(TASK, toyEnvironment(), {
      user: fresh.user,
      userSystemPrompt: 's',
      framing: 'p',
      maxSteps: 2,
      evaluate: () => ({ reward: 0, solved: false, detail: null }),
    });
    await converse(short, fresh.agent, { format: formatAdapter('native') });
    expect(short.simulation().termination_reason).toBe('max_steps');
    expect(short.simulation().messages).toHaveLength(3);
  });

  it('flips roles for the user and keeps only what the reference shows it', () => {
    const flipped = flipForUser([
      { role: 'assistant', content: 'hi', tool_calls: null },
      { role: 'user', content: 'check my phone', tool_calls: null },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'a', name: 'x', arguments: new Map(), requestor: 'assistant' }],
      },
      { role: 'tool', id: 'a', content: 'r', requestor: 'assistant', error: false },
      {
        role: 'user',
        content: null,
        tool_calls: [{ id: 'u', name: 'y', arguments: new Map(), requestor: 'user' }],
      },
      { role: 'tool', id: 'u', content: 'ok', requestor: 'user', error: false },
    ]);
    expect(flipped.map((m) => m.role)).toEqual(['user', 'assistant', 'assistant', 'tool']);
  });

  it("writes the scenario as the reference's str(UserScenario): tab-indented sections, blank lines kept bare", () => {
    expect(
      scenarioText({
        persona: 'Calm.',
        instructions: {
          domain: 'retail',
          reason_for_call: 'a\n\nb',
          known_info: null,
          task_instructions: 't',
        },
      }),
    ).toBe(
      'Persona:\n\tCalm.\nInstructions:\n\tDomain: retail\n\tReason for call:\n\t\ta\n\n\t\tb\n\tTask instructions:\n\t\tt',
    );
  });
});

describe('seal eval on a suite of episodes', () => {
  it('plays every task every trial, writes the table, and a second run resumes with nothing left', async () => {
    const m = await models(agentScript, userScript);
    const domain = toyDomain();
    const suite = tau2Suite({
      domains: [domain],
      user: m.user,
      guidelines: { plain: 'g', withTools: 'gt' },
      evaluate: (_d, _t, s) => ({
        reward: s.termination_reason === 'user_stop' ? 1 : 0,
        solved: true,
        detail: {},
      }),
    });
    const out = mkdtempSync(join(tmpdir(), 'seal-episodes-'));
    dirs.push(out);
    const config = {
      suite: 'tau2',
      policy: 'server',
      model: 'agent',
      format: 'native',
      sampling: { temperature: 0 },
      groups: ['retail'],
      split: 'all',
      trials: 2,
      seed: 300,
    };
    const run = () =>
      runEpisodes(
        suite,
        suite.tasks.map((t) => t.id),
        m.agent,
        config,
        out,
        {
          concurrency: 2,
          format: formatAdapter('native'),
          seeds: [1, 2],
        },
      );
    const first = await run();
    expect(first.ran).toBe(2);
    expect(first.summary.groups[0]).toMatchObject({
      group: 'retail',
      tasks: 1,
      episodes: 2,
      averageReward: 100,
    });
    expect(first.summary.groups[0]!.passHatK).toEqual([100, 100]);
    expect(first.table).toContain('| model | retail | average |');
    expect([...readEpisodes(out).keys()].sort()).toEqual(['retail/0#0', 'retail/0#1']);
    expect(readFileSync(join(out, 'summary.md'), 'utf8')).toContain('pass^k');
    const second = await run();
    expect(second).toMatchObject({ ran: 0, resumed: 2 });
    await expect(
      runEpisodes(suite, ['retail/0'], m.agent, { ...config, trials: 3 }, out, {
        concurrency: 1,
        format: formatAdapter('native'),
        seeds: [1, 2, 3],
      }),
    ).rejects.toThrow(/different trials/);
  });

  it('seal compare reads two such folders: the average reward per group, and task by task', async () => {
    const config = {
      suite: 'tau2',
      policy: 'server',
      model: 'agent',
      format: 'native',
      sampling: { temperature: 0 },
      groups: ['retail'],
      split: 'all',
      trials: 1,
      seed: 300,
    };
    const folders: string[] = [];
    // one agent adds 2 (solved), the other only talks (not solved)
    for (const agent of [agentScript, () => ({ content: 'I cannot do that.' })]) {
      const m = await models(agent, userScript);
      const domain = toyDomain();
      const suite = tau2Suite({
        domains: [domain],
        user: m.user,
        guidelines: { plain: 'g', withTools: 'gt' },
        evaluate: () => {
          const solved = domain.envs.at(-1)!.count === 2n;
          return { reward: solved ? 1 : 0, solved, detail: {} };
        },
      });
      const out = mkdtempSync(join(tmpdir(), 'seal-episodes-'));
      dirs.push(out);
      folders.push(out);
      await runEpisodes(suite, ['retail/0'], m.agent, config, out, {
        concurrency: 1,
        format: formatAdapter('native'),
        seeds: [1],
      });
    }
    const table = compareTable(folders);
    expect(table).toMatch(/\| run +\| +Average \| +retail \|/);
    expect(table).toContain('0.00 (-100.00)');
    expect(table).toMatch(/\| task by task +\|\s*tasks\s*\|\s*won\s*\|\s*lost\s*\|/);
    expect(table).toMatch(/\|\s*1\s*\|\s*0\s*\|\s*1\s*\|/);
    expect(() => compareTable([folders[0]!, join(folders[0]!, 'missing')])).toThrow(/same suite/);
  });

  it("draws the trials' seeds as the reference does (Python: random.seed(300), then randint(0, 1000000) per trial)", () => {
    // the values CPython 3 prints for that
    expect(trialSeeds(300, 4)).toEqual([626729, 373753, 361454, 1567]);
  });
});
