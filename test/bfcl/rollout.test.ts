// @module-tag bfcl-data
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatAdapter } from '../../src/agent/formats/index.js';
import { rollout } from '../../src/bfcl/rollout.js';
import { trajectoryFromCalls } from '../../src/bfcl/trajectory.js';
import { ADDITIONAL_FUNCTION_MESSAGE } from '../../src/envs/bfcl/episode.js';
import { TaskEnvironment } from '../../src/envs/bfcl/executor.js';
import { BASE_CHECKPOINT_DIR, TOKENIZER_FILE } from '../../src/nn/checkpoint.js';
import { Tokenizer } from '../../src/nn/tokenizer.js';
import { embeddedPromptLength } from '../../src/policy/embedded/policy.js';
import { OpenAiCompatiblePolicy } from '../../src/policy/openai.js';
import type { ChatMessage, Policy } from '../../src/policy/policy.js';
import { dropOrder } from '../../src/seal/interface/budget.js';
import { AFFORDANCE_LINE, initialInterfaceState, trainingContext } from '../../src/seal/interface.js';
import { bfclPlayer } from '../support/bfclPlayer.js';
import { type FakeScript, startFakeModelServer } from '../support/fakeModelServer.js';
import { sharedData } from '../support/golden.js';

const data = sharedData();
const task = data.byId.get('multi_turn_base_0')!;
const policyFor = (url: string) =>
  new OpenAiCompatiblePolicy({ baseUrl: url, model: 'scripted', maxRetries: 0, timeoutMs: 5000 });
const systemOf = (body: { messages?: readonly Record<string, unknown>[] }) =>
  String(body.messages?.[0]?.content ?? '');

describe('rollout loop', () => {
  it('training rollouts see the interface; evaluation rollouts see the original environment', async () => {
    const server = await startFakeModelServer(bfclPlayer(data, { [task.id]: 'gt' }, 'hermes'));
    try {
      const state = initialInterfaceState({
        alwaysOn: ['requiredMarks', 'allowedValues', 'instruction', 'affordance'],
      });
      const trained = await rollout(task, data, policyFor(server.url), {
        format: formatAdapter('hermes'),
        trainingInterface: { ctx: trainingContext(), state },
      });
      expect(trained.reward).toBe(1);
      const trainingPrompt = systemOf(server.requests[0]!);
      expect(trainingPrompt).toContain('(required)');
      expect(trainingPrompt).toContain('never invent a tool');

      const before = server.requests.length;
      const evaluated = await rollout(task, data, policyFor(server.url), { format: formatAdapter('hermes') });
      expect(evaluated.reward).toBe(1);
      const evalPrompt = systemOf(server.requests[before]!);
      expect(evalPrompt).not.toContain('(required)');
      expect(evalPrompt).not.toContain('never invent a tool');
    } finally {
      await server.close();
    }
  });

  it('training answers malformed output like the env service and lets the policy retry', async () => {
    const player = bfclPlayer(data, { [task.id]: 'gt' }, 'python');
    // First a malformed call list, then (after the error reply) the right calls for turn 0.
    const script: FakeScript = (body, i) => {
      if (i === 0) return { content: "[cd(folder='document'" };
      if (i === 1) return { content: `[${task.groundTruth[0]!.join(', ')}]` };
      return player(body, i);
    };
    const server = await startFakeModelServer(script);
    try {
      const t = await rollout(task, data, policyFor(server.url), {
        format: formatAdapter('python', 'lenient'),
        onParseError: 'reply',
      });
      const second = server.requests[1]!.messages!;
      expect(String(second[second.length - 1]!.content)).toMatch(/^\[ERROR\] Invalid tool call format: /);
      expect(t.turns[0]!.steps[0]!.parseError).toContain('was never closed');
      expect(t.reward).toBe(1);
    } finally {
      await server.close();
    }
  });

  it('runs the calls as written: a value the decoder writes as no literal (1e400 as inf) is executed as the official executor runs it', async () => {
    const server = await startFakeModelServer((_body, i) => ({
      content: i === 0 ? '[cd(folder=1e400)]' : 'Done.',
    }));
    try {
      const t = await rollout(task, data, policyFor(server.url), { format: formatAdapter('python') });
      const [call] = t.turns[0]!.steps[0]!.calls;
      expect(call!.call).toBe('cd(folder=inf)');
      expect(call!.output).toBe(
        new TaskEnvironment({
          taskId: task.id,
          involvedClasses: task.involvedClasses,
          initialConfig: task.initialConfig,
          longContext: false,
        }).execute('cd(folder=inf)'),
      );
    } finally {
      await server.close();
    }
  });

  it('records token ids, logprobs, latency and usage when the server returns them', async () => {
    const player = bfclPlayer(data, { [task.id]: 'gt' }, 'native');
    const server = await startFakeModelServer(async (body, i) => ({
      ...(await player(body, i)),
      tokenIds: [5, 6, 7],
      logprobs: [-0.1, -0.2, -0.3],
    }));
    try {
      const policy = new OpenAiCompatiblePolicy({
        baseUrl: server.url,
        model: 'scripted',
        maxRetries: 0,
        returnLogprobs: true,
      });
      const t = await rollout(task, data, policy, { format: formatAdapter('native') });
      const step = t.turns[0]!.steps[0]!;
      expect(step.tokenIds).toEqual([5, 6, 7]);
      expect(step.logprobs).toEqual([-0.1, -0.2, -0.3]);
      expect(step.latencyMs).toBeGreaterThanOrEqual(0);
      expect(step.usage?.completionTokens).toBeGreaterThanOrEqual(0);
    } finally {
      await server.close();
    }
  });

  it("records each turn's request as the model was sent it, the reveal turn's fixed message too", async () => {
    const missFunc = data.tasks.find((t) => t.category === 'miss_func' && t.missedFunction)!;
    // the native format sends tool results as tool messages: the user messages are the turns' own
    const server = await startFakeModelServer(bfclPlayer(data, { [missFunc.id]: 'gt' }, 'native'));
    try {
      const t = await rollout(missFunc, data, policyFor(server.url), { format: formatAdapter('native') });
      expect(t.turns).toHaveLength(missFunc.question.length);
      // the user messages of the last request sent: every turn's, in order
      const last = server.requests.at(-1)!.messages ?? [];
      const sentUser = last.filter((m) => m.role === 'user').map((m) => m.content);
      expect(t.turns.flatMap((turn) => turn.request!.map((m) => m.content))).toEqual(sentUser);
      const reveal = t.turns[missFunc.missedFunction!.turn]!;
      expect(reveal.request).toEqual([{ role: 'user', content: ADDITIONAL_FUNCTION_MESSAGE }]);
      expect(t.turns[0]!.request).toEqual(missFunc.question[0]);

      // a trajectory rebuilt from calls alone (a BFCL result file) has them as well
      const calls = t.turns.map((turn) =>
        turn.steps.filter((st) => st.calls.length > 0).map((st) => st.calls.map((c) => c.call)),
      );
      const rebuilt = trajectoryFromCalls(missFunc, calls, data);
      expect(rebuilt.turns.map((turn) => turn.request)).toEqual(t.turns.map((turn) => turn.request));
    } finally {
      await server.close();
    }
  });

  it('cuts a policy that makes valid calls forever at maxStepsPerTurn, retries counted', async () => {
    // every answer is a valid call, except the first, which does not parse
    const script: FakeScript = (_body, i) => ({ content: i === 0 ? '[ls(' : '[ls()]' });
    const server = await startFakeModelServer(script);
    try {
      const t = await rollout(task, data, policyFor(server.url), {
        format: formatAdapter('python', 'lenient'),
        onParseError: 'reply',
        maxStepsPerTurn: 4,
      });
      // the retry and three calls are the turn's four steps; the fifth step calls and quits
      expect(server.requests.length).toBe(5);
      expect(t.forceQuit).toBe(true);
      expect(t.reward).toBe(0);
      expect(t.turns.slice(1).every((turn) => turn.steps.length === 0)).toBe(true);
      expect(t.turns[0]!.steps.map((s) => (s.parseError ? 'retry' : s.calls.length))).toEqual([
        'retry',
        1,
        1,
        1,
        1,
      ]);
    } finally {
      await server.close();
    }
  });

  it('keeps the official 20-step limit when the rollout sets none (strict evaluation)', async () => {
    const server = await startFakeModelServer(() => ({ content: '[ls()]' }));
    try {
      const t = await rollout(task, data, policyFor(server.url), { format: formatAdapter('python') });
      expect(server.requests.length).toBe(21);
      expect(t.forceQuit).toBe(true);
      expect(t.turns[0]!.steps).toHaveLength(21);
    } finally {
      await server.close();
    }
  });
  it('a policy with a prompt budget is shown as much of the interface as its first prompt fits', async () => {
    const tok = Tokenizer.fromJSON(
      JSON.parse(readFileSync(join(BASE_CHECKPOINT_DIR, TOKENIZER_FILE), 'utf8')),
    );
    const server = await startFakeModelServer(bfclPlayer(data, { [task.id]: 'gt' }, 'hermes'));
    // the server's model, measured with the embedded tokenizer at a chosen context length
    const budgeted = (contextLength: number): Policy => {
      const p = policyFor(server.url);
      return {
        name: p.name,
        complete: (r, s) => p.complete(r, s),
        promptLength: (r) => embeddedPromptLength(tok, contextLength, r),
      };
    };
    const firstPrompt = (i: number) =>
      embeddedPromptLength(tok, 1 << 20, {
        messages: server.requests[i]!.messages!.slice(0, 2) as unknown as ChatMessage[],
      }).tokens;
    const state = initialInterfaceState({
      alwaysOn: ['requiredMarks', 'allowedValues', 'instruction', 'affordance'],
    });
    const format = formatAdapter('hermes');
    const train = (policy: Policy) =>
      rollout(task, data, policy, { format, trainingInterface: { ctx: trainingContext(), state } });
    try {
      // room enough: nothing dropped, nothing recorded
      const roomy = await train(budgeted(1 << 20));
      expect(roomy.interfaceDropped).toBeUndefined();
      const whole = firstPrompt(0);
      let at = server.requests.length;
      await rollout(task, data, policyFor(server.url), { format });
      const plain = firstPrompt(at);
      const plainSystem = systemOf(server.requests[at]!);
      expect(whole).toBeGreaterThan(plain);

      // one token short of the whole interface: the first part in drop order goes, the rest stays
      const budget = whole - 1;
      at = server.requests.length;
      const half = await train(budgeted(budget + 129)); // 128 tokens for the completion, 1 for the marker
      const dropped = half.interfaceDropped ?? [];
      const order = dropOrder(state, format.schemaShown);
      expect(order).toEqual(['affordance', 'instruction', 'allowedValues', 'requiredMarks']);
      expect(dropped).toEqual(['affordance']);
      expect(systemOf(server.requests[at]!)).not.toContain(AFFORDANCE_LINE);
      expect(firstPrompt(at)).toBeLessThanOrEqual(budget);
      expect(half.reward).toBe(1);

      // not even the environment's prompt fits: all of the interface goes, and the policy is sent
      // exactly the prompt it gets without the interface
      at = server.requests.length;
      const tight = await train(budgeted(plain + 100));
      expect(tight.interfaceDropped).toEqual(order);
      expect(systemOf(server.requests[at]!)).toBe(plainSystem);
    } finally {
      await server.close();
    }
  });
});
