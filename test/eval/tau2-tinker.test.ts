/**
 * `seal eval --suite tau2 --policy tinker`: a τ² conversation played by a Tinker sampler through
 * a model's own chat format (Qwen3's template, read from its tokenizer files), against the Tinker
 * test server on loopback; the simulated user behind a scripted OpenAI-compatible server. The
 * sampler writes Qwen's `<tool_call>` block; the call must reach the domain's tool, its result
 * come back as Qwen's `<tool_response>`, and the prompt the sampler saw must hold the domain's
 * policy and its tools as the template declares them.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EpisodeRow } from '../../src/eval/episodes.js';
import { buildDist, seal } from '../support/cli.js';
import { type FakeModelServer, startFakeModelServer } from '../support/fakeModelServer.js';
import { QWEN3_DIR, qwen3Renderer } from '../support/render.js';
import { HAS_TAU2, noteMissingTau2, TAU2_ROOT } from '../support/tau2-data.js';
import { startTinkerServer, type TinkerTestModel, type TinkerTestServer } from '../support/tinker-server.js';

noteMissingTau2('seal eval --suite tau2 --policy tinker');

const renderer = qwen3Renderer();
const END = renderer.tokenId('<|im_end|>')!;

/** The agent: a calculation first; once a tool has answered, the answer in words. */
const agent: TinkerTestModel = {
  logprobs: (_input, targets) => targets.map(() => -0.5),
  sample(prompt, params) {
    const text = renderer.decode([...prompt]);
    const reply = text.includes('<tool_response>')
      ? 'The answer is 4.'
      : '<tool_call>\n{"name": "calculate", "arguments": {"expression": "2 + 2"}}\n</tool_call>';
    const tokens = [...renderer.encode(reply), END].slice(0, params.maxTokens);
    return { tokens, logprobs: tokens.map(() => -0.5), stopReason: 'stop' };
  },
};

let tinker: TinkerTestServer;
let user: FakeModelServer;
const root = mkdtempSync(join(tmpdir(), 'seal-tau2-tinker-'));
beforeAll(async () => {
  await buildDist();
  tinker = await startTinkerServer({ model: agent, apiKey: 'test-key' });
  user = await startFakeModelServer((body) => {
    const own = (body.messages ?? []).filter((m) => m.role === 'assistant');
    return { content: own.length === 0 ? 'What is two plus two?' : 'Thanks. ###STOP###' };
  });
});
afterAll(async () => {
  await tinker?.close();
  await user?.close();
  rmSync(root, { recursive: true, force: true });
});

const ENV = { TINKER_API_KEY: 'test-key', OPENAI_API_KEY: 'test' };
const evalArgs = (chatFormat: string, out: string) => [
  'eval',
  '--suite',
  'tau2',
  '--tau2-data',
  TAU2_ROOT,
  '--split',
  'retail/0',
  '--policy',
  'tinker',
  '--model',
  'Qwen/Qwen3-8B',
  '--tokenizer',
  QWEN3_DIR,
  '--base-url',
  tinker.url,
  '--renderer',
  chatFormat,
  '--max-tokens',
  '64',
  '--user-model',
  'scripted-user',
  '--user-base-url',
  user.url,
  '--out',
  out,
];

describe.runIf(HAS_TAU2)('seal eval --suite tau2 --policy tinker', () => {
  // qwen3: seal's own module of the family's format; hf_template: the model's Jinja template
  it.each(['qwen3', 'hf_template'])(
    '%s: plays the conversation in the model’s own chat format: calls parsed, results returned, the policy in the prompt',
    async (chatFormat) => {
      const out = join(root, chatFormat);
      const before = tinker.samples.length;
      const r = await seal(evalArgs(chatFormat, out), ENV);
      expect(r.code, r.stderr).toBe(0);
      const rows = readFileSync(join(out, 'episodes.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as EpisodeRow);
      expect(rows).toHaveLength(1);
      const row = rows[0]!;
      expect(row.reason).toBe('user_stop');
      // the call reached retail's calculator and its result came back; then the answer in words
      const sim = JSON.parse(row.record as string) as {
        messages: { role: string; content: string | null; tool_calls?: { name: string }[] }[];
      };
      expect(sim.messages.map((m) => m.role)).toEqual([
        'assistant',
        'user',
        'assistant',
        'tool',
        'assistant',
        'user',
      ]);
      expect(sim.messages[2]!.tool_calls?.map((c) => c.name)).toEqual(['calculate']);
      expect(sim.messages[3]!.content).toBe('4.0');
      expect(sim.messages[4]!.content).toBe('The answer is 4.');

      // what the sampler was shown: Qwen3's template, the retail policy, its tools declared in <tools>
      const prompts = tinker.samples
        .slice(before)
        .filter((s) => !s.promptLogprobs)
        .map((s) => renderer.decode([...s.prompt]));
      expect(prompts).toHaveLength(2);
      expect(prompts[0]).toMatch(/^<\|im_start\|>system\n/);
      expect(prompts[0]).toContain('# Retail agent policy');
      expect(prompts[0]).toMatch(/<tools>[\s\S]*"name": "calculate"[\s\S]*<\/tools>/);
      expect(prompts[0]).toContain('<|im_start|>user\nWhat is two plus two?<|im_end|>');
      expect(prompts[1]).toContain('<tool_response>\n4.0\n</tool_response>');
      expect(JSON.parse(readFileSync(join(out, 'run.json'), 'utf8'))).toMatchObject({
        policy: 'tinker',
        suite: 'tau2',
        renderer: chatFormat,
      });
    },
    120_000,
  );

  it('refuses to resume a folder with another chat format, and leaves it as it was', async () => {
    const out = join(root, 'qwen3');
    const before = readFileSync(join(out, 'episodes.jsonl'), 'utf8');
    const r = await seal(evalArgs('hf_template', out), ENV);
    expect(r.code).toBe(2);
    // (the template's default tool format differs too: hermes, where the family module's is native)
    expect(r.stderr).toContain('renderer: "qwen3" there, "hf_template" now');
    expect(readFileSync(join(out, 'episodes.jsonl'), 'utf8')).toBe(before);
  });
});
