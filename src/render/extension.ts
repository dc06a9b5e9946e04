/**
 * Whether a rollout's next prompt continues the sequence already sampled. A multi-turn rollout is
 * trained as one sequence only where the next prompt is exactly the previous prompt, the sampled
 * completion and a suffix (the tool results, the next generation prompt): then the suffix is all
 * that is new, and every earlier token is one the sampler saw or produced. Where the chat template
 * rewrites history (Qwen3 drops the `<think>` blocks of earlier turns), the prompt does not extend
 * the sequence, and the rollout is split there; nothing is re-tokenised to force a fit.
 */

export type Extension =
  /** next = previous + completion + suffix */
  | { readonly extends: true; readonly suffix: readonly number[] }
  /**
   * the sequences part at token `at` (an index into previous + completion); `reason` says how:
   * history rewritten, or the next prompt is shorter
   */
  | { readonly extends: false; readonly at: number; readonly reason: string };

export function extension(
  previousPrompt: readonly number[],
  completion: readonly number[],
  nextPrompt: readonly number[],
): Extension {
  const n = previousPrompt.length + completion.length;
  const at = (i: number): number =>
    i < previousPrompt.length ? previousPrompt[i]! : completion[i - previousPrompt.length]!;
  const common = Math.min(n, nextPrompt.length);
  for (let i = 0; i < common; i++) {
    if (at(i) !== nextPrompt[i]) {
      const where = i < previousPrompt.length ? 'the previous prompt' : 'the sampled completion';
      return {
        extends: false,
        at: i,
        reason: `the next prompt differs at token ${i}, inside ${where} (the template rewrote history)`,
      };
    }
  }
  if (nextPrompt.length < n)
    return {
      extends: false,
      at: nextPrompt.length,
      reason: `the next prompt (${nextPrompt.length} tokens) is shorter than the sequence so far (${n})`,
    };
  return { extends: true, suffix: nextPrompt.slice(n) };
}
