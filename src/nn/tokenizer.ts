/**
 * A byte-level BPE tokenizer. Ids 0-255 are the raw bytes, then the special tokens (chat roles and
 * end of message), then one id per learned merge. Text is first split into chunks (letter runs,
 * single digits, punctuation runs, whitespace runs) and merges never cross chunks.
 *
 * Unlike GPT-2, a word does not take its leading space and digits are never merged: a value reads
 * the same tokens wherever it appears (`list` in "write to list.txt" and in `file_name='list.txt'`,
 * `1630` digit by digit in prose and in `value=1630.0`), so a small model writes an argument by
 * copying the tokens it read instead of learning a spelling for every context. With GPT-2 chunks a
 * 1M-parameter model trained 1,000 steps got most of its argument values wrong.
 * Training is deterministic (ties between equally frequent pairs go to the smallest pair of ids), and
 * decode(encode(s)) === s for every well-formed string.
 */

export const SPECIAL_TOKENS = ['<|system|>', '<|user|>', '<|assistant|>', '<|tool|>', '<|end|>'] as const;
export type SpecialToken = (typeof SPECIAL_TOKENS)[number];

export interface TokenizerJson {
  readonly format: 'seal-bpe';
  /** 2: the chunking above (1 was GPT-2 style; its merges do not fit these chunks) */
  readonly version: 2;
  readonly specials: readonly string[];
  /** merges in rank order; merge i creates id 256 + specials.length + i */
  readonly merges: readonly (readonly [number, number])[];
}

const CHUNK_RE = /\p{L}+|\p{N}|[^\s\p{L}\p{N}]+|\s+/gu;

function chunks(text: string): string[] {
  const out: string[] = [];
  let last = 0;
  for (const m of text.matchAll(CHUNK_RE)) {
    const i = m.index ?? 0;
    if (i > last) out.push(text.slice(last, i)); // never happens with this pattern; kept for safety
    out.push(m[0]);
    last = i + m[0].length;
  }
  if (last < text.length) out.push(text.slice(last));
  return out;
}

const encoder = new TextEncoder();

const pairKey = (a: number, b: number): number => a * 1_048_576 + b;

export class Tokenizer {
  readonly specials: readonly string[];
  readonly merges: readonly (readonly [number, number])[];
  /** pair key -> merge rank */
  private readonly ranks = new Map<number, number>();
  /** token id -> bytes */
  private readonly bytes: Uint8Array[] = [];
  private readonly specialIds = new Map<string, number>();
  private readonly specialRe: RegExp | null;
  private readonly cache = new Map<string, number[]>();

  constructor(merges: readonly (readonly [number, number])[], specials: readonly string[] = SPECIAL_TOKENS) {
    this.specials = [...specials];
    this.merges = merges.map(([a, b]) => [a, b] as const);
    for (let i = 0; i < 256; i++) this.bytes.push(Uint8Array.of(i));
    for (const s of this.specials) {
      this.specialIds.set(s, this.bytes.length);
      this.bytes.push(encoder.encode(s));
    }
    for (const [i, [a, b]] of this.merges.entries()) {
      const ba = this.bytes[a];
      const bb = this.bytes[b];
      if (!ba || !bb || a >= this.bytes.length || b >= this.bytes.length) {
        throw new Error(`invalid tokenizer: merge ${i} refers to an unknown id`);
      }
      if (this.isSpecial(a) || this.isSpecial(b))
        throw new Error(`invalid tokenizer: merge ${i} uses a special token`);
      const m = new Uint8Array(ba.length + bb.length);
      m.set(ba, 0);
      m.set(bb, ba.length);
      this.ranks.set(pairKey(a, b), i);
      this.bytes.push(m);
    }
    this.specialRe =
      this.specials.length > 0
        ? new RegExp(this.specials.map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|'), 'g')
        : null;
  }

  get vocabSize(): number {
    return this.bytes.length;
  }

  /** the id of a special token */
  special(name: string): number {
    const id = this.specialIds.get(name);
    if (id === undefined) throw new Error(`unknown special token ${name}`);
    return id;
  }

  isSpecial(id: number): boolean {
    return id >= 256 && id < 256 + this.specials.length;
  }

  /** train on a corpus: `vocabSize` = 256 bytes + specials + merges (fewer when pairs run out) */
  static train(
    corpus: string | readonly string[],
    vocabSize: number,
    specials: readonly string[] = SPECIAL_TOKENS,
  ): Tokenizer {
    const nMerges = vocabSize - 256 - specials.length;
    if (nMerges < 0) throw new Error(`vocabSize must be at least ${256 + specials.length}`);
    const texts = typeof corpus === 'string' ? [corpus] : corpus;
    const specialRe =
      specials.length > 0
        ? new RegExp(specials.map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|'), 'g')
        : null;
    const counts = new Map<string, number>();
    for (const text of texts) {
      const parts = specialRe ? text.split(specialRe) : [text];
      for (const part of parts) for (const c of chunks(part)) counts.set(c, (counts.get(c) ?? 0) + 1);
    }
    // sort the chunk list so training does not depend on insertion order
    const words = [...counts.entries()]
      .sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0))
      .map(([w, n]) => ({ ids: Array.from(encoder.encode(w)), n }));
    const merges: [number, number][] = [];
    let nextId = 256 + specials.length;
    const pairCounts = new Map<number, number>();
    for (const w of words) {
      for (let i = 0; i + 1 < w.ids.length; i++) {
        const k = pairKey(w.ids[i]!, w.ids[i + 1]!);
        pairCounts.set(k, (pairCounts.get(k) ?? 0) + w.n);
      }
    }
    for (let m = 0; m < nMerges; m++) {
      let best = -1;
      let bestN = 0;
      for (const [k, n] of pairCounts) {
        if (n > bestN || (n === bestN && n > 0 && k < best)) {
          best = k;
          bestN = n;
        }
      }
      if (best < 0 || bestN < 2) break;
      const a = Math.floor(best / 1_048_576);
      const b = best % 1_048_576;
      const id = nextId++;
      merges.push([a, b]);
      for (const w of words) {
        const ids = w.ids;
        let has = false;
        for (let i = 0; i + 1 < ids.length; i++) {
          if (ids[i] === a && ids[i + 1] === b) {
            has = true;
            break;
          }
        }
        if (!has) continue;
        // remove this word's old pair counts, merge, add new ones
        for (let i = 0; i + 1 < ids.length; i++) {
          const k = pairKey(ids[i]!, ids[i + 1]!);
          pairCounts.set(k, (pairCounts.get(k) ?? 0) - w.n);
        }
        const out: number[] = [];
        for (let i = 0; i < ids.length; i++) {
          if (i + 1 < ids.length && ids[i] === a && ids[i + 1] === b) {
            out.push(id);
            i++;
          } else out.push(ids[i]!);
        }
        w.ids = out;
        for (let i = 0; i + 1 < out.length; i++) {
          const k = pairKey(out[i]!, out[i + 1]!);
          pairCounts.set(k, (pairCounts.get(k) ?? 0) + w.n);
        }
      }
      pairCounts.delete(best);
      for (const [k, n] of pairCounts) if (n <= 0) pairCounts.delete(k);
    }
    return new Tokenizer(merges, specials);
  }

  private encodeChunk(chunk: string): number[] {
    const hit = this.cache.get(chunk);
    if (hit) return hit;
    let ids = Array.from(encoder.encode(chunk));
    while (ids.length > 1) {
      let bestRank = Number.POSITIVE_INFINITY;
      let bestI = -1;
      for (let i = 0; i + 1 < ids.length; i++) {
        const r = this.ranks.get(pairKey(ids[i]!, ids[i + 1]!));
        if (r !== undefined && r < bestRank) {
          bestRank = r;
          bestI = i;
        }
      }
      if (bestI < 0) break;
      const [a, b] = this.merges[bestRank]!;
      const id = 256 + this.specials.length + bestRank;
      const out: number[] = [];
      for (let i = 0; i < ids.length; i++) {
        if (i + 1 < ids.length && ids[i] === a && ids[i + 1] === b) {
          out.push(id);
          i++;
        } else out.push(ids[i]!);
      }
      ids = out;
    }
    if (this.cache.size < 100_000) this.cache.set(chunk, ids);
    return ids;
  }

  /** encode text without special-token recognition (special strings become ordinary bytes) */
  encodeOrdinary(text: string): number[] {
    const out: number[] = [];
    for (const c of chunks(text)) for (const id of this.encodeChunk(c)) out.push(id);
    return out;
  }

  /** encode text; occurrences of special-token strings become their special ids */
  encode(text: string): number[] {
    if (!this.specialRe) return this.encodeOrdinary(text);
    const out: number[] = [];
    let last = 0;
    for (const m of text.matchAll(this.specialRe)) {
      const i = m.index ?? 0;
      if (i > last) for (const id of this.encodeOrdinary(text.slice(last, i))) out.push(id);
      out.push(this.special(m[0]));
      last = i + m[0].length;
    }
    if (last < text.length) for (const id of this.encodeOrdinary(text.slice(last))) out.push(id);
    return out;
  }

  /** the raw bytes of a sequence of ids */
  decodeBytes(ids: readonly number[]): Uint8Array {
    let n = 0;
    for (const id of ids) {
      const b = this.bytes[id];
      if (!b) throw new Error(`token id ${id} out of range`);
      n += b.length;
    }
    const out = new Uint8Array(n);
    let o = 0;
    for (const id of ids) {
      const b = this.bytes[id]!;
      out.set(b, o);
      o += b.length;
    }
    return out;
  }

  /** decode ids to text (invalid UTF-8 from a partial sequence becomes U+FFFD) */
  decode(ids: readonly number[]): string {
    return new TextDecoder().decode(this.decodeBytes(ids));
  }

  toJSON(): TokenizerJson {
    return {
      format: 'seal-bpe',
      version: 2,
      specials: [...this.specials],
      merges: this.merges.map(([a, b]) => [a, b]),
    };
  }

  static fromJSON(json: unknown): Tokenizer {
    const j = (typeof json === 'object' && json !== null ? json : {}) as Partial<TokenizerJson>;
    if (
      j.format !== 'seal-bpe' ||
      j.version !== 2 ||
      !Array.isArray(j.merges) ||
      !Array.isArray(j.specials)
    ) {
      throw new Error('not a seal-bpe tokenizer of version 2 (the current chunking); rebuild the checkpoint');
    }
    return new Tokenizer(j.merges, j.specials);
  }
}

/** the chat roles of the embedded model's prompt format */
export type ChatRole = 'system' | 'user' | 'assistant' | 'tool';

/**
 * A chat message as the samplers and renderers hold it (the shape of the policy contract's
 * messages, stated here so that the model's own text form needs nothing from above it).
 */
export interface ChatSource {
  readonly role: ChatRole;
  readonly content: string | null;
  readonly tool_calls?: readonly {
    readonly function: { readonly name: string; readonly arguments: string };
  }[];
}

/**
 * The text the embedded model sees for one message: an assistant's tool calls become JSON lines
 * `{"name": ..., "arguments": ...}` after its content, the model having no native tool calls.
 */
export function messageText(m: ChatSource): { role: ChatRole; content: string } {
  let content = m.content ?? '';
  if (m.role === 'assistant')
    for (const c of m.tool_calls ?? [])
      content += `${content ? '\n' : ''}${JSON.stringify({ name: c.function.name, arguments: c.function.arguments })}`;
  return { role: m.role, content };
}

/**
 * Render a chat as token ids: `<|role|>content<|end|>` per message, then `<|assistant|>` when
 * `addGenerationPrompt`. Returns the ids and, per id, whether it belongs to an assistant message's
 * content or its closing `<|end|>` (the tokens that carry loss in training).
 */
export function encodeChat(
  tok: Tokenizer,
  messages: readonly { readonly role: ChatRole; readonly content: string }[],
  addGenerationPrompt = false,
): { ids: number[]; assistantMask: number[] } {
  const ids: number[] = [];
  const mask: number[] = [];
  const end = tok.special('<|end|>');
  for (const m of messages) {
    ids.push(tok.special(`<|${m.role}|>`));
    mask.push(0);
    const a = m.role === 'assistant' ? 1 : 0;
    for (const id of tok.encodeOrdinary(m.content)) {
      ids.push(id);
      mask.push(a);
    }
    ids.push(end);
    mask.push(a);
  }
  if (addGenerationPrompt) {
    ids.push(tok.special('<|assistant|>'));
    mask.push(0);
  }
  return { ids, assistantMask: mask };
}
