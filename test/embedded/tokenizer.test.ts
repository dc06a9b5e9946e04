import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { encodeChat, SPECIAL_TOKENS, Tokenizer } from '../../src/nn/tokenizer.js';

const corpus = [
  '<|system|>You can call tools: ls, cd, mkdir, cat.<|end|>',
  '<|user|>Please create a folder named reports in the current directory.<|end|>',
  '<|assistant|>[mkdir(dir_name="reports")]<|end|>',
  '<|tool|>{"result": "ok"}<|end|>',
  '<|user|>Now list the files, then show the contents of notes.txt.<|end|>',
  '<|assistant|>[ls(a=True), cat(file_name="notes.txt")]<|end|>',
  'Déjà vu: naïve café, 数据 1234567 — ünïcödé and emoji 🙂🚀.',
].join('\n');

describe('byte-level BPE tokenizer', () => {
  const tok = Tokenizer.train(corpus.repeat(3), 400);

  it('learns merges and special tokens with fixed ids', () => {
    expect(tok.vocabSize).toBeGreaterThan(300);
    expect(tok.vocabSize).toBeLessThanOrEqual(400);
    SPECIAL_TOKENS.forEach((s, i) => {
      expect(tok.special(s)).toBe(256 + i);
    });
    const text = 'Please create a folder named reports';
    expect(tok.encode(text).length).toBeLessThan(new TextEncoder().encode(text).length / 2);
  });

  it('training is deterministic', () => {
    const again = Tokenizer.train(corpus.repeat(3), 400);
    expect(again.toJSON()).toEqual(tok.toJSON());
  });

  it('round-trips any unicode text exactly', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 80 }), (s) => {
        expect(tok.decode(tok.encode(s))).toBe(s);
        expect(tok.decode(tok.encodeOrdinary(s))).toBe(s);
      }),
      { numRuns: 300 },
    );
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(fc.constantFrom(...SPECIAL_TOKENS), fc.string({ unit: 'grapheme', maxLength: 10 })),
        ),
        (parts) => {
          const s = parts.join('');
          expect(tok.decode(tok.encode(s))).toBe(s);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('recognises special tokens in encode, not in encodeOrdinary', () => {
    const ids = tok.encode('<|user|>hi<|end|>');
    expect(ids[0]).toBe(tok.special('<|user|>'));
    expect(ids.at(-1)).toBe(tok.special('<|end|>'));
    expect(tok.encodeOrdinary('<|end|>').includes(tok.special('<|end|>'))).toBe(false);
  });

  it('serialises to JSON', () => {
    const back = Tokenizer.fromJSON(JSON.parse(JSON.stringify(tok.toJSON())));
    const s = 'list the files in reports, then cat notes.txt 🙂';
    expect(back.encode(s)).toEqual(tok.encode(s));
    expect(() => Tokenizer.fromJSON({ format: 'other' })).toThrow(/seal-bpe/);
  });

  it('renders chats with an assistant-token mask', () => {
    const { ids, assistantMask } = encodeChat(
      tok,
      [
        { role: 'user', content: 'list files' },
        { role: 'assistant', content: '[ls()]' },
      ],
      true,
    );
    expect(ids.length).toBe(assistantMask.length);
    expect(tok.decode(ids)).toBe('<|user|>list files<|end|><|assistant|>[ls()]<|end|><|assistant|>');
    const masked = ids.filter((_, i) => assistantMask[i] === 1);
    expect(tok.decode(masked)).toBe('[ls()]<|end|>');
  });
});
