/**
 * Piece boundaries against the goldens, for the families npm has no tokenizer of: the text checks
 * of check.ts pass whatever the cuts, and a wrong cut changes the token ids a real tokenizer gives
 * (a byte-pair merge across it, or a special string read as text). So the cuts themselves, and
 * which pieces read special strings as text, must be the cookbook's.
 */
import { describe, expect, it } from 'vitest';
import type { Piece } from '../../../src/render/families/family.js';
import { chatFamily } from '../../../src/render/families/index.js';
import '../../../src/render/families/all.js';
import { familyMessage, goldenPieces, loadGoldens } from './goldens.js';

const goldens = loadGoldens();

const cuts = (pieces: readonly Piece[]) =>
  pieces.map((p) => ({ text: p.text, specialAsText: !!p.specialAsText }));

export function describeGoldenPieces(renderer: string): void {
  describe(`${renderer} cuts its pieces where the cookbook encodes them`, () => {
    const family = chatFamily(renderer, { today: goldens.date });
    const prefixes = goldens.prefixes.get(renderer)!;
    const turns = goldens.turns.filter((t) => t.renderer === renderer);
    it.each(turns.map((t) => [`${t.conversation} #${t.upto}`, t] as const))('%s', (_, t) => {
      const prefix = prefixes.get(t.conversation)!;
      const messages = [...prefix, ...goldens.conversations.get(t.conversation)!].map(familyMessage);
      const at = prefix.length + t.upto;
      expect(cuts(family.generationPrompt(messages.slice(0, at)))).toEqual(cuts(goldenPieces(t.prompt)));
      expect(cuts(family.supervised(messages.slice(0, at + 1)))).toEqual(cuts(goldenPieces(t.supervised)));
    });
  });
}
