/**
 * The guided update on a Tinker learner, against the Tinker-protocol test server: a rollout
 * sampled under the interface sends a second datum whose model input is the same completion after
 * the original environment's prompt (the run's chat template, no interface text) and whose
 * `logprobs` are the sampler's, taken under the interface: the service's importance-sampling and
 * PPO losses then weigh it by pi(original) / pi_sampler(interface).
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadMiniSuite } from '../../src/envs/mini/index.js';
import { buildDist, seal } from '../support/cli.js';
import { QWEN3_DIR, qwen3Renderer } from '../support/render.js';
import { oracleModel } from '../support/tinker-oracle.js';
import { startTinkerServer, type TinkerTestServer } from '../support/tinker-server.js';
import { tinkerTrainArgs } from '../support/tiny-run.js';

interface WireDatum {
  readonly model_input: { readonly chunks: readonly { readonly tokens: readonly number[] }[] };
  readonly loss_fn_inputs: {
    readonly target_tokens: { readonly data: readonly number[] };
    readonly logprobs: { readonly data: readonly number[] };
    readonly advantages: { readonly data: readonly number[] };
  };
}

let server: TinkerTestServer;
const sent: WireDatum[] = [];
const renderer = qwen3Renderer();

/** the datums of every forward_backward body, whatever wraps them */
function datumsOf(body: unknown): WireDatum[] {
  if (Array.isArray(body)) return body.flatMap(datumsOf);
  if (typeof body !== 'object' || body === null) return [];
  if ('model_input' in body && 'loss_fn_inputs' in body) return [body as WireDatum];
  return Object.values(body).flatMap(datumsOf);
}

/** a datum's full token sequence, and the positions it trains (their tokens and sampling logprobs) */
function parts(d: WireDatum) {
  const input = d.model_input.chunks.flatMap((c) => c.tokens);
  const targets = d.loss_fn_inputs.target_tokens.data;
  const tokens = [input[0]!, ...targets];
  const trained: [number, number][] = [];
  let first = -1;
  d.loss_fn_inputs.advantages.data.forEach((a, i) => {
    const q = d.loss_fn_inputs.logprobs.data[i]!;
    if (a !== 0 || q !== 0) {
      if (first < 0) first = i + 1;
      trained.push([targets[i]!, q]);
    }
  });
  return { tokens, prompt: tokens.slice(0, first), trained: JSON.stringify(trained) };
}

describe('the guided update on a Tinker learner', { timeout: 600_000 }, () => {
  beforeAll(async () => {
    await buildDist();
    server = await startTinkerServer({
      model: oracleModel(loadMiniSuite(), renderer),
      apiKey: 'test-key',
      fault: (c) => {
        if (c.route === 'forward_backward') sent.push(...datumsOf(c.body));
        return undefined;
      },
    });
  }, 600_000);
  afterAll(async () => {
    await server?.close();
  });

  it("sends the original prompt's datum beside the rollout's, with the sampler's logprobs", async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'seal-tinker-guided-')), 'run');
    const r = await seal(
      tinkerTrainArgs(out, QWEN3_DIR, {
        baseUrl: server.url,
        method: 'seal',
        rounds: 1,
        tasksPerRound: 3,
        groupSize: 4,
        maxSteps: 2,
        maxTokens: 256,
        loraRank: 8,
        schemaCues: 'on',
        guidedUpdate: true,
      }),
      { TINKER_API_KEY: 'test-key' },
    );
    expect(r.code, r.stderr).toBe(0);
    const round = JSON.parse(readFileSync(join(out, 'rounds.jsonl'), 'utf8').split('\n')[0]!);
    expect(round.learner.guided.sequences).toBeGreaterThan(0);
    expect(sent.length).toBeGreaterThan(0);
    // every rollout saw the interface (its schema cues): its own datums carry them, the copies none
    const text = (ids: readonly number[]) => renderer.decode(ids);
    const marked = (p: ReturnType<typeof parts>) => /\(required\)|Allowed values:|Hint:/.test(text(p.prompt));
    const seen = sent.map(parts);
    const own = seen.filter(marked);
    const copies = seen.filter((p) => !marked(p));
    expect(copies.length).toBe(round.learner.guided.sequences);
    expect(own.length).toBe(round.learner.sequences - round.learner.guided.sequences);
    for (const c of copies) {
      // the very completion tokens and sampling logprobs of one of the rollout's own datums...
      const twin = own.find((o) => o.trained === c.trained);
      expect(twin).toBeDefined();
      // ...after the original environment's prompt in the run's chat template
      expect(text(c.prompt)).toMatch(/^<\|im_start\|>system\n/);
      expect(c.prompt.length).toBeLessThan(twin!.prompt.length);
    }
  });
});
