/**
 * Comparing sequences of ids (token ids): how far two agree from the start. Used wherever a prompt
 * is matched against another, the sampler's prefix cache, training's packing of a rollout's steps,
 * and the grouping of a batch by the prompt its sequences share.
 */

/** how many leading ids `a` and `b` share (at most `limit`) */
export function commonPrefix(
  a: ArrayLike<number>,
  b: ArrayLike<number>,
  limit = Number.POSITIVE_INFINITY,
): number {
  const n = Math.min(a.length, b.length, limit);
  let i = 0;
  while (i < n && a[i] === b[i]) i++;
  return i;
}

/** whether `prefix` is a prefix of `a` */
export const startsWith = (a: ArrayLike<number>, prefix: ArrayLike<number>): boolean =>
  prefix.length <= a.length && commonPrefix(a, prefix) === prefix.length;
