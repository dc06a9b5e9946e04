/**
 * Full-sequence causal multi-head attention (training forward and backward) on Float32Arrays,
 * with every product per head done by the SIMD kernel in linear memory:
 *
 *   forward:  S = Q K^T, P = softmax(scale * S) row-wise over s <= t, Y = P V
 *   backward: dP = dY V^T, dS = scale * P * (dP - rowsum(P * dP)), dQ = dS K, dK = dS^T Q, dV = P^T dY
 *
 * T rows may follow P past ones (a shared prompt's keys and values, see `AttentionShape`): the
 * score matrices are then [T, P + T] and the diagonal sits P columns right. The causal modes of
 * `sgemm` skip the blocks above it; P and dS keep exact zeros above it, since the kernels only cut
 * at tile granularity. In linear memory the score matrices have rows of P + T rounded up to 4
 * floats, so the row-wise softmax kernels work in whole vectors without touching the next row.
 * Layouts outside match the reference kernels (reference-ops.ts): qkv [P + T, 3D] (q | k | v,
 * heads side by side), y/dy [T, D]; att [H, T, stride] keeps linear memory's stride.
 */
import type { AttentionShape, CachedAttentionShape, KvBlock } from '../ops.js';
import { scopy, sgemm, stranspose } from './gemm.js';
import { Causal } from './gemm-code.js';
import { heap, regions, residentAlloc, residentFree } from './heap.js';
import { vmath } from './module.js';

/**
 * The row stride of a transposed head [hd, T]: T would make it a multiple of 1 KiB for the usual
 * lengths, and a k loop stepping down such rows reuses a few L1 sets until they thrash.
 */
const transposedStride = (T: number) => ((T + 3) & ~3) + 4;

/**
 * Probabilities keep linear memory's row stride (keys rounded up to 4 floats, the padding zero) in
 * the cache too, so a head's [T, ld] block goes out and back in one copy rather than row by row.
 */
export const attentionStrideF32 = (keys: number): number => (keys + 3) & ~3;

export function attentionForwardF32(
  y: Float32Array,
  att: Float32Array | null,
  qkv: Float32Array,
  s: AttentionShape,
): void {
  const { t: T, d: D, heads: H } = s;
  const P0 = s.past ?? 0;
  const L = P0 + T;
  const hd = D / H;
  const scale = 1 / Math.sqrt(hd);
  const D3 = 3 * D;
  const ld = attentionStrideF32(L);
  const ldt = transposedStride(L);
  const [pqkv, pkt, pv, ps, py] = regions(L * D3, hd * ldt, L * hd, T * ld, T * D);
  const h = heap();
  h.set(qkv.subarray(0, L * D3), pqkv);
  for (let hh = 0; hh < H; hh++) {
    const kv = pqkv + hh * hd;
    const q = kv + P0 * D3;
    // B operands go in with short, unaligned row strides: K^T, and V as its own [L, hd]
    stranspose(pkt, kv + D, L, hd, D3, ldt);
    scopy(pv, hd, kv + 2 * D, D3, L, hd);
    sgemm(ps, ld, q, D3, 1, pkt, ldt, 0, T, hd, L, false, false, Causal.columns, P0);
    vmath.softmaxCausal(ps * 4, T, ld, scale, P0);
    att?.set(h.subarray(ps, ps + T * ld), hh * T * ld);
    sgemm(py + hh * hd, D, ps, ld, 1, pv, hd, 0, T, L, hd, false, false, Causal.kUpTo, P0);
  }
  y.set(h.subarray(py, py + T * D));
}

export function attentionBackwardF32(
  dqkv: Float32Array,
  dy: Float32Array,
  att: Float32Array,
  qkv: Float32Array,
  s: AttentionShape,
): void {
  const { t: T, d: D, heads: H } = s;
  const P0 = s.past ?? 0;
  const L = P0 + T;
  const hd = D / H;
  const scale = 1 / Math.sqrt(hd);
  const D3 = 3 * D;
  const ld = attentionStrideF32(L);
  const ldt = transposedStride(L);
  const [pqkv, pdy, pp, pds, pvt, pq, pk, pg, pdq] = regions(
    L * D3,
    T * D,
    T * ld,
    T * ld,
    hd * ldt,
    T * hd,
    L * hd,
    T * hd,
    L * D3,
  );
  const h = heap();
  h.set(qkv.subarray(0, L * D3), pqkv);
  h.set(dy.subarray(0, T * D), pdy);
  // the past rows have no query gradient
  h.fill(0, pdq, pdq + P0 * D3);
  for (let hh = 0; hh < H; hh++) {
    const kv = pqkv + hh * hd;
    const q = kv + P0 * D3;
    const k = kv + D;
    const v = kv + 2 * D;
    const g = pdy + hh * hd;
    // the padding columns of P, read by the vector loops, come in zero like the rest of the upper triangle
    h.set(att.subarray(hh * T * ld, (hh + 1) * T * ld), pp);
    stranspose(pvt, v, L, hd, D3, ldt);
    for (const [dst, src, lds, rows] of [
      [pq, q, D3, T],
      [pk, k, D3, L],
      [pg, g, D, T],
    ] as const)
      scopy(dst, hd, src, lds, rows, hd);
    sgemm(pds, ld, g, D, 1, pvt, ldt, 0, T, hd, L, false, false, Causal.columns, P0);
    vmath.softmaxCausalBackward(pp * 4, pds * 4, T, ld, scale, P0);
    const dq = pdq + hh * hd;
    sgemm(dq + P0 * D3, D3, pds, ld, 1, pk, hd, 0, T, L, hd, false, false, Causal.kUpTo, P0);
    sgemm(dq + D, D3, pds, 1, ld, pq, hd, 0, L, T, hd, false, false, Causal.kFrom, P0);
    sgemm(dq + 2 * D, D3, pp, 1, ld, pg, hd, 0, L, T, hd, false, false, Causal.kFrom, P0);
  }
  dqkv.set(h.subarray(pdq, pdq + L * D3));
}

/**
 * A sequence's keys and values in linear memory (a resident block): per layer, the keys transposed
 * [d, kStride] (a position per column, so that scores are a product with rows of B, as in
 * training), then the values [rows, d]; attention reads them where they are.
 *
 * A block may begin with another block's positions: positions [0, shared) are read in `base`
 * (a fork of a prompt's cache, `kvShareF32`), the rest in its own memory. The rollouts of a group
 * then read one copy of their prompt's keys and values, which stays in cache while each of them
 * attends to it, instead of eight copies that each come from memory. A base never changes where
 * it is shared (a block only grows), and its memory stays until its last fork is freed.
 */
export class ResidentKv implements KvBlock {
  /** float offset of the block's own memory; -1 once its memory went back */
  at: number;
  /**
   * the row stride of the transposed keys (`transposedStride`): room for the positions rounded up
   * to 4, which scores read and the softmax masks
   */
  readonly kStride: number;
  /** blocks reading this one as their base, not yet freed */
  forks = 0;
  /** freed by its owner (its memory waits for its forks) */
  dropped = false;
  constructor(
    readonly layers: number,
    readonly rows: number,
    readonly d: number,
    readonly base: ResidentKv | null = null,
    readonly shared = 0,
  ) {
    this.kStride = transposedStride(rows);
    this.at = residentAlloc(this.floats);
    if (base) base.forks++;
    unreachable.register(this, { at: this.at, floats: this.floats, base }, this);
  }
  get floats(): number {
    return this.layers * this.layerFloats;
  }
  private get layerFloats(): number {
    return this.d * (this.kStride + this.rows);
  }
  /** float offset of `layer`'s transposed keys [d, kStride] */
  keys(layer: number): number {
    if (this.at < 0) throw new Error('KV block used after it was freed');
    return this.at + layer * this.layerFloats;
  }
  /** float offset of `layer`'s values [rows, d] */
  values(layer: number): number {
    return this.keys(layer) + this.d * this.kStride;
  }
}

// a block nobody freed goes back when its object is collected (a test, an aborted sampling); a
// block with forks is reachable from them, so it is never collected before they are
const unreachable = new FinalizationRegistry<{ at: number; floats: number; base: ResidentKv | null }>(
  ({ at, floats, base }) => {
    residentFree(at, floats);
    if (base) forkGone(base);
  },
);

function forkGone(base: ResidentKv): void {
  base.forks--;
  if (base.dropped && base.forks === 0) release(base);
}

/** gives the block's memory back, and its hold on its base */
function release(b: ResidentKv): void {
  unreachable.unregister(b);
  residentFree(b.at, b.floats);
  b.at = -1;
  if (b.base) forkGone(b.base);
}

function resident(kv: KvBlock): ResidentKv {
  if (!(kv instanceof ResidentKv)) throw new Error('a KV block of another backend');
  if (kv.dropped) throw new Error('KV block used after it was freed');
  return kv;
}

export function kvAllocF32(layers: number, rows: number, d: number): KvBlock {
  return new ResidentKv(layers, rows, d);
}

export function kvWriteF32(kv: KvBlock, layer: number, pos: number, qkv: Float32Array, row: number): void {
  const b = resident(kv);
  if (pos < b.shared) throw new Error(`position ${pos} of a KV block is its base's (the first ${b.shared})`);
  const D = b.d;
  const k = b.keys(layer) + pos;
  const o = row * 3 * D;
  const h = heap();
  for (let c = 0; c < D; c++) h[k + c * b.kStride] = qkv[o + D + c]!;
  h.set(qkv.subarray(o + 2 * D, o + 3 * D), b.values(layer) + pos * D);
}

/** positions [from, to) of every layer, from one block's own memory to another's */
function copyPositions(to: ResidentKv, src: ResidentKv, from: number, end: number): void {
  const h = heap();
  for (let l = 0; l < src.layers; l++) {
    const [tk, fk] = [to.keys(l), src.keys(l)];
    for (let c = 0; c < src.d; c++)
      h.copyWithin(tk + c * to.kStride + from, fk + c * src.kStride + from, fk + c * src.kStride + end);
    h.copyWithin(to.values(l) + from * src.d, src.values(l) + from * src.d, src.values(l) + end * src.d);
  }
}

/**
 * A block for `rows` positions whose first n are `src`'s, read where `src` (or its own base) holds
 * them. Forks never chain: of the positions `src` holds past its base, the fork copies those it
 * needs, and when they outnumber the base's it copies the base's too and stands alone (a new
 * root). So a task's prompt, run after a prompt it shares a short prefix with (the system
 * message of another task), becomes the one block every rollout of that task reads, not a copy in
 * each of them past that short prefix.
 */
export function kvShareF32(kv: KvBlock, n: number, rows: number): KvBlock {
  const src = resident(kv);
  if (n > rows) throw new Error(`cannot share ${n} positions into a KV block of ${rows}`);
  if (src.base && n <= src.shared) return new ResidentKv(src.layers, rows, src.d, src.base, n);
  if (!src.base) return new ResidentKv(src.layers, rows, src.d, src, n);
  if (n - src.shared <= src.shared) {
    const fork = new ResidentKv(src.layers, rows, src.d, src.base, src.shared);
    copyPositions(fork, src, src.shared, n);
    return fork;
  }
  const alone = new ResidentKv(src.layers, rows, src.d);
  copyPositions(alone, src.base, 0, src.shared);
  copyPositions(alone, src, src.shared, n);
  return alone;
}

export function kvFreeF32(kv: KvBlock): void {
  if (!(kv instanceof ResidentKv)) throw new Error('a KV block of another backend');
  if (kv.dropped) return;
  kv.dropped = true;
  if (kv.forks === 0) release(kv);
}

/**
 * Attention of n new positions (queries in qkv [n, 3D]) over the cached keys and values [0, p0 + n)
 * of one layer of a resident block, for KV-cache decoding: the products and the causal softmax of
 * the training forward pass, with the keys and values read where the cache holds them. A row's
 * scores are summed as training sums them, whatever the number of rows run with it.
 */
export function attendCachedF32(
  y: Float32Array,
  qkv: Float32Array,
  kv: KvBlock,
  layer: number,
  s: CachedAttentionShape,
): void {
  const { n, cached: p0, d: D, heads: H } = s;
  const b = resident(kv);
  const hd = D / H;
  const scale = 1 / Math.sqrt(hd);
  const D3 = 3 * D;
  const L = p0 + n;
  const nb = b.base ? b.shared : 0;
  // the positions past a base are scored from a column that need not be a multiple of 4, in whole
  // vectors: a row has room for 4 more
  const ld = attentionStrideF32(L) + (nb % 4 ? 4 : 0);
  const pk = b.keys(layer);
  const pv = b.values(layer);
  const [pq, ps, py] = regions(n * D3, n * ld, n * D);
  const h = heap();
  h.set(qkv.subarray(0, n * D3), pq);
  for (let hh = 0; hh < H; hh++) {
    const o = hh * hd;
    // Scores: every column a vector lane, so each is summed as training sums it, whatever the
    // rows run with it and wherever its key lives. A base's positions precede every new row.
    if (nb > 0) {
      const base = b.base!;
      const pbk = base.keys(layer) + o * base.kStride;
      sgemm(ps, ld, pq + o, D3, 1, pbk, base.kStride, 0, n, hd, (nb + 3) & ~3, false, false);
    }
    const pko = pk + o * b.kStride + nb;
    const cols = ld - nb;
    sgemm(
      ps + nb,
      ld,
      pq + o,
      D3,
      1,
      pko,
      b.kStride,
      0,
      n,
      hd,
      cols,
      false,
      false,
      Causal.columnVectors,
      p0 - nb,
    );
    vmath.softmaxCausal(ps * 4, n, ld, scale, p0);
    // Y = P V: the base's values [0, nb), then the block's, each sum going on from the first part
    if (nb > 0) sgemm(py + o, D, ps, ld, 1, b.base!.values(layer) + o, D, 0, n, nb, hd, false, false);
    const rest = L - nb;
    sgemm(
      py + o,
      D,
      ps + nb,
      ld,
      1,
      pv + o + nb * D,
      D,
      0,
      n,
      rest,
      hd,
      false,
      false,
      Causal.kUpTo,
      p0 - nb,
      nb > 0,
    );
  }
  y.set(h.subarray(py, py + n * D));
}

/** where a block's positions live: [0, shared) in `root`, the rest in the block itself */
function rootOf(b: ResidentKv): { readonly root: ResidentKv; readonly shared: number } {
  return b.base ? { root: b.base, shared: b.shared } : { root: b, shared: Number.POSITIVE_INFINITY };
}

/** below this many positions in common, rows attend one by one */
const MIN_COMMON = 8;

/**
 * One new position for each of several blocks (row r of qkv [rows, 3D] at `positions[r]` of
 * `kvs[r]`, its key and value already written there): `attendCachedF32` row by row, with the same
 * bits, except that rows whose first positions live in one block (the forks of a group's prompt,
 * and that prompt's own cache) score and weigh those positions together: a product of all their
 * rows against the keys, and one against the values, read once instead of once a row. Each row's
 * sums then continue over its own positions (`sgemm`'s `continued`), as one sum over all.
 */
export function attendCachedRowsF32(
  y: Float32Array,
  qkv: Float32Array,
  kvs: readonly KvBlock[],
  positions: ArrayLike<number>,
  layer: number,
  s: { readonly d: number; readonly heads: number },
): void {
  const { d: D, heads: H } = s;
  const D3 = 3 * D;
  const groups = new Map<ResidentKv, number[]>();
  for (const [r, kv] of kvs.entries()) {
    const { root } = rootOf(resident(kv));
    const rows = groups.get(root);
    if (rows) rows.push(r);
    else groups.set(root, [r]);
  }
  for (const [root, rows] of groups) {
    // positions every row of the group reads in the root, all before each row's new one
    let common = Number.POSITIVE_INFINITY;
    for (const r of rows) common = Math.min(common, rootOf(resident(kvs[r]!)).shared, positions[r]!);
    if (rows.length < 2 || common < MIN_COMMON) {
      for (const r of rows) {
        const shape = { n: 1, cached: positions[r]!, d: D, heads: H };
        attendCachedF32(y.subarray(r * D), qkv.subarray(r * D3), kvs[r]!, layer, shape);
      }
      continue;
    }
    attendGroup(y, qkv, kvs, positions, layer, H, D, root, rows, common);
  }
}

function attendGroup(
  y: Float32Array,
  qkv: Float32Array,
  kvs: readonly KvBlock[],
  positions: ArrayLike<number>,
  layer: number,
  H: number,
  D: number,
  root: ResidentKv,
  rows: readonly number[],
  common: number,
): void {
  const hd = D / H;
  const scale = 1 / Math.sqrt(hd);
  const D3 = 3 * D;
  const g = rows.length;
  // each row's positions past `common`: up to where it stops reading the root, then its block's
  const rest = rows.map((r) => {
    const b = resident(kvs[r]!);
    const L = positions[r]! + 1;
    const inRoot = Math.min(rootOf(b).shared, L);
    const parts: { block: ResidentKv; from: number; to: number }[] = [];
    if (inRoot > common) parts.push({ block: root, from: common, to: inRoot });
    if (L > inRoot) parts.push({ block: b, from: inRoot, to: L });
    return { L, parts };
  });
  const longest = Math.max(...rest.map((x) => x.L));
  // a row's columns past `common` are scored from a column that need not be a multiple of 4, in
  // whole vectors: room for 4 more
  const ld = attentionStrideF32(longest) + 4;
  const [pq, ps, py] = regions(g * D3, g * ld, g * D);
  const h = heap();
  for (const [i, r] of rows.entries()) h.set(qkv.subarray(r * D3, (r + 1) * D3), pq + i * D3);
  for (let hh = 0; hh < H; hh++) {
    const o = hh * hd;
    const keys = (b: ResidentKv, from: number) => b.keys(layer) + o * b.kStride + from;
    const values = (b: ResidentKv, from: number) => b.values(layer) + o + from * D;
    sgemm(ps, ld, pq + o, D3, 1, keys(root, 0), root.kStride, 0, g, hd, (common + 3) & ~3, false, false);
    // each part may write a few columns past its end, which the next one overwrites
    for (const [i, { L, parts }] of rest.entries()) {
      const row = ps + i * ld;
      for (const { block, from, to } of parts) {
        const cols = (to - from + 3) & ~3;
        sgemm(
          row + from,
          ld,
          pq + i * D3 + o,
          D3,
          1,
          keys(block, from),
          block.kStride,
          0,
          1,
          hd,
          cols,
          false,
          false,
        );
      }
      vmath.softmaxCausal(row * 4, 1, ld, scale, L - 1);
    }
    // Y = P V over the common positions for every row at once, then each row's sums go on over
    // its parts
    sgemm(py + o, D, ps, ld, 1, values(root, 0), D, 0, g, common, hd, false, false);
    for (const [i, { parts }] of rest.entries())
      for (const { block, from, to } of parts) {
        const row = ps + i * ld + from;
        sgemm(
          py + i * D + o,
          D,
          row,
          ld,
          1,
          values(block, from),
          D,
          0,
          1,
          to - from,
          hd,
          false,
          false,
          Causal.none,
          0,
          true,
        );
      }
  }
  for (const [i, r] of rows.entries()) y.set(h.subarray(py + i * D, py + (i + 1) * D), r * D);
}
