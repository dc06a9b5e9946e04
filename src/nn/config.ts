/**
 * What a model is: its hyperparameters, where each parameter tensor sits in the one flat array that
 * holds them all (gradients and optimiser state use the same layout), and how they start.
 */

import { Rng } from '../util/rng.js';
import type { Arr } from './ops.js';

export interface GptConfig {
  readonly vocabSize: number;
  readonly contextLength: number;
  readonly nLayer: number;
  readonly nHead: number;
  readonly dModel: number;
  /** share the token embedding with the output projection */
  readonly tiedEmbeddings: boolean;
  /**
   * Add the PREVIOUS token's embedding, through a learned d x d map, to each position's input
   * (absent in older checkpoints: off). Copying a value from the context needs an induction head:
   * attend to where the current token occurred before and predict what followed it. With only
   * learned absolute positions, "which token preceded this position" must first be built by another
   * attention layer, and the demonstration-trained base never formed that circuit (0% on repeated
   * random tokens after 2,400 steps). With it in the residual stream, one layer can match on it.
   * The map reuses the token embedding rather than a table of its own: a separate table would have
   * to be lined up with the token embedding token by token, and a rare token would never be.
   */
  readonly previousTokenEmbedding?: boolean;
}

export interface LayerOffsets {
  readonly ln1g: number;
  readonly ln1b: number;
  readonly wqkv: number;
  readonly bqkv: number;
  readonly wo: number;
  readonly bo: number;
  readonly ln2g: number;
  readonly ln2b: number;
  readonly w1: number;
  readonly b1: number;
  readonly w2: number;
  readonly b2: number;
}

export interface ParamSpec {
  readonly name: string;
  readonly offset: number;
  readonly shape: readonly number[];
  readonly init: 'normal' | 'residual' | 'ones' | 'zeros';
}

export interface ParamLayout {
  readonly wte: number;
  readonly wpe: number;
  /** the map [d, d] of the previous token's embedding, or -1 when the config has none */
  readonly prev: number;
  readonly layers: readonly LayerOffsets[];
  readonly lnfg: number;
  readonly lnfb: number;
  /** the untied output projection [d, vocab], or -1 when tied to wte */
  readonly head: number;
  readonly size: number;
  readonly specs: readonly ParamSpec[];
}

export function validateConfig(c: GptConfig): void {
  const ints: [string, number][] = [
    ['vocabSize', c.vocabSize],
    ['contextLength', c.contextLength],
    ['nLayer', c.nLayer],
    ['nHead', c.nHead],
    ['dModel', c.dModel],
  ];
  for (const [k, v] of ints) {
    if (!Number.isInteger(v) || v <= 0)
      throw new Error(`invalid model config: ${k} must be a positive integer`);
  }
  if (c.dModel % c.nHead !== 0) throw new Error('invalid model config: dModel must be divisible by nHead');
  for (const k of ['tiedEmbeddings', 'previousTokenEmbedding'] as const) {
    const v = c[k];
    if (v !== undefined && typeof v !== 'boolean')
      throw new Error(`invalid model config: ${k} must be a boolean`);
  }
}

export function paramLayout(c: GptConfig): ParamLayout {
  validateConfig(c);
  const d = c.dModel;
  const specs: ParamSpec[] = [];
  let off = 0;
  const add = (name: string, shape: number[], init: ParamSpec['init']): number => {
    const o = off;
    specs.push({ name, offset: o, shape, init });
    off += shape.reduce((a, b) => a * b, 1);
    return o;
  };
  const wte = add('wte', [c.vocabSize, d], 'normal');
  const wpe = add('wpe', [c.contextLength, d], 'normal');
  // zero at init: a fresh or grown model starts as one without it
  const prev = c.previousTokenEmbedding ? add('prev', [d, d], 'zeros') : -1;
  const layers: LayerOffsets[] = [];
  for (let l = 0; l < c.nLayer; l++) {
    const p = `h${l}.`;
    layers.push({
      ln1g: add(`${p}ln1.g`, [d], 'ones'),
      ln1b: add(`${p}ln1.b`, [d], 'zeros'),
      wqkv: add(`${p}attn.wqkv`, [d, 3 * d], 'normal'),
      bqkv: add(`${p}attn.bqkv`, [3 * d], 'zeros'),
      wo: add(`${p}attn.wo`, [d, d], 'residual'),
      bo: add(`${p}attn.bo`, [d], 'zeros'),
      ln2g: add(`${p}ln2.g`, [d], 'ones'),
      ln2b: add(`${p}ln2.b`, [d], 'zeros'),
      w1: add(`${p}mlp.w1`, [d, 4 * d], 'normal'),
      b1: add(`${p}mlp.b1`, [4 * d], 'zeros'),
      w2: add(`${p}mlp.w2`, [4 * d, d], 'residual'),
      b2: add(`${p}mlp.b2`, [d], 'zeros'),
    });
  }
  const lnfg = add('lnf.g', [d], 'ones');
  const lnfb = add('lnf.b', [d], 'zeros');
  const head = c.tiedEmbeddings ? -1 : add('head', [d, c.vocabSize], 'normal');
  return { wte, wpe, prev, layers, lnfg, lnfb, head, size: off, specs };
}

export type LayerTensors = { readonly [K in keyof LayerOffsets]: Arr };

/** the tensors of a flat parameter (or gradient) array, as views on it */
export interface Tensors {
  readonly wte: Arr;
  readonly wpe: Arr;
  readonly prev: Arr | null;
  readonly layers: readonly LayerTensors[];
  readonly lnfg: Arr;
  readonly lnfb: Arr;
  readonly head: Arr | null;
}

export function tensorViews(layout: ParamLayout, flat: Arr): Tensors {
  const sizes = new Map(layout.specs.map((s) => [s.offset, s.shape.reduce((a, b) => a * b, 1)]));
  const at = (offset: number) => flat.subarray(offset, offset + sizes.get(offset)!);
  const layer = (o: LayerOffsets) =>
    Object.fromEntries(Object.entries(o).map(([k, offset]) => [k, at(offset)])) as LayerTensors;
  return {
    wte: at(layout.wte),
    wpe: at(layout.wpe),
    prev: layout.prev >= 0 ? at(layout.prev) : null,
    layers: layout.layers.map(layer),
    lnfg: at(layout.lnfg),
    lnfb: at(layout.lnfb),
    head: layout.head >= 0 ? at(layout.head) : null,
  };
}

/** GPT-2 init: N(0, 0.02), residual projections scaled by 1/sqrt(2 nLayer), LN gains 1 */
export function initParams(layout: ParamLayout, nLayer: number, params: Arr, seed: number): void {
  const rng = new Rng(seed);
  const resid = 0.02 / Math.sqrt(2 * nLayer);
  for (const s of layout.specs) {
    const n = s.shape.reduce((a, b) => a * b, 1);
    for (let i = 0; i < n; i++) {
      let v = 0;
      if (s.init === 'ones') v = 1;
      else if (s.init === 'normal') v = 0.02 * rng.normal();
      else if (s.init === 'residual') v = resid * rng.normal();
      params[s.offset + i] = v;
    }
  }
}

/** copies every tensor of `from` that `to`'s layout also has (by name); the others stay as they are */
export function copyByName(from: ParamLayout, src: Arr, to: ParamLayout, dst: Arr): void {
  const byName = new Map(from.specs.map((s) => [s.name, s]));
  for (const s of to.specs) {
    const old = byName.get(s.name);
    if (!old) continue;
    const n = s.shape.reduce((a, b) => a * b, 1);
    dst.set(src.subarray(old.offset, old.offset + n), s.offset);
  }
}
