/**
 * What zstd does to forward_backward bodies (`proto_compress_fwdbwd`): size and time, against the
 * uncompressed protobuf body the client sends otherwise.
 *
 * The bodies are what the client's encoder makes of a realistic batch: `--datums` rollouts (default
 * 32) of `--tokens` tokens (default 2048) in groups of `--group` (default 4) that share their
 * prompt, as GRPO samples them. Token ids are real Qwen3 tokens of this repository's docs and
 * sources; a rollout is a prompt (half the tokens) and then sampled turns with tool output between
 * them. Three shapes of loss inputs, as the Tinker learner sends them (src/learner/tinker):
 *  - `ppo+kl`: logprobs on sampled tokens, and advantages that differ per token (the KL to the base
 *    model is folded into them);
 *  - `ppo`: logprobs, and one advantage per rollout on its sampled tokens;
 *  - `sft`: cross_entropy weights only.
 * Sampled logprobs are float32 values drawn like a model's: most tokens near 0, a tail down to -6.
 *
 * Prints per shape and level (`--levels`, default 1,3,9; 3 is what the client sends) the medians
 * over `--repeats` (default 7): compressed size / uncompressed size, compress and decompress time
 * per MB of uncompressed body, the protobuf encoding's own time per MB (the baseline: what a body
 * costs to make without zstd), and the upload speed under which compressing saves time overall
 * (bytes saved / compress time).
 *
 *   npx tsx bench/zstd-fwdbwd.ts [--datums 32] [--tokens 2048] [--group 4] [--levels 1,3,9] [--repeats 7]
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import {
  crossEntropyLoss,
  type LossSpec,
  ppoLossFromClipEps,
  sequenceDatum,
  type TinkerDatum,
} from '../src/tinker/datums.js';
import { encodeForwardBackwardRequest } from '../src/tinker/proto.js';
import { forwardBackwardRequest, wireData } from '../src/tinker/requests.js';
import { zstdCompress, zstdDecompress } from '../src/tinker/zstd.js';
import { qwen3Renderer } from '../test/support/render.js';

const { values } = parseArgs({
  options: {
    datums: { type: 'string', default: '32' },
    tokens: { type: 'string', default: '2048' },
    group: { type: 'string', default: '4' },
    levels: { type: 'string', default: '1,3,9' },
    repeats: { type: 'string', default: '7' },
  },
});
const datums = Number(values.datums);
const tokens = Number(values.tokens);
const group = Number(values.group);
const levels = values.levels!.split(',').map(Number);
const repeats = Number(values.repeats);
const ROOT = join(import.meta.dirname, '..');

/** a seeded PRNG (mulberry32), so every run builds the same bodies */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

/** real token ids: the repo's docs and sources, tokenized once */
function corpusTokens(): number[] {
  const files = ['docs', 'src']
    .flatMap((dir) =>
      readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' }).map((f) => join(ROOT, dir, f)),
    )
    .filter((f) => /\.(md|ts)$/.test(f))
    .sort();
  const renderer = qwen3Renderer();
  return files.flatMap((f) => renderer.encode(readFileSync(f, 'utf8')));
}

type Shape = 'ppo+kl' | 'ppo' | 'sft';

function batch(shape: Shape, corpus: number[]): TinkerDatum[] {
  const random = rng(7);
  // text is read on from a cursor, never twice (while the corpus lasts), so no two spans share
  // tokens that a compressor could find again; only a group's prompt repeats, as it does in GRPO
  let cursor = 0;
  const take = (len: number): number[] => {
    if (cursor + len > corpus.length) cursor = 0;
    cursor += len;
    return corpus.slice(cursor - len, cursor);
  };
  const promptLen = Math.floor(tokens / 2);
  const out: TinkerDatum[] = [];
  let prompt: number[] = [];
  for (let j = 0; j < datums; j++) {
    if (j % group === 0) {
      prompt = take(promptLen);
    }
    // the rest: sampled turns of 120-250 tokens, tool output of 60-150 between them
    const seq = [...prompt];
    const sampled: number[] = prompt.map(() => 0);
    let turn = true;
    while (seq.length < tokens) {
      const len = Math.min(
        tokens - seq.length,
        turn ? 120 + Math.floor(random() * 130) : 60 + Math.floor(random() * 90),
      );
      seq.push(...take(len));
      for (let i = 0; i < len; i++) sampled.push(turn ? 1 : 0);
      turn = !turn;
    }
    const trained = sampled.reduce((a, b) => a + b, 0) * datums;
    const advantage = (random() - 0.5) * 2;
    const logprobs = sampled.map((s) => {
      if (!s) return 0;
      const u = random();
      return u < 0.6 ? -Math.exp(-5 - 10 * random()) : -6 * random() ** 2;
    });
    const advantages = sampled.map((s, i) =>
      s
        ? shape === 'ppo+kl'
          ? advantage / trained - 0.01 * (logprobs[i]! + 0.3 * random())
          : advantage / trained
        : 0,
    );
    out.push(
      shape === 'sft'
        ? sequenceDatum(seq, { weights: sampled.map((s) => s / trained) })
        : sequenceDatum(seq, { logprobs, advantages }),
    );
  }
  return out;
}

/** what the client does with a batch before it is sent: the wire datums, then protobuf */
function body(shape: Shape, data: readonly TinkerDatum[]): Uint8Array {
  const loss: LossSpec = shape === 'sft' ? crossEntropyLoss : ppoLossFromClipEps(0.2);
  return encodeForwardBackwardRequest(
    forwardBackwardRequest('model-bench', 1, wireData(data, loss), loss),
    false,
  );
}

async function main(): Promise<void> {
  const corpus = corpusTokens();
  const needed = Math.ceil(datums / group) * Math.floor(tokens / 2) + datums * Math.ceil(tokens / 2);
  process.stdout.write(
    `${datums} datums x ${tokens} tokens, groups of ${group}; corpus ${corpus.length} tokens for ${needed} distinct${corpus.length < needed ? ' (too few: text repeats, the ratios flatter zstd)' : ''}; medians of ${repeats}\n\n`,
  );
  await zstdCompress(new Uint8Array(1)); // the wasm module loads once, outside the timings
  const rows: string[] = [
    '| shape | body (MB) | encode ms/MB | level | compressed / body | compress ms/MB | decompress ms/MB | pays off below (MB/s upload) |',
    '|---|--:|--:|--:|--:|--:|--:|--:|',
  ];
  for (const shape of ['ppo+kl', 'ppo', 'sft'] as const) {
    const encodeMs: number[] = [];
    const data = batch(shape, corpus);
    let plain = body(shape, data);
    for (let r = 0; r < repeats; r++) {
      const t = performance.now();
      plain = body(shape, data);
      encodeMs.push(performance.now() - t);
    }
    const mb = plain.length / 1e6;
    for (const level of levels) {
      const ratio: number[] = [];
      const cMs: number[] = [];
      const dMs: number[] = [];
      for (let r = 0; r < repeats; r++) {
        const t0 = performance.now();
        const frame = await zstdCompress(plain, level);
        const t1 = performance.now();
        const back = await zstdDecompress(frame);
        const t2 = performance.now();
        if (back.length !== plain.length || !back.every((b, i) => b === plain[i]))
          throw new Error('zstd round trip lost bytes');
        ratio.push(frame.length / plain.length);
        cMs.push(t1 - t0);
        dMs.push(t2 - t1);
      }
      const saved = plain.length * (1 - median(ratio));
      rows.push(
        `| ${shape} | ${mb.toFixed(2)} | ${(median(encodeMs) / mb).toFixed(1)} | ${level} | ${median(ratio).toFixed(3)} | ${(median(cMs) / mb).toFixed(1)} | ${(median(dMs) / mb).toFixed(1)} | ${(saved / 1e6 / (median(cMs) / 1000)).toFixed(0)} |`,
      );
    }
  }
  process.stdout.write(`${rows.join('\n')}\n`);
}

await main();
