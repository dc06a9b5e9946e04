/**
 * A command's settings declared once, as one zod object schema of plain keys: the flag of each key
 * (`batchSize` is `--batch-size`), how its text is read, the validation, the defaults, the help
 * and the layering of several sources (a config file or a checkpoint, then the flags) all come
 * from it. `seal train` (train/config.ts) and `seal pretrain` (learner/embedded/pretrain-config.ts)
 * declare theirs with it; both read a YAML file of the same keys with `--config` (the presets under
 * `configs/`).
 *
 * A key's kind is read off its schema: a number, a boolean given as `true`/`false`, a choice (an
 * enum), a string, a list of strings (`--stop <text...>`), or a switch: `z.literal(true).optional()`,
 * a flag without a value that is set or not (`--untied`). A key with neither a default nor
 * `.optional()` is required: its flag must be given.
 */
import { existsSync, readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { UsageError, UserError } from './errors.js';
import { didYouMean, suggest } from './suggest.js';

/** A bad value for a setting, from a flag, a file or a checkpoint: exit 2, the message alone. */
export class SettingsError extends UserError {}

export type Kind =
  | 'number'
  | 'boolean'
  | 'switch'
  | 'string'
  | 'list'
  | { readonly choices: readonly string[] };

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

/** `value` as a number in `range`; a UsageError naming `flag`, the range and the value otherwise. */
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

export const flagOf = (key: string): string => `--${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;

/**
 * Where a number flag's text is checked against the key's range. `schema`: the flag only has to be
 * a number, and the range is checked with the other sources, in the same words (`seal train`, whose
 * flags and YAML file share one message per key). `flag`: at once, in the words every other
 * command's number flags use (`--steps must be an integer >= 1 ..., got "many"`).
 */
export type RangeCheck = 'schema' | 'flag';

/** One source of values: a file, a checkpoint, the flags (which name each key's flag in errors). */
export interface Layer {
  readonly source: string;
  readonly values: Readonly<Record<string, unknown>>;
  readonly flags?: boolean;
}

export type Shape = Record<string, z.ZodType>;

/** the schema under its default and optional wrappers */
function core(s: z.ZodType): z.ZodType {
  let inner = s;
  while (inner instanceof z.ZodDefault || inner instanceof z.ZodOptional) inner = inner.unwrap() as z.ZodType;
  return inner;
}

export class Settings<S extends Shape> {
  readonly keys: readonly (keyof S & string)[];
  /** the values of no source at all */
  readonly defaults: z.infer<z.ZodObject<S>>;

  constructor(
    readonly schema: z.ZodObject<S>,
    private readonly rangeCheck: RangeCheck,
  ) {
    this.keys = Object.keys(schema.shape) as (keyof S & string)[];
    // key by key, so that a required key (no default) leaves the others' defaults readable
    const defaults: Record<string, unknown> = {};
    for (const k of this.keys) {
      const d = schema.shape[k]!.safeParse(undefined);
      if (d.success && d.data !== undefined) defaults[k] = d.data;
    }
    this.defaults = defaults as z.infer<z.ZodObject<S>>;
  }

  /** a key that has no default and is not optional: its flag must be given */
  required(key: keyof S & string): boolean {
    return !this.schema.shape[key]!.safeParse(undefined).success;
  }

  has(key: string): key is keyof S & string {
    return Object.hasOwn(this.schema.shape, key);
  }

  kind(key: keyof S & string): Kind {
    const s = core(this.schema.shape[key]!);
    if (s instanceof z.ZodNumber) return 'number';
    if (s instanceof z.ZodBoolean) return 'boolean';
    if (s instanceof z.ZodLiteral && s.value === true) return 'switch';
    if (s instanceof z.ZodEnum) return { choices: s.options as string[] };
    if (s instanceof z.ZodArray) return 'list';
    return 'string';
  }

  describe(key: keyof S & string): string {
    return this.schema.shape[key]!.description ?? '';
  }

  /**
   * The default as the help says it: the key's `defaultText` meta where the value depends on the
   * machine (a thread count), so that the help and the docs made from it read the same everywhere;
   * else the value itself (undefined: no default).
   */
  defaultText(key: keyof S & string): string | undefined {
    const text = this.schema.shape[key]!.meta()?.defaultText;
    if (typeof text === 'string') return text;
    const def = (this.defaults as Readonly<Record<string, unknown>>)[key];
    return def === undefined ? undefined : String(def);
  }

  /** what a flag's value is called in the help: the key's `placeholder` meta, else by its kind */
  placeholder(key: keyof S & string): string {
    const named = this.schema.shape[key]!.meta()?.placeholder;
    if (typeof named === 'string') return named;
    const kind = this.kind(key);
    if (typeof kind === 'object') return 'choice';
    if (kind === 'number') return this.range(key).int ? 'n' : 'x';
    if (kind === 'list') return 'value...';
    return kind === 'boolean' ? 'true|false' : 'value';
  }

  /** a number key's bounds, as the schema states them (zod's safe-integer bounds are no bound) */
  range(key: keyof S & string): NumberRange {
    const s = core(this.schema.shape[key]!);
    if (!(s instanceof z.ZodNumber)) return {};
    const min = s.minValue ?? Number.NEGATIVE_INFINITY;
    const max = s.maxValue ?? Number.POSITIVE_INFINITY;
    // `.gt(x)`: zod reports x as the minimum; its check says the bound itself is out
    const exclusive = s.def.checks?.some((c) => {
      const d = c._zod.def as { check?: string; inclusive?: boolean };
      return d.check === 'greater_than' && d.inclusive === false;
    });
    return {
      ...(s.isInt ? { int: true } : {}),
      ...(min > Number.MIN_SAFE_INTEGER ? { min, ...(exclusive ? { minExclusive: true } : {}) } : {}),
      ...(max < Number.MAX_SAFE_INTEGER ? { max } : {}),
    };
  }

  /** a flag's text (or `true`, for a switch; the texts, for a list) as the value its key takes */
  flagValue(key: keyof S & string, text: string | true | readonly string[]): unknown {
    const kind = this.kind(key);
    const flag = flagOf(key);
    if (kind === 'switch') return true;
    if (kind === 'list') return typeof text === 'string' ? [text] : Array.isArray(text) ? [...text] : [];
    const value = String(text);
    if (kind === 'number') {
      if (this.rangeCheck === 'flag') return parseNumberFlag(flag, value, this.range(key));
      const n = Number(value);
      if (value.trim() === '' || !Number.isFinite(n))
        throw new SettingsError(`${flag}: "${value}" is not a number`);
      return n;
    }
    if (kind === 'boolean') {
      if (value === 'true' || value === 'false') return value === 'true';
      throw new SettingsError(`${flag}: give true or false, not "${value}"`);
    }
    return value;
  }

  /** the keys given as flags (commander's option values, keyed by the camel-case key), as values */
  fromFlags(opts: Readonly<Record<string, unknown>>): Partial<Record<keyof S & string, unknown>> {
    const values: Partial<Record<keyof S & string, unknown>> = {};
    for (const k of this.keys)
      if (opts[k] !== undefined) {
        const v = opts[k];
        values[k] = this.flagValue(k, v === true ? true : Array.isArray(v) ? v.map(String) : String(v));
      }
    return values;
  }

  /** The configuration of a command whose only source is its flags: validated, with the defaults. */
  ofFlags(opts: Readonly<Record<string, unknown>>): z.infer<z.ZodObject<S>> {
    return this.resolve([{ source: 'flags', values: this.fromFlags(opts), flags: true }]).config;
  }

  describeIssue(issue: z.core.$ZodIssue, source: string): string {
    const key = issue.path.join('.');
    // an item of a list: its place, counted from 1, as a user reads the list
    const at = typeof issue.path[1] === 'number' ? ` item ${issue.path[1] + 1}` : '';
    if (issue.code === 'unrecognized_keys') {
      const unknown = issue.keys.map((k) => `${k}${didYouMean(k, this.keys)}`).join(', ');
      // the whole list only when no name is close: forty keys bury the one the user meant
      const guessed = issue.keys.every((k) => suggest(k, this.keys).length > 0);
      const list = guessed ? '' : `; the keys are: ${this.keys.join(', ')}`;
      return `${source}: unknown key(s) ${unknown}${list}\n(a key is a flag of the command's --help in camelCase: --max-grad-norm is maxGradNorm)`;
    }
    const kind = this.has(key) ? this.kind(key) : 'string';
    const allowed = typeof kind === 'object' ? ` (allowed: ${kind.choices.join(', ')})` : '';
    return `${source}: ${at ? `${String(issue.path[0])}${at}` : key || 'the file'}: ${issue.message}${allowed}`;
  }

  /**
   * The values of `layers`, later ones overriding earlier ones, then the defaults; each layer is
   * checked on its own first, so an error names where the bad value came from. `overrides` holds
   * every key a layer set.
   */
  resolve(layers: readonly Layer[]): {
    config: z.infer<z.ZodObject<S>>;
    overrides: Partial<z.infer<z.ZodObject<S>>>;
  } {
    for (const layer of layers) this.check(layer.values, (key) => (layer.flags ? flagOf(key) : layer.source));
    const overrides = Object.assign({}, ...layers.map((l) => l.values)) as Partial<z.infer<z.ZodObject<S>>>;
    const config = this.check(overrides, (key) => {
      const from = layers.findLast((l) => Object.hasOwn(l.values, key));
      return from?.flags ? flagOf(key) : (from?.source ?? 'config');
    });
    return { config, overrides };
  }

  /**
   * The keys of a YAML config file, each checked against the schema on its own (an unknown key or
   * a bad value names the file and the key); what the file leaves out stays unset.
   */
  readFile(file: string): Partial<Record<keyof S & string, unknown>> {
    const values = readConfigFile(file);
    this.check(values, () => file);
    return values as Partial<Record<keyof S & string, unknown>>;
  }

  private check(values: unknown, sourceOf: (key: string) => string): z.infer<z.ZodObject<S>> {
    const checked = this.schema.safeParse(values);
    if (checked.success) return checked.data;
    const issue = checked.error.issues[0]!;
    throw new SettingsError(this.describeIssue(issue, sourceOf(String(issue.path[0] ?? ''))));
  }
}

/** A YAML file of setting keys, as a plain mapping (the schema checks its keys and values). */
export function readConfigFile(file: string): Record<string, unknown> {
  if (!existsSync(file)) throw new SettingsError(`config file not found: ${file}`);
  let parsed: unknown;
  try {
    parsed = parseYaml(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new SettingsError(`${file} is not valid YAML: ${(e as Error).message}`);
  }
  if (parsed === null || parsed === undefined) return {};
  if (typeof parsed !== 'object' || Array.isArray(parsed))
    throw new SettingsError(`${file} must be a mapping of keys to values (e.g. "rounds: 4")`);
  return parsed as Record<string, unknown>;
}
