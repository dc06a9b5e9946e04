/**
 * A round survives a bad rollout. A sample the service refuses for good (a 400 for its prompt), or
 * one the service's max_context_length would refuse (stopped before it is sent), ends that rollout
 * as a forced quit with the reason in the trajectory; the other rollouts and the round go on. In
 * strict evaluation the same failure stops the run as before (it can be continued). In process, the
 * Tinker test server on loopback with the oracle model.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatAdapter } from '../../../src/agent/formats/index.js';
import { rollout } from '../../../src/bfcl/rollout.js';
import { loadMiniSuite } from '../../../src/envs/mini/index.js';
import { TinkerLearner } from '../../../src/learner/tinker/learner.js';
import { SampleFailedError } from '../../../src/policy/policy.js';
import { TinkerClient } from '../../../src/tinker/client.js';
import { qwen3Renderer } from '../../support/render.js';
import { oracleModel } from '../../support/tinker-oracle.js';
import { fastOptions, startTinkerServer, type TinkerTestServer } from '../../support/tinker-server.js';

const data = loadMiniSuite();
const renderer = qwen3Renderer();
const task = data.tasks.find((t) => t.category === 'base' && t.question.length >= 2)!;
let refuse = false;
let sent = 0;
let server: TinkerTestServer;

async function policyOn(s: TinkerTestServer) {
  const client = await TinkerClient.connect(fastOptions(s.url));
  const learner = await TinkerLearner.open({
    client,
    renderer,
    baseModel: 'Qwen/Qwen3-8B',
    loraRank: 4,
    klToBase: false,
  });
  return { learner, policy: await learner.samplingPolicy() };
}

const play = (policy: Awaited<ReturnType<typeof policyOn>>['policy'], onSampleFailure?: 'end' | 'throw') =>
  rollout(task, data, policy, {
    format: formatAdapter('hermes'),
    sampling: { temperature: 1, maxTokens: 256 },
    maxStepsPerTurn: 2,
    ...(onSampleFailure ? { onSampleFailure } : {}),
  });

describe('a rollout whose sample fails for good', { timeout: 120_000 }, () => {
  beforeAll(async () => {
    server = await startTinkerServer({
      model: oracleModel(data, renderer),
      // while `refuse`, every second sample is refused by the service, as an over-long prompt would be
      fault: (c) => {
        if (!refuse || c.route !== 'asample') return undefined;
        sent++;
        return sent % 2 === 0 ? { fail: 'prompt is too long' } : undefined;
      },
    });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('ends in training as a forced quit, with the service’s reason; in evaluation it stops the run', async () => {
    const { learner, policy } = await policyOn(server);
    refuse = true;
    const t = await play(policy, 'end');
    expect(t.sampleFailure).toMatch(/the service refused the sample: .*prompt is too long/);
    expect(t.forceQuit).toBe(true);
    expect(t.reward).toBe(0);
    // what it played before the refusal is kept
    expect(t.turns[0]!.steps.length).toBeGreaterThan(0);
    await expect(play(policy)).rejects.toBeInstanceOf(SampleFailedError);
    refuse = false;
    const ok = await play(policy, 'end');
    expect(ok.sampleFailure).toBeUndefined();
    await learner.close();
  });

  it('ends the rollout on an HTTP 400 for the sample (SkyRL refusing a prompt), as on a failed future', async () => {
    let n = 0;
    const skyrl = await startTinkerServer({
      flavour: 'skyrl',
      model: oracleModel(data, renderer),
      fault: (c) =>
        c.route === 'asample' && n++ === 1
          ? { status: 400, body: { detail: 'prompt length exceeds the maximum' } }
          : undefined,
    });
    try {
      const { learner, policy } = await policyOn(skyrl);
      const t = await play(policy, 'end');
      expect(t.sampleFailure).toMatch(/the service refused the sample: .*HTTP 400 .*prompt length exceeds/);
      expect(t.forceQuit).toBe(true);
      expect(t.turns[0]!.steps.length).toBeGreaterThan(0);
      await learner.close();
    } finally {
      await skyrl.close();
    }
  });

  it("does not send a prompt of exactly the service's max_context_length; one token less is sent", async () => {
    // the first prompt's length, as the service sees it
    const { learner, policy } = await policyOn(server);
    await play(policy, 'end');
    await learner.close();
    const length = server.samples.find((s) => !s.promptLogprobs)!.prompt.length;
    expect(length).toBeGreaterThan(0);
    for (const [limit, sent] of [
      [length, false],
      [length + 1, true],
    ] as const) {
      const s = await startTinkerServer({ model: oracleModel(data, renderer), maxContextLength: limit });
      try {
        const p = await policyOn(s);
        const t = await play(p.policy, 'end');
        const asked = s.samples.filter((x) => !x.promptLogprobs);
        if (sent) {
          // sent, with room for one token, and then the next (longer) prompt is stopped
          expect(asked[0]!.prompt).toHaveLength(length);
          expect(asked[0]!.maxTokens).toBe(1);
        } else {
          expect(asked).toHaveLength(0);
          expect(t.sampleFailure).toMatch(
            new RegExp(
              `: the prompt has ${length} tokens, the service's max_context_length is ${limit}; not sent$`,
            ),
          );
        }
        await p.learner.close();
      } finally {
        await s.close();
      }
    }
  });

  it("stops a prompt over the service's max_context_length before sending it", async () => {
    const small = await startTinkerServer({ model: oracleModel(data, renderer), maxContextLength: 64 });
    try {
      const { learner, policy } = await policyOn(small);
      expect(learner.maxContextLength).toBe(64);
      const t = await play(policy, 'end');
      expect(t.sampleFailure).toMatch(
        /the prompt has \d+ tokens, the service's max_context_length is 64; not sent/,
      );
      expect(small.requests.filter((r) => r.route === 'asample')).toHaveLength(0);
      await learner.close();
    } finally {
      await small.close();
    }
  });
});
