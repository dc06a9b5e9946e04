/**
 * What of a long chat the embedded model sees. Its context is about a thousand tokens, and a
 * multi-turn episode with tool results outgrows it, so the oldest messages after the system prompt
 * fall out first (the tools, in the system prompt, always stay). The same rule cuts the training
 * demonstrations, so the model is trained on exactly the kind of view it acts from.
 *
 * Pure arithmetic on per-message token counts: the chat encoding is a concatenation of its
 * messages (see `encodeChat`), so the length of any subset is the sum of its parts.
 */

export interface WindowMessage {
  readonly role: string;
  /** tokens of this message in the chat encoding (role marker and end marker included) */
  readonly tokens: number;
}

/**
 * The first message index kept when `messages` (system first, if any) must fit in `budget` tokens:
 * the smallest start such that the system message plus messages[start..] fit, moved past any
 * assistant message so that the kept history opens with what the user or the environment said.
 * `undefined` when not even the system message and the last message fit.
 */
export function windowStart(messages: readonly WindowMessage[], budget: number): number | undefined {
  const head = messages[0]?.role === 'system' ? 1 : 0;
  const fixed = head === 1 ? messages[0]!.tokens : 0;
  let total = fixed;
  for (let i = head; i < messages.length; i++) total += messages[i]!.tokens;
  let start = head;
  while (total > budget && start < messages.length - 1) total -= messages[start++]!.tokens;
  if (total > budget) return undefined;
  while (start < messages.length - 1 && messages[start]!.role === 'assistant') start++;
  return start;
}

/** One training window: the system message (if any) plus messages[start, end); targets from `from`. */
export interface TrainingWindow {
  readonly start: number;
  readonly end: number;
  /** assistant messages in [from, end) carry loss; earlier ones are context */
  readonly from: number;
}

/**
 * Windows that cover every assistant message of a demonstration exactly once as a target, each
 * seen with (about) the history the policy would have at that point: a window runs as far as the
 * budget allows, and the next one starts where the policy's own window would for the message that
 * did not fit. An assistant message that does not fit even with the system prompt alone is skipped.
 */
export function trainingWindows(messages: readonly WindowMessage[], budget: number): TrainingWindow[] {
  const head = messages[0]?.role === 'system' ? 1 : 0;
  const fixed = head === 1 ? messages[0]!.tokens : 0;
  const out: TrainingWindow[] = [];
  let covered = head;
  while (covered < messages.length) {
    const start = windowStart(messages.slice(0, covered + 1), budget);
    if (start === undefined) {
      covered++; // a single message longer than the context
      continue;
    }
    let total = fixed;
    for (let i = start; i <= covered; i++) total += messages[i]!.tokens;
    let end = covered + 1;
    while (end < messages.length && total + messages[end]!.tokens <= budget) total += messages[end++]!.tokens;
    if (messages.slice(covered, end).some((m) => m.role === 'assistant'))
      out.push({ start, end, from: covered });
    covered = end;
  }
  return out;
}
