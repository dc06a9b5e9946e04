import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BufferPool } from '../../src/nn/buffer-pool.js';
import { Gpt } from '../../src/nn/model.js';

describe('buffer pool', () => {
  it('hands back an array given to it for a request it fits (at most twice as long), else a new one', () => {
    let made = 0;
    const pool = new BufferPool((n) => {
      made++;
      return new Float32Array(n);
    });
    const a = pool.take(100);
    expect(a.length).toBe(100);
    pool.give(a);
    const b = pool.take(60);
    expect(b.length).toBe(60);
    expect(b.buffer).toBe(a.buffer);
    expect(pool.take(60).buffer).not.toBe(a.buffer); // it is out
    pool.give(b);
    expect(pool.take(40).buffer).not.toBe(a.buffer); // more than twice as long as needed
    expect(pool.take(101).buffer).not.toBe(a.buffer); // too short
    expect(made).toBe(4);
  });

  it('never hands out one array twice, and keeps at most its byte budget', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.boolean(), fc.integer({ min: 1, max: 64 })), { maxLength: 60 }),
        (ops) => {
          const pool = new BufferPool((n) => new Float64Array(n), 2048);
          const out: Float64Array[] = [];
          for (const [take, n] of ops) {
            if (take || out.length === 0) {
              const a = pool.take(n) as Float64Array;
              expect(a.length).toBe(n);
              expect(out.some((o) => o.buffer === a.buffer)).toBe(false);
              out.push(a);
            } else pool.give(out.splice(n % out.length, 1)[0]!);
            const waiting = (pool as unknown as { freeBytes: number }).freeBytes;
            expect(waiting).toBeLessThanOrEqual(2048);
          }
        },
      ),
    );
  });
});

describe('a forward pass and its backward pass', () => {
  const config = { vocabSize: 20, contextLength: 16, nLayer: 1, nHead: 2, dModel: 8, tiedEmbeddings: true };
  it('goes back once, and not at all when it kept nothing for it', () => {
    const model = Gpt.init(config, 1);
    const f = model.forward([1, 2, 3]);
    const dl = new Float32Array(f.logits.length).fill(0.1);
    model.backward(f.cache, dl, model.zerosLike());
    const untouched = model.zerosLike();
    expect(() => model.backward(f.cache, dl, untouched)).toThrow(/goes back once/);
    expect(untouched.every((x) => x === 0)).toBe(true); // refused before adding anything
    const g = model.forward([1, 2, 3], { backward: false });
    expect(() => model.backward(g.cache, dl, model.zerosLike())).toThrow(/backward: true/);
  });

  it('gives the same gradient when its scratch arrays come from an earlier pass', () => {
    const model = Gpt.init(config, 2);
    const grad = (tokens: number[]) => {
      const f = model.forward(tokens);
      const g = model.zerosLike();
      model.backward(f.cache, new Float32Array(f.logits.length).fill(0.05), g);
      return Array.from(g);
    };
    const first = grad([3, 4, 5, 6, 7]);
    grad([9, 8, 7, 6, 5, 4, 3, 2, 1]); // leaves longer arrays, with other contents, in the pool
    expect(grad([3, 4, 5, 6, 7])).toEqual(first);
  });
});
