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
    expect(didYouMean('maxStep', ['maxSteps', 'maxStop'])).toBe(' (did you mean maxSteps or maxStop?)');
  });

  // a name at a third of the longer name's length (rounded down, at least one edit) is suggested,
  // one edit more is not: each line is a name, a word at the limit and a word just past it
  it.each([
    ['lr', 'l', 'xy'], // length 2: one edit
    ['seed', 'sed', 'sd'], // 4: one
    ['rounds', 'rond', 'rnd'], // 6: two
    ['maxSteps', 'maxStp', 'steps'], // 8: two
    ['tasksPerRound', 'tasksPerR', 'tasksPer'], // 13: four
  ])('%s: %s is close enough, %s is not', (name, near, far) => {
    expect(suggest(near, [name])).toEqual([name]);
    expect(suggest(far, [name])).toEqual([]);
  });

  it('measures the limit on the longer of the two names', () => {
    // two letters too many on a four-letter key: a third of six allows two
    expect(suggest('seedxx', ['seed'])).toEqual(['seed']);
    expect(suggest('seedxxx', ['seed'])).toEqual([]);
  });
});
