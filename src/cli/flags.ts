/**
 * Flag values every command parses the same way: numbers with their allowed range (the parser
 * lives in util/settings.ts, which the settings schemas of `seal train` and `seal pretrain` share),
 * and the options several commands share. A bad value is a UsageError naming the flag, the range
 * and what was given (exit 2), never a silent NaN or a value some later layer chokes on.
 */
import { type Command, Option } from 'commander';
import { DATA_DIR_ENV } from '../envs/bfcl/data/locate.js';
import { UsageError } from '../util/errors.js';
import { flagOf, type NumberRange, parseNumberFlag, type Settings, type Shape } from '../util/settings.js';

export { parseNumberFlag };

/** every key of `settings` (but `skip`) as a flag, with its help and default from the schema */
export function addSettingOptions<S extends Shape>(
  cmd: Command,
  settings: Settings<S>,
  skip: readonly (keyof S & string)[] = [],
): void {
  const defaults: Readonly<Record<string, unknown>> = settings.defaults;
  for (const key of settings.keys) {
    if (skip.includes(key)) continue;
    const kind = settings.kind(key);
    const def = defaults[key];
    const value = kind === 'switch' ? '' : ` <${settings.placeholder(key)}>`;
    const opt = new Option(
      `${flagOf(key)}${value}`,
      `${settings.describe(key)}${def !== undefined ? ` (default ${def})` : ''}`,
    );
    if (typeof kind === 'object') opt.choices(kind.choices);
    cmd.addOption(opt);
  }
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
