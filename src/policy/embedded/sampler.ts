/**
 * KV-cache sampling from the embedded model: the prompt is prefilled in one pass, then tokens are
 * decoded one at a time with temperature / top-p / seeded randomness (greedy at temperature 0) until
 * a stop token or the token budget.
 */
import type { Arr, Gpt } from './model.js';
import { Rng } from './rng.js';

export interface SampleOptions {
  /** 0 = greedy; default 1 */
  readonly temperature?: number;
  /** nucleus mass in (0, 1]; default 1 */
  readonly topP?: number;
  /** default 256; also bounded by the context length */
  readonly maxTokens?: number;
  /** ids that end the completion (included in the returned ids) */
  readonly stopIds?: readonly number[];
  readonly seed?: number;
  /** a random stream to draw from (overrides `seed`) */
  readonly rng?: Rng;
  /** called after each token; return true to stop (e.g. a stop string was produced) */
  readonly onToken?: (id: number, ids: readonly number[]) => boolean;
}

export interface SampleResult {
  readonly tokenIds: number[];
  /**
   * per token, its log probability under the distribution it was drawn from (temperature-scaled and
   * top-p-renormalised; at temperature 1, top-p 1 exactly the model's logprobs). Under greedy decoding
   * (temperature 0) the model's own logprob (temperature 1) of the chosen token.
   */
  readonly logprobs: number[];
  readonly finishReason: 'stop' | 'length';
  readonly promptTokens: number;
}

/** scratch buffers reused across steps */
class Scratch {
  readonly probs: Float64Array;
  readonly order: Int32Array;
  constructor(V: number) {
    this.probs = new Float64Array(V);
    this.order = new Int32Array(V);
  }
}

/** pick a token from `logits` ([V]); returns [id, logprob] */
export function pickToken(
  logits: Arr,
  temperature: number,
  topP: number,
  rng: Rng,
  scratch?: { probs: Float64Array; order: Int32Array },
): [number, number] {
  const V = logits.length;
  let max = Number.NEGATIVE_INFINITY;
  let arg = 0;
  for (let j = 0; j < V; j++) {
    if (logits[j]! > max) {
      max = logits[j]!;
      arg = j;
    }
  }
  if (temperature <= 0) {
    let sum = 0;
    for (let j = 0; j < V; j++) sum += Math.exp(logits[j]! - max);
    return [arg, -Math.log(sum)];
  }
  const s = scratch ?? new Scratch(V);
  const probs = s.probs;
  let sum = 0;
  const invT = 1 / temperature;
  for (let j = 0; j < V; j++) {
    const e = Math.exp((logits[j]! - max) * invT);
    probs[j] = e;
    sum += e;
  }
  if (topP >= 1) {
    let u = rng.next() * sum;
    let pick = V - 1;
    for (let j = 0; j < V; j++) {
      u -= probs[j]!;
      if (u < 0) {
        pick = j;
        break;
      }
    }
    while (probs[pick] === 0) pick--; // guard against rounding at the tail
    return [pick, Math.log(probs[pick]! / sum)];
  }
  const order = s.order;
  for (let j = 0; j < V; j++) order[j] = j;
  const sorted = Array.from(order).sort((a, b) => probs[b]! - probs[a]! || a - b);
  const limit = topP * sum;
  let kept = 0;
  let n = 0;
  for (const id of sorted) {
    kept += probs[id]!;
    n++;
    if (kept >= limit) break;
  }
  let u = rng.next() * kept;
  let pick = sorted[n - 1]!;
  for (let i = 0; i < n; i++) {
    const id = sorted[i]!;
    u -= probs[id]!;
    if (u < 0) {
      pick = id;
      break;
    }
  }
  return [pick, Math.log(probs[pick]! / kept)];
}

/** sample a completion of `promptIds` */
export function sample(model: Gpt, promptIds: readonly number[], opts: SampleOptions = {}): SampleResult {
  const temperature = opts.temperature ?? 1;
  const topP = opts.topP ?? 1;
  if (!(topP > 0 && topP <= 1)) throw new Error('topP must be in (0, 1]');
  if (promptIds.length === 0) throw new Error('empty prompt');
  const ctx = model.config.contextLength;
  if (promptIds.length >= ctx)
    throw new Error(`prompt of ${promptIds.length} tokens leaves no room in the context of ${ctx}`);
  const budget = Math.min(opts.maxTokens ?? 256, ctx - promptIds.length);
  const stop = new Set(opts.stopIds ?? []);
  const rng = opts.rng ?? new Rng(opts.seed ?? 0);
  const scratch = new Scratch(model.config.vocabSize);
  const kv = model.newKvCache();
  let logits = model.step(kv, promptIds);
  const tokenIds: number[] = [];
  const logprobs: number[] = [];
  while (tokenIds.length < budget) {
    const [id, lp] = pickToken(logits, temperature, topP, rng, scratch);
    tokenIds.push(id);
    logprobs.push(lp);
    if (stop.has(id) || opts.onToken?.(id, tokenIds)) {
      return { tokenIds, logprobs, finishReason: 'stop', promptTokens: promptIds.length };
    }
    if (tokenIds.length >= budget) break;
    logits = model.step(kv, [id]);
  }
  return { tokenIds, logprobs, finishReason: 'length', promptTokens: promptIds.length };
}

export interface BatchSampleOptions extends Omit<SampleOptions, 'rng' | 'seed' | 'onToken'> {
  /** one seed per prompt; default seed + i */
  readonly seeds?: readonly number[];
  readonly seed?: number;
}

/**
 * Sample one completion for each prompt, decoding all of them together (one B-row matmul per
 * projection per step; finished sequences leave the batch). Each sequence draws from its own seeded
 * stream, so a result depends on its prompt and seed only (up to float rounding of the batched
 * kernels, which can change a sample only where two tokens are within rounding of a tie).
 */
export function sampleBatch(
  model: Gpt,
  prompts: readonly (readonly number[])[],
  opts: BatchSampleOptions = {},
): SampleResult[] {
  const temperature = opts.temperature ?? 1;
  const topP = opts.topP ?? 1;
  if (!(topP > 0 && topP <= 1)) throw new Error('topP must be in (0, 1]');
  const ctx = model.config.contextLength;
  const V = model.config.vocabSize;
  const stop = new Set(opts.stopIds ?? []);
  const scratch = new Scratch(V);
  const seqs = prompts.map((prompt, i) => {
    if (prompt.length === 0) throw new Error('empty prompt');
    if (prompt.length >= ctx)
      throw new Error(`prompt of ${prompt.length} tokens leaves no room in the context of ${ctx}`);
    const kv = model.newKvCache();
    return {
      kv,
      rng: new Rng(opts.seeds?.[i] ?? (opts.seed ?? 0) + i),
      budget: Math.min(opts.maxTokens ?? 256, ctx - prompt.length),
      logits: model.step(kv, prompt) as Arr,
      tokenIds: [] as number[],
      logprobs: [] as number[],
      finishReason: 'length' as 'stop' | 'length',
      promptTokens: prompt.length,
    };
  });
  let active = seqs.filter((s) => s.budget > 0);
  while (active.length > 0) {
    const next: number[] = [];
    const still: typeof active = [];
    for (const s of active) {
      const [id, lp] = pickToken(s.logits, temperature, topP, s.rng, scratch);
      s.tokenIds.push(id);
      s.logprobs.push(lp);
      if (stop.has(id)) s.finishReason = 'stop';
      else if (s.tokenIds.length < s.budget) {
        still.push(s);
        next.push(id);
      }
    }
    active = still;
    if (active.length === 0) break;
    const logits = model.stepBatch(
      active.map((s) => s.kv),
      next,
    );
    for (const [b, s] of active.entries()) s.logits = logits.subarray(b * V, (b + 1) * V);
  }
  return seqs.map(({ tokenIds, logprobs, finishReason, promptTokens }) => ({
    tokenIds,
    logprobs,
    finishReason,
    promptTokens,
  }));
}
