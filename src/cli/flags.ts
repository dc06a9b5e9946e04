/**
 * Flag values every command parses the same way: numbers with their allowed range, and the
 * options several commands share. A bad value is a UsageError naming the flag, the range and
 * what was given (exit 2), never a silent NaN or a value some later layer chokes on.
 */
import { Option } from 'commander';
import { DATA_DIR_ENV } from '../envs/bfcl/data/locate.js';
import { UsageError } from '../util/errors.js';

export interface NumberRange {
  /** integers only */
  readonly int?: boolean;
  readonly min?: number;
  /** the minimum itself is not allowed (e.g. --top-p in (0, 1]) */
  readonly minExclusive?: boolean;
  readonly max?: number;
}

function rangeText(r: NumberRange): string {
  const lo = r.min === undefined ? '' : `${r.minExclusive ? '>' : '>='} ${r.min}`;
  const hi = r.max === undefined ? '' : `<= ${r.max}`;
  const parts = [lo, hi].filter((s) => s !== '');
  return `${r.int ? 'an integer' : 'a number'}${parts.length ? ` ${parts.join(' and ')}` : ''}`;
}

/** `value` as a number in `range`; a UsageError naming `flag` otherwise. */
export function parseNumberFlag(flag: string, value: string, range: NumberRange = {}): number {
  const n = Number(value);
  const bad =
    value.trim() === '' ||
    !Number.isFinite(n) ||
    (range.int && !Number.isSafeInteger(n)) ||
    (range.min !== undefined && (range.minExclusive ? n <= range.min : n < range.min)) ||
    (range.max !== undefined && n > range.max);
  if (bad) throw new UsageError(`${flag} must be ${rangeText(range)}, got "${value}".`);
  return n;
}

/** The same for an optional flag: undefined stays undefined. */
export function optionalNumberFlag(flag: string, value: string | undefined, range: NumberRange = {}) {
  return value === undefined ? undefined : parseNumberFlag(flag, value, range);
}

/**
 * Limits that keep a value meaningful downstream. Node's timers hold at most 2^31-1 ms; a longer
 * delay fires after 1 ms, which would turn a generous --timeout into every request timing out.
 */
export const LIMITS = {
  timeoutSeconds: { min: 0.001, max: Math.floor((2 ** 31 - 1) / 1000) },
  retries: { int: true, min: 0, max: 100 },
  concurrency: { int: true, min: 1, max: 4096 },
  topP: { min: 0, minExclusive: true, max: 1 },
  temperature: { min: 0, max: 100 },
  maxTokens: { int: true, min: 1, max: 10_000_000 },
  seed: { int: true },
} as const satisfies Record<string, NumberRange>;

export const dataDirOption = () =>
  new Option('--data-dir <dir>', `BFCL data directory (default: $${DATA_DIR_ENV}, else the pull cache)`);

/** An http(s) URL flag; anything else is a UsageError with an example. */
export function parseUrlFlag(flag: string, value: string, example: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(`${flag} must be an http(s) URL such as ${example}, got "${value}".`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new UsageError(`${flag} must be an http(s) URL such as ${example}, got "${value}".`);
  return value;
}
