/**
 * Which sequences of a training batch run their common beginning once. The rollouts of a GRPO group
 * all start with the same prompt (the system message, the tool schemas, the first user turn: ~570
 * of the ~700-1,000 tokens of a mini-suite sequence), and nothing in that prompt carries loss, so
 * its layers can run once for the group and every rollout continues from them (`Gpt.prefix`); the
 * gradient is the same sum, in another order. Pure: a function of the tokens and loss masks only,
 * so every gradient worker that holds a group finds the same one.
 */
import { commonPrefix } from '../../util/id-sequences.js';

/** what grouping reads of a sequence: its tokens and which carry loss (absent: all but the first) */
export interface MaskedTokens {
  readonly tokens: readonly number[];
  readonly lossMask?: readonly number[];
}

export interface PromptGroup {
  /**
   * how many leading tokens every member has in common and runs once (0 for a group of one): no
   * member has a loss token among them or right after them, since the row that predicts the first
   * loss token must be a member's own
   */
  readonly shared: number;
  /** indices into the batch, ascending */
  readonly members: readonly number[];
}

/** every one of n sequences in a group of its own: nothing shared */
export const eachAlone = (n: number): PromptGroup[] =>
  Array.from({ length: n }, (_, i) => ({ shared: 0, members: [i] }));

/** the longest a prefix of `s` may be: up to the row before the one predicting its first target */
export function shareableLength(s: MaskedTokens): number {
  const mask = s.lossMask;
  let first = s.tokens.length;
  if (!mask) first = Math.min(1, first);
  else
    for (let t = 0; t < mask.length; t++)
      if (mask[t]! > 0) {
        first = t;
        break;
      }
  // rows [0, P) run once; the row predicting token `first` is row first - 1, and a member keeps at
  // least one token of its own
  return Math.max(0, Math.min(first - 1, s.tokens.length - 1));
}

/**
 * Groups `batch` greedily in order: each sequence joins the group where running the common prefix
 * once saves the most token rows, or starts its own when none saves any. A group of m members
 * sharing P tokens runs sum(lengths) - (m - 1) P rows, so a sequence sharing P' <= P with a group
 * of m saves m P' - (m - 1) P by joining it. Every index appears in exactly one group; groups come
 * in the order of their first member.
 */
export function promptGroups(batch: readonly MaskedTokens[]): PromptGroup[] {
  const groups: { shared: number; members: number[] }[] = [];
  batch.forEach((s, i) => {
    const limit = shareableLength(s);
    let best = -1;
    let bestShared = 0;
    let bestSaving = 0;
    for (const [g, group] of groups.entries()) {
      const head = batch[group.members[0]!]!;
      const m = group.members.length;
      // a group of one can share up to its member's limit
      const room = m === 1 ? shareableLength(head) : group.shared;
      const shared = Math.min(room, limit, commonPrefix(head.tokens, s.tokens));
      const saving = m * shared - (m - 1) * group.shared;
      if (saving > bestSaving) [best, bestShared, bestSaving] = [g, shared, saving];
    }
    if (best < 0) groups.push({ shared: 0, members: [i] });
    else {
      groups[best]!.shared = bestShared;
      groups[best]!.members.push(i);
    }
  });
  return groups;
}
