/**
 * "Did you mean" for a name the user mistyped (a config key, a command): the closest known name
 * by edit distance, compared without case, `-` or `_`, so that `max_steps`, `max-steps` and
 * `maxstep` all find `maxSteps`. None when nothing is close: a wild guess misleads more than no
 * guess.
 */

/** Optimal string alignment distance: insertions, deletions, substitutions and adjacent swaps. */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        best = Math.min(best, d[i - 2]![j - 2]! + 1);
      d[i]![j] = best;
    }
  }
  return d[a.length]![b.length]!;
}

const fold = (s: string) => s.toLowerCase().replace(/[-_]/g, '');

/**
 * The known names closest to `word`, best first (ties in the order given): within a third of the
 * longer name's length, at least one edit allowed.
 */
export function suggest(word: string, known: readonly string[]): string[] {
  const w = fold(word);
  const scored = known
    .map((name) => {
      const n = fold(name);
      return {
        name,
        distance: editDistance(w, n),
        limit: Math.max(1, Math.floor(Math.max(w.length, n.length) / 3)),
      };
    })
    .filter((s) => s.distance <= s.limit);
  const best = Math.min(...scored.map((s) => s.distance));
  return scored.filter((s) => s.distance === best).map((s) => s.name);
}

/** ` (did you mean maxSteps?)`, or nothing. */
export function didYouMean(word: string, known: readonly string[]): string {
  const names = suggest(word, known);
  return names.length === 0 ? '' : ` (did you mean ${names.join(' or ')}?)`;
}
