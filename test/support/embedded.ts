import type { Gpt } from '../../src/nn/model.js';
import { Rng } from '../../src/util/rng.js';

/**
 * The previous-token map starts at zero, where it changes nothing and what feeds it gets no
 * gradient; tests give it random weights so they exercise it.
 */
export function randomPreviousMap(model: Gpt, seed: number, scale: number): void {
  if (model.layout.prev < 0) return;
  const rng = new Rng(seed);
  const n = model.config.dModel * model.config.dModel;
  for (let i = 0; i < n; i++) model.params[model.layout.prev + i] = scale * rng.normal();
}
