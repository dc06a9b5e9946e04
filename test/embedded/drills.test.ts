import { describe, expect, it } from 'vitest';
import { copyDrill } from '../../src/learner/embedded/drills.js';
import { Rng } from '../../src/util/rng.js';

describe('copy drills', () => {
  const shape = { firstId: 261, vocabSize: 1024, contextLength: 1024 };

  it('are a random run and its repeat, the repeat (after its first token) the only target', () => {
    const rng = new Rng(5, 'mulberry32');
    for (let i = 0; i < 50; i++) {
      const d = copyDrill(rng, shape);
      const k = d.tokens.length / 2;
      expect(k).toBeGreaterThanOrEqual(8);
      expect(k).toBeLessThanOrEqual(32);
      expect(d.tokens.slice(k)).toEqual(d.tokens.slice(0, k));
      for (const t of d.tokens) {
        expect(t).toBeGreaterThanOrEqual(261);
        expect(t).toBeLessThan(1024);
      }
      expect(d.lossMask).toEqual(d.tokens.map((_, t) => (t > k ? 1 : 0)));
    }
  });

  it('fit the context and are deterministic from the rng', () => {
    const small = { ...shape, contextLength: 40 };
    const a = Array.from(
      { length: 20 },
      (
        (rng) => () =>
          copyDrill(rng, small)
      )(new Rng(9, 'mulberry32')),
    );
    const b = Array.from(
      { length: 20 },
      (
        (rng) => () =>
          copyDrill(rng, small)
      )(new Rng(9, 'mulberry32')),
    );
    expect(a).toEqual(b);
    for (const d of a) expect(d.tokens.length).toBeLessThanOrEqual(40);
  });
});
