/**
 * KV-cache sampling from the embedded model: the prompt is prefilled in one pass, then tokens are
 * decoded one at a time with temperature / top-p / seeded randomness (greedy at temperature 0) until
 * a stop token or the token budget.
 */

import { opsFor } from '../../nn/backends.js';
import { forkKvCache, freeKv, type KvCache, newKvCache, step, stepBatch } from '../../nn/decoding.js';
import { type Arr, type Gpt, withWeightsPinned } from '../../nn/model.js';
import type { Ops } from '../../nn/ops.js';
import { commonPrefix, startsWith } from '../../util/id-sequences.js';
import { Rng } from '../../util/rng.js';

export interface PrefixCacheOptions {
  /**
   * most token positions of room kept over all entries (each costs 2 x layers x width floats, and
   * an entry holds a context's worth); default 65,536
   */
  readonly maxTokens?: number;
  /** most entries; default 128 */
  readonly maxEntries?: number;
  /**
   * the model's weights never change while the cache lives (a sampler thread's own copy), so the
   * checksum of every weight that `validate` takes once per batch is skipped; default false
   */
  readonly weightsFixed?: boolean;
}

interface PrefixEntry {
  readonly ids: Int32Array;
  /** holds ids.length positions */
  readonly kv: KvCache;
  used: number;
}

/**
 * Keys and values of sequences already run through the model, so that a prompt sharing a prefix
 * with one of them (the next step of a rollout, another rollout of the same task) only runs its new
 * tokens. Reuse is exact: every kernel computes a position's row from that row and the cached rows
 * alone, in the same order whatever the number of rows run with it, so a prompt continued from a
 * cached prefix gets bit-identical logits to the same prompt run whole (pinned by the tests).
 *
 * Entries are KV caches handed over, not copied: `put` takes the caller's cache, and `take` hands
 * an entry back whole when the new prompt continues all of it (the next step of a rollout), and a
 * prompt that branches off inside an entry (another rollout of the same task) gets a fork that
 * reads the shared positions where the entry holds them (`forkKvCache`). Least recently used
 * entries leave first. The budget counts each block's own room (a block that forks still read
 * stays until they are freed), and has to hold the working set: rollouts run round robin (one
 * step each in turn) with less room than their entries take would each find its entry gone.
 */
export class PrefixCache {
  private readonly entries: PrefixEntry[] = [];
  /** positions of room held by the entries */
  private room = 0;
  /** checksum of the weights the entries were computed with */
  private stamp: number | undefined;
  private clock = 0;
  private readonly maxTokens: number;
  private readonly maxEntries: number;
  private readonly weightsFixed: boolean;
  /** prompt tokens served from the cache / run through the model, since construction */
  hits = 0;
  misses = 0;

  constructor(
    private readonly model: Gpt,
    opts: PrefixCacheOptions = {},
  ) {
    this.maxTokens = opts.maxTokens ?? 65536;
    this.maxEntries = opts.maxEntries ?? 128;
    this.weightsFixed = opts.weightsFixed ?? false;
  }

  get size(): number {
    return this.entries.length;
  }

  /**
   * Empties the cache if the model's weights changed since its entries were made (a trainer
   * updates them in place between rounds): keys and values of other weights would be wrong. A
   * checksum of every weight's bits, ~1 ms per million weights, once per batch of requests.
   */
  validate(): void {
    if (this.weightsFixed) return;
    const p = this.model.params;
    const bits = new Int32Array(p.buffer, p.byteOffset, p.byteLength >> 2);
    let h = 0x811c9dc5;
    for (let i = 0; i < bits.length; i++) h = Math.imul(h ^ bits[i]!, 0x01000193);
    if (h !== this.stamp) {
      this.clear();
      this.stamp = h;
    }
  }

  /**
   * A KV cache, with room for `room` positions (default: the context), holding the longest cached
   * prefix of `ids`, at most `ids.length - 1` tokens (the last token has to run for its logits);
   * `reused` is that length. The caller owns it: it goes back with `put` or `freeKv`.
   */
  take(ids: readonly number[], room = this.model.config.contextLength): { kv: KvCache; reused: number } {
    let best = -1;
    let bestLen = 0;
    const limit = ids.length - 1;
    for (const [j, e] of this.entries.entries()) {
      const i = commonPrefix(e.ids, ids, limit);
      if (i > bestLen) {
        bestLen = i;
        best = j;
      }
    }
    if (best < 0) return { kv: newKvCache(this.model, room), reused: 0 };
    const e = this.entries[best]!;
    if (bestLen === e.ids.length && e.kv.block.rows >= room) {
      // the prompt continues the whole entry: nothing else can use it that the caller's next put
      // will not hold too
      this.entries.splice(best, 1);
      this.room -= e.kv.block.rows;
      return { kv: e.kv, reused: bestLen };
    }
    e.used = ++this.clock;
    return { kv: forkKvCache(this.model, e.kv, bestLen, ids[bestLen - 1]!, room), reused: bestLen };
  }

  /** keeps `kv`, whose positions hold `ids[0, kv.length)`; the cache owns it from now on */
  put(ids: readonly number[], kv: KvCache): void {
    const n = kv.length;
    const rows = kv.block.rows;
    if (n === 0 || rows > this.maxTokens) {
      freeKv(this.model, kv);
      return;
    }
    const key = Int32Array.from({ length: n }, (_, i) => ids[i]!);
    for (const e of this.entries) {
      if (startsWith(e.ids, key)) {
        e.used = ++this.clock; // nothing new
        freeKv(this.model, kv);
        return;
      }
    }
    // an entry this one extends is of no further use
    for (let i = this.entries.length - 1; i >= 0; i--) {
      if (startsWith(key, this.entries[i]!.ids)) this.drop(i);
    }
    this.entries.push({ ids: key, kv, used: ++this.clock });
    this.room += rows;
    while (this.room > this.maxTokens || this.entries.length > this.maxEntries) {
      let oldest = 0;
      for (let i = 1; i < this.entries.length; i++) {
        if (this.entries[i]!.used < this.entries[oldest]!.used) oldest = i;
      }
      this.drop(oldest);
    }
  }

  clear(): void {
    for (const e of this.entries) freeKv(this.model, e.kv);
    this.entries.length = 0;
    this.room = 0;
  }

  private drop(i: number): void {
    const [e] = this.entries.splice(i, 1);
    this.room -= e!.kv.block.rows;
    freeKv(this.model, e!.kv);
  }
}

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
  /** starts from the longest cached prefix of the prompt, and leaves the sequence in it */
  readonly prefixCache?: PrefixCache;
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

/** what `pickToken` computes in, reused across steps: the model's arithmetic and arrays of its dtype */
export class PickScratch {
  readonly probs: Arr;
  readonly order: Int32Array;
  constructor(
    V: number,
    readonly ops: Ops,
  ) {
    this.probs = ops.alloc(V);
    this.order = new Int32Array(V);
  }
}

/**
 * pick a token from `logits` ([V]); returns [id, logprob]. The weights come from
 * `Ops.softmaxWeights` of the scratch's arithmetic (by default the one of the logits' dtype).
 */
export function pickToken(
  logits: Arr,
  temperature: number,
  topP: number,
  rng: Rng,
  scratch: PickScratch = new PickScratch(
    logits.length,
    opsFor(logits instanceof Float64Array ? 'float64' : 'float32'),
  ),
): [number, number] {
  const V = logits.length;
  const probs = scratch.probs;
  if (temperature <= 0) {
    let arg = 0;
    for (let j = 1; j < V; j++) if (logits[j]! > logits[arg]!) arg = j;
    // the model's own logprob: of softmax at temperature 1, where the top weight is exp(0) = 1
    return [arg, -Math.log(scratch.ops.softmaxWeights(probs, logits, 1))];
  }
  const sum = scratch.ops.softmaxWeights(probs, logits, 1 / temperature);
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
  const order = scratch.order;
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
  return sampleMany(model, [{ prompt: promptIds, options: opts }])[0]!;
}

export interface SampleJob {
  readonly prompt: readonly number[];
  readonly options?: SampleOptions;
}

/**
 * Sample a completion for each job (its own prompt, seed, settings and stop rule), prefilling each
 * prompt (from the longest prefix its prefix cache holds) and then decoding all of them together:
 * one B-row matmul per projection per step, finished sequences leaving the batch. Each job's result
 * is exactly what `sample` gives it alone: every kernel computes a row the same way whatever rows
 * run with it, and each job draws from its own stream.
 */
/**
 * Throws what `sampleMany` would throw for this job. A caller that batches jobs checks each one
 * first, so that a bad job fails alone instead of failing every job batched with it.
 */
export function checkJob(model: Gpt, { prompt, options: opts = {} }: SampleJob): void {
  const ctx = model.config.contextLength;
  const topP = opts.topP ?? 1;
  if (!(topP > 0 && topP <= 1)) throw new Error('topP must be in (0, 1]');
  if (prompt.length === 0) throw new Error('empty prompt');
  if (prompt.length >= ctx)
    throw new Error(`prompt of ${prompt.length} tokens leaves no room in the context of ${ctx}`);
}

export function sampleMany(model: Gpt, jobs: readonly SampleJob[]): SampleResult[] {
  return withWeightsPinned([model], () => sampleAll(model, jobs));
}

function sampleAll(model: Gpt, jobs: readonly SampleJob[]): SampleResult[] {
  const ctx = model.config.contextLength;
  const V = model.config.vocabSize;
  const seqs = jobs.map((job) => {
    checkJob(model, job);
    const { prompt, options: opts = {} } = job;
    const topP = opts.topP ?? 1;
    return {
      prompt,
      opts,
      temperature: opts.temperature ?? 1,
      topP,
      budget: Math.min(opts.maxTokens ?? 256, ctx - prompt.length),
      stop: new Set(opts.stopIds ?? []),
      rng: opts.rng ?? new Rng(opts.seed ?? 0),
      kv: undefined as KvCache | undefined,
      logits: undefined as Arr | undefined,
      tokenIds: [] as number[],
      logprobs: [] as number[],
      finishReason: 'length' as SampleResult['finishReason'],
    };
  });
  const scratch = new PickScratch(V, model.net.ops);
  for (const cache of new Set(seqs.map((s) => s.opts.prefixCache))) cache?.validate();
  // jobs without a cache of their own still share what they have in common (a group's prompt):
  // it runs once, and they read one copy of its keys and values
  const local = seqs.some((s) => !s.opts.prefixCache) ? new PrefixCache(model, { weightsFixed: true }) : null;
  for (const [j, s] of seqs.entries()) {
    const cache = s.opts.prefixCache ?? local!;
    const { kv, reused } = cache.take(s.prompt);
    s.kv = kv;
    s.logits = step(model, kv, reused > 0 ? s.prompt.slice(reused) : s.prompt);
    cache.hits += reused;
    cache.misses += s.prompt.length - reused;
    // a later job that shares positions this one just ran (another rollout of a group) finds them
    let shared = false;
    for (let t = j + 1; t < seqs.length && !shared; t++)
      shared = commonPrefix(seqs[t]!.prompt, s.prompt) > reused;
    if (shared) cache.put(s.prompt, forkKvCache(model, kv, kv.length, kv.last));
  }
  let active = seqs.filter((s) => s.budget > 0);
  while (active.length > 0) {
    const next: number[] = [];
    const still: typeof active = [];
    for (const s of active) {
      const [id, lp] = pickToken(s.logits!, s.temperature, s.topP, s.rng, scratch);
      s.tokenIds.push(id);
      s.logprobs.push(lp);
      if (s.stop.has(id) || s.opts.onToken?.(id, s.tokenIds)) s.finishReason = 'stop';
      else if (s.tokenIds.length < s.budget) {
        still.push(s);
        next.push(id);
      }
    }
    active = still;
    if (active.length === 0) break;
    if (active.length === 1) active[0]!.logits = step(model, active[0]!.kv!, next);
    else {
      const logits = stepBatch(
        model,
        active.map((s) => s.kv!),
        next,
      );
      for (const [b, s] of active.entries()) s.logits = logits.subarray(b * V, (b + 1) * V);
    }
  }
  local?.clear();
  return seqs.map((s) => {
    if (s.opts.prefixCache) s.opts.prefixCache.put([...s.prompt, ...s.tokenIds], s.kv!);
    else freeKv(model, s.kv!);
    return {
      tokenIds: s.tokenIds,
      logprobs: s.logprobs,
      finishReason: s.finishReason,
      promptTokens: s.prompt.length,
    };
  });
}

export interface BatchSampleOptions extends Omit<SampleOptions, 'rng' | 'seed' | 'onToken'> {
  /** one seed per prompt; default seed + i */
  readonly seeds?: readonly number[];
  readonly seed?: number;
}

/** `sampleMany` of several prompts with the same settings and seeds `seeds[i]` (default seed + i) */
export function sampleBatch(
  model: Gpt,
  prompts: readonly (readonly number[])[],
  opts: BatchSampleOptions = {},
): SampleResult[] {
  const { seeds, seed = 0, ...rest } = opts;
  return sampleMany(
    model,
    prompts.map((prompt, i) => ({ prompt, options: { ...rest, seed: seeds?.[i] ?? seed + i } })),
  );
}
