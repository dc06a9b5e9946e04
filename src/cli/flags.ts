/**
 * Flags from settings schemas: every key of a command's schema (util/settings.ts) becomes a flag
 * with its help, default and choices, and a required key a required flag. Numbers are read by the
 * one parser there; a bad value is a UsageError naming the flag, the range and what was given
 * (exit 2), never a silent NaN or a value some later layer chokes on. The settings several
 * commands share are the fragments of util/fragments.ts.
 */
import { type Command, Option } from 'commander';
import { DATA_DIR_ENV } from '../envs/bfcl/data/locate.js';
import { UsageError } from '../util/errors.js';
import { dataDirSetting } from '../util/fragments.js';
import { flagOf, parseNumberFlag, type Settings, type Shape } from '../util/settings.js';

export { parseNumberFlag };

/** every key of `settings` (but `skip`) as a flag, with its help and default from the schema */
export function addSettingOptions<S extends Shape>(
  cmd: Command,
  settings: Settings<S>,
  skip: readonly (keyof S & string)[] = [],
): void {
  for (const key of settings.keys) {
    if (skip.includes(key)) continue;
    const kind = settings.kind(key);
    const def = settings.defaultText(key);
    const value = kind === 'switch' ? '' : ` <${settings.placeholder(key)}>`;
    const opt = new Option(
      `${flagOf(key)}${value}`,
      `${settings.describe(key)}${def !== undefined ? ` (default ${def})` : ''}`,
    );
    if (typeof kind === 'object') opt.choices(kind.choices);
    if (settings.required(key)) opt.makeOptionMandatory();
    cmd.addOption(opt);
  }
}

/** `--data-dir` for a command whose other flags are written by hand: the shared fragment's wording */
export const dataDirOption = () => {
  const setting = dataDirSetting(DATA_DIR_ENV);
  return new Option(`--data-dir <${setting.meta()?.placeholder ?? 'dir'}>`, setting.description ?? '');
};

/** An http(s) URL flag; anything else is a UsageError with an example. */
/** A flag's comma-separated list: its items trimmed, empty ones dropped. */
export function commaList(value: string): string[] {
  return value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

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
