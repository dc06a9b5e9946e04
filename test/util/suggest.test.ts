import { describe, expect, it } from 'vitest';
import { didYouMean, editDistance, suggest } from '../../src/util/suggest.js';

const KEYS = ['rounds', 'groupSize', 'tasksPerRound', 'maxSteps', 'maxTokens', 'seed', 'lr'];

describe('did you mean', () => {
  it('edit distance counts an adjacent swap as one edit', () => {
    expect(editDistance('rounds', 'rounds')).toBe(0);
    expect(editDistance('round', 'rounds')).toBe(1); // a deletion
    expect(editDistance('ruonds', 'rounds')).toBe(1); // a swap, not two substitutions
    expect(editDistance('kitten', 'sitting')).toBe(3);
    expect(editDistance('', 'abc')).toBe(3);
  });

  it('finds the key across case, dashes and underscores', () => {
    expect(suggest('group_size', KEYS)).toEqual(['groupSize']);
    expect(suggest('max-steps', KEYS)).toEqual(['maxSteps']);
    expect(suggest('MAXSTEP', KEYS)).toEqual(['maxSteps']);
    expect(suggest('rond', KEYS)).toEqual(['rounds']);
  });

  it('names every key at the best distance, and none when nothing is close', () => {
    expect(suggest('maxToken', KEYS)).toEqual(['maxTokens']);
    expect(suggest('maxStep', ['maxSteps', 'maxStop'])).toEqual(['maxSteps', 'maxStop']);
    expect(suggest('temperature', KEYS)).toEqual([]);
    // one letter off a two-letter key is still a guess worth making; a whole other word is not
    expect(suggest('l', KEYS)).toEqual(['lr']);
    expect(suggest('xy', KEYS)).toEqual([]);
  });

  it('writes the hint, or nothing', () => {
    expect(didYouMean('rond', KEYS)).toBe(' (did you mean rounds?)');
    expect(didYouMean('zzzq', KEYS)).toBe('');
  });
});
