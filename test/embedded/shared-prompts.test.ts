import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type MaskedTokens,
  promptGroups,
  shareableLength,
} from '../../src/learner/embedded/shared-prompts.js';

/** a sequence of `prompt` then `completion`, the completion carrying loss */
const rollout = (prompt: number[], completion: number[]): MaskedTokens => ({
  tokens: [...prompt, ...completion],
  lossMask: [...prompt.map(() => 0), ...completion.map(() => 1)],
});

describe('prompt groups', () => {
  it('a prefix ends before the row that predicts the first target, and keeps a token of its own', () => {
    expect(shareableLength(rollout([1, 2, 3, 4], [5, 6]))).toBe(3);
    expect(shareableLength({ tokens: [1, 2, 3] })).toBe(0); // every token after the first is a target
    expect(shareableLength({ tokens: [1, 2, 3], lossMask: [0, 0, 0] })).toBe(2);
    expect(shareableLength({ tokens: [7], lossMask: [0] })).toBe(0);
  });

  it('groups the rollouts of one prompt and leaves the rest alone (worked example)', () => {
    const p = [1, 2, 3, 4, 5, 6, 7, 8];
    const batch = [
      rollout(p, [9, 9]), // 0: shares 7 with 1 and 3 (the 8th row predicts the first target)
      rollout([20, 21, 22], [9]), // 1: nothing in common with anyone
      rollout(p, [10, 11, 12]), // 2
      rollout([...p, 13], [14]), // 3: a longer prompt, still 7 with the group
      rollout([1, 2, 30], [31]), // 4: shares 2 with the group: joining would save 3 x 2 - 2 x 7 < 0 rows
    ];
    expect(promptGroups(batch)).toEqual([
      { shared: 7, members: [0, 2, 3] },
      { shared: 0, members: [1] },
      { shared: 0, members: [4] },
    ]);
    // two rollouts sharing 2 tokens still save 2 rows together
    expect(promptGroups([rollout([1, 2, 3], [4]), rollout([1, 2, 5], [6])])).toEqual([
      { shared: 2, members: [0, 1] },
    ]);
  });

  it('covers every sequence once, and every group shares what it says and no target', () => {
    const prompts = [
      [1, 2, 3, 4, 5, 6],
      [1, 2, 3, 9, 9],
      [7, 7],
    ];
    const seq = fc
      .tuple(fc.nat(prompts.length - 1), fc.nat(6), fc.array(fc.nat(12), { minLength: 1, maxLength: 6 }))
      .map(([p, cut, completion]) => rollout(prompts[p]!.slice(0, cut), completion));
    fc.assert(
      fc.property(fc.array(seq, { maxLength: 12 }), (batch) => {
        const groups = promptGroups(batch);
        const seen = groups.flatMap((g) => g.members);
        expect([...seen].sort((a, b) => a - b)).toEqual(batch.map((_, i) => i));
        let rows = 0;
        for (const g of groups) {
          expect([...g.members].sort((a, b) => a - b)).toEqual(g.members);
          if (g.members.length === 1) expect(g.shared).toBe(0);
          const head = batch[g.members[0]!]!;
          for (const i of g.members) {
            const s = batch[i]!;
            expect(s.tokens.slice(0, g.shared)).toEqual(head.tokens.slice(0, g.shared));
            expect(g.shared).toBeLessThanOrEqual(shareableLength(s));
            rows += s.tokens.length - g.shared;
          }
          rows += g.shared;
        }
        expect(rows).toBeLessThanOrEqual(batch.reduce((a, s) => a + s.tokens.length, 0));
      }),
    );
  });
});
