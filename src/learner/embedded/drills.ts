/**
 * Copy drills: a run of random tokens followed by the same run again, the repeat as the target.
 *
 * Writing an argument means copying a value from the request or a tool result, which a transformer
 * does with induction heads (find the earlier occurrence of the current token, predict what came
 * after it). Trained only on demonstrations, the small model had formed none after ~18M tokens
 * (0% on repeated random tokens) and got names and call structure right but values wrong. A
 * repeated random run can only be predicted by copying, so drills are a dense, unambiguous signal
 * for exactly that circuit.
 *
 * Measured (4 layers, width 128, vocabulary 1,024, batches of 16 drills): with learned absolute
 * positions alone, none of the settings tried left chance within 600-1,500 steps; with the
 * previous-token map (config.ts `previousTokenEmbedding`) a fresh model goes from chance to 98% of
 * repeats between steps 150 and 400, and the demonstration-trained base, grown by that map, in
 * about 200 steps. Short runs (8 to 32 tokens) learn it far sooner than runs up to 192 (still at
 * chance after 150 steps): more repeats per token of compute and a sharper signal while attention
 * is still diffuse. The circuit matches on content, so it copies over any distance once formed.
 *
 * How to get it into the base (measured with `seal pretrain --init`): drills as half of each batch
 * beside demonstrations did not form it in 350 steps (the drills are a small share of the target
 * tokens); drills alone at a constant rate formed it by step 225 (under a cosine decay over 300
 * steps they did not) but erased what the demonstrations had taught (held-out 5%); 1,200 steps of
 * demonstrations with 30% drills then brought that back (88%) and kept the copying (98%).
 */
import type { Rng } from '../../util/rng.js';
import type { SupervisedSequence } from './losses.js';

const MAX_RUN = 32;

export interface DrillShape {
  /** ids below this are never drawn (bytes and special tokens) */
  readonly firstId: number;
  readonly vocabSize: number;
  readonly contextLength: number;
}

/** One drill: `k` random tokens (k from 8 up to 32, capped by the context), then the same again. */
export function copyDrill(rng: Rng, shape: DrillShape): SupervisedSequence {
  const maxRun = Math.max(2, Math.min(MAX_RUN, Math.floor(shape.contextLength / 2)));
  const k = rng.int(Math.min(8, maxRun), maxRun);
  const run = Array.from({ length: k }, () => rng.int(shape.firstId, shape.vocabSize - 1));
  const tokens = [...run, ...run];
  // the first repeated token cannot be known from what precedes it; every later one can
  return { tokens, lossMask: tokens.map((_, t) => (t > k ? 1 : 0)) };
}
