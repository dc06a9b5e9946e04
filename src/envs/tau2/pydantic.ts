/**
 * The part of pydantic v2 the τ² domains rely on: typed models whose instances tools change in
 * place, validation in pydantic's lax mode with its error texts (a tool that builds a model from a
 * model's arguments shows them), `model_dump` in field order, and `model_json_schema` for a tool's
 * parameters.
 *
 * Instances hold Python values. Tools assign to fields without validation (as pydantic does
 * without `validate_assignment`), so a dump follows the values actually held, not the declared
 * types: a float field that was given the int `0` dumps `0`.
 */
import { PyException } from '../py/errors.js';
import { compareCodePoints, floatRepr, jsonDumps, repr } from '../py/format.js';
import { type PyDict, PyObject, type PyValue, pyEquals, typeName } from '../py/values.js';

/** The pydantic release whose error links the reference shows (`errors.pydantic.dev/<v>/v/...`). */
export const PYDANTIC_DOCS_VERSION = '2.11';

export type Loc = readonly (string | number)[];
export interface Issue {
  readonly loc: Loc;
  readonly type: string;
  readonly msg: string;
  readonly input: PyValue;
}

/** Raised by validation; `str(e)` is pydantic's multi-line text. */
export class ValidationError extends PyException {
  constructor(
    readonly title: string,
    readonly issues: readonly Issue[],
  ) {
    super('ValidationError', validationText(title, issues));
  }
}

const FAIL = Symbol('invalid');
type Result<T> = T | typeof FAIL;

/** JSON schema pieces, plus the models a schema refers to (`$defs`). */
export interface SchemaContext {
  readonly defs: Map<string, Record<string, unknown>>;
  /** a model field's description (`ToolDocs.field`) */
  readonly fieldDoc: (model: string, field: string) => string | undefined;
  /** a model's own docstring, which pydantic writes as the `description` of its `$defs` entry (`ToolDocs.model`) */
  readonly modelDoc?: (model: string) => string | undefined;
}

/** A field type: how pydantic validates it and what JSON schema it has. */
export interface PyType<T> {
  validate(v: PyValue, loc: Loc, issues: Issue[]): Result<T>;
  schema(ctx: SchemaContext): Record<string, unknown>;
  /** whether pydantic sets a `title` on a field of this type (not for a bare model reference) */
  readonly titled: boolean;
}

function issue(issues: Issue[], loc: Loc, type: string, msg: string, input: PyValue): typeof FAIL {
  issues.push({ loc, type, msg, input });
  return FAIL;
}

export const str: PyType<string> = {
  titled: true,
  validate: (v, loc, issues) =>
    typeof v === 'string' ? v : issue(issues, loc, 'string_type', 'Input should be a valid string', v),
  schema: () => ({ type: 'string' }),
};

// pydantic-core reads `1_000`, and `2.0` or `2.` as 2 (decimal zeros only)
const INT_TEXT = /^\s*([+-]?\d+(?:_\d+)*)(?:\.0*)?\s*$/;
export const int: PyType<bigint> = {
  titled: true,
  validate(v, loc, issues) {
    if (typeof v === 'bigint') return v;
    if (typeof v === 'boolean') return v ? 1n : 0n;
    if (typeof v === 'number') {
      if (!Number.isFinite(v))
        return issue(issues, loc, 'finite_number', 'Input should be a finite number', v);
      if (!Number.isInteger(v))
        return issue(
          issues,
          loc,
          'int_from_float',
          'Input should be a valid integer, got a number with a fractional part',
          v,
        );
      return BigInt(v);
    }
    if (typeof v === 'string') {
      const m = INT_TEXT.exec(v);
      if (m) return BigInt(m[1]!.replace(/_/g, ''));
      return issue(
        issues,
        loc,
        'int_parsing',
        'Input should be a valid integer, unable to parse string as an integer',
        v,
      );
    }
    return issue(issues, loc, 'int_type', 'Input should be a valid integer', v);
  },
  schema: () => ({ type: 'integer' }),
};

const FLOAT_TEXT = /^\s*[+-]?(?:\d+(?:_\d+)*(?:\.(?:\d+(?:_\d+)*)?)?|\.\d+(?:_\d+)*)(?:[eE][+-]?\d+)?\s*$/;
export const float: PyType<number> = {
  titled: true,
  validate(v, loc, issues) {
    if (typeof v === 'number') return v;
    if (typeof v === 'bigint') return Number(v);
    if (typeof v === 'boolean') return v ? 1 : 0;
    if (typeof v === 'string') {
      if (FLOAT_TEXT.test(v)) return Number(v.trim().replace(/_/g, ''));
      return issue(
        issues,
        loc,
        'float_parsing',
        'Input should be a valid number, unable to parse string as a number',
        v,
      );
    }
    return issue(issues, loc, 'float_type', 'Input should be a valid number', v);
  },
  schema: () => ({ type: 'number' }),
};

const TRUE_TEXT = new Set(['1', 'on', 't', 'true', 'y', 'yes']);
const FALSE_TEXT = new Set(['0', 'off', 'f', 'false', 'n', 'no']);
export const bool: PyType<boolean> = {
  titled: true,
  validate(v, loc, issues) {
    if (typeof v === 'boolean') return v;
    if (typeof v === 'bigint' || typeof v === 'number') {
      const n = Number(v);
      if (n === 0 || n === 1) return n === 1;
    }
    if (typeof v === 'string') {
      const t = v.toLowerCase();
      if (TRUE_TEXT.has(t)) return true;
      if (FALSE_TEXT.has(t)) return false;
      return issue(
        issues,
        loc,
        'bool_parsing',
        'Input should be a valid boolean, unable to interpret input',
        v,
      );
    }
    return issue(issues, loc, 'bool_type', 'Input should be a valid boolean', v);
  },
  schema: () => ({ type: 'boolean' }),
};

/** `Any`: anything, as is. */
export const any: PyType<PyValue> = {
  titled: true,
  validate: (v) => v,
  schema: () => ({}),
};

/** `Literal['a', 'b']` of strings. */
export function literal<const L extends string>(...values: L[]): PyType<L> {
  const expected =
    values.length === 1
      ? repr(values[0]!)
      : `${values.slice(0, -1).map(repr).join(', ')} or ${repr(values[values.length - 1]!)}`;
  return {
    titled: true,
    validate: (v, loc, issues) =>
      typeof v === 'string' && (values as string[]).includes(v)
        ? (v as L)
        : issue(issues, loc, 'literal_error', `Input should be ${expected}`, v),
    schema: () =>
      values.length === 1 ? { const: values[0], type: 'string' } : { enum: values, type: 'string' },
  };
}

/**
 * A `str` Enum class: its members' values validate (held as the value strings, which is how
 * they compare, print with `.value` and dump as JSON), and the schema refers to `$defs`.
 */
export function enumOf<const V extends string>(name: string, values: readonly V[]): PyType<V> {
  const expected =
    values.length === 1
      ? repr(values[0]!)
      : `${values.slice(0, -1).map(repr).join(', ')} or ${repr(values[values.length - 1]!)}`;
  return {
    titled: false,
    validate: (v, loc, issues) =>
      typeof v === 'string' && (values as readonly string[]).includes(v)
        ? (v as V)
        : issue(issues, loc, 'enum', `Input should be ${expected}`, v),
    schema: (ctx) => {
      if (!ctx.defs.has(name)) ctx.defs.set(name, { enum: [...values], title: name, type: 'string' });
      return { $ref: `#/$defs/${name}` };
    },
  };
}

const DATE_TEXT = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATETIME_TEXT = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2}))?$/;

function realDate(y: string, m: string, d: string): boolean {
  const month = Number(m);
  const day = Number(d);
  return month >= 1 && month <= 12 && day >= 1 && day <= new Date(Date.UTC(Number(y), month, 0)).getUTCDate();
}

/**
 * `datetime.date`, held as the text `str(date)` gives (`2025-02-25`): that is what
 * `json.dumps(..., default=str)` writes for it, and such texts sort as the dates do.
 */
export const date: PyType<string> = {
  titled: true,
  validate(v, loc, issues) {
    if (typeof v !== 'string') return issue(issues, loc, 'date_type', 'Input should be a valid date', v);
    const m = DATE_TEXT.exec(v);
    if (m && realDate(m[1]!, m[2]!, m[3]!)) return v;
    return issue(
      issues,
      loc,
      'date_from_datetime_parsing',
      'Input should be a valid date or datetime, invalid character',
      v,
    );
  },
  schema: () => ({ format: 'date', type: 'string' }),
};

/** `datetime.datetime` without time zone, held as `str(dt)` gives it (`2025-01-20 14:30:00`). */
export const datetime: PyType<string> = {
  titled: true,
  validate(v, loc, issues) {
    if (typeof v !== 'string')
      return issue(issues, loc, 'datetime_type', 'Input should be a valid datetime', v);
    const d = DATE_TEXT.exec(v);
    if (d && realDate(d[1]!, d[2]!, d[3]!)) return `${v} 00:00:00`;
    const m = DATETIME_TEXT.exec(v);
    if (m && realDate(m[1]!, m[2]!, m[3]!)) return `${m[1]}-${m[2]}-${m[3]} ${m[4]}:${m[5]}:${m[6] ?? '00'}`;
    return issue(
      issues,
      loc,
      'datetime_from_date_parsing',
      'Input should be a valid datetime or date, invalid character',
      v,
    );
  },
  schema: () => ({ format: 'date-time', type: 'string' }),
};

/** `Optional[T]` */
export function optional<T>(t: PyType<T>): PyType<T | null> {
  return {
    titled: true,
    validate: (v, loc, issues) => (v === null ? null : t.validate(v, loc, issues)),
    schema: (ctx) => ({ anyOf: [t.schema(ctx), { type: 'null' }] }),
  };
}

export function list<T>(item: PyType<T>): PyType<T[]> {
  return {
    titled: true,
    validate(v, loc, issues) {
      if (!Array.isArray(v)) return issue(issues, loc, 'list_type', 'Input should be a valid list', v);
      const out: T[] = [];
      let ok = true;
      v.forEach((x, i) => {
        const r = item.validate(x, [...loc, i], issues);
        if (r === FAIL) ok = false;
        else out.push(r);
      });
      return ok ? out : FAIL;
    },
    schema: (ctx) => ({ items: item.schema(ctx), type: 'array' }),
  };
}

/** `Dict[K, V]` with string keys (K is str or a Literal of strings); order as given. */
export function dict<K extends string, V>(key: PyType<K>, value: PyType<V>): PyType<Map<K, V>> {
  return {
    titled: true,
    validate(v, loc, issues) {
      if (!(v instanceof Map))
        return issue(issues, loc, 'dict_type', 'Input should be a valid dictionary', v);
      const out = new Map<K, V>();
      let ok = true;
      for (const [k, x] of v) {
        const kk = key.validate(k as PyValue, [...loc, `${String(k)}`, '[key]'], issues);
        const vv = value.validate(x, [...loc, String(k)], issues);
        if (kk === FAIL || vv === FAIL) ok = false;
        else out.set(kk, vv);
      }
      return ok ? out : FAIL;
    },
    schema: (ctx) => {
      const s = value.schema(ctx);
      const k = key.schema(ctx);
      return k.enum || k.const
        ? { additionalProperties: s, propertyNames: k, type: 'object' }
        : { additionalProperties: s, type: 'object' };
    },
  };
}

/** A bare `dict` (any keys, any values). */
export const anyDict: PyType<PyDict> = {
  titled: true,
  validate: (v, loc, issues) =>
    v instanceof Map ? v : issue(issues, loc, 'dict_type', 'Input should be a valid dictionary', v),
  schema: () => ({ additionalProperties: true, type: 'object' }),
};

/**
 * `Union[A, B, ...]` as pydantic's smart mode settles the unions the domains use: the first
 * member that validates (their members differ by a literal tag).
 */
export function union<T>(...members: PyType<T>[]): PyType<T> {
  return {
    titled: true,
    validate(v, loc, issues) {
      const all: Issue[] = [];
      for (const m of members) {
        const mine: Issue[] = [];
        const r = m.validate(v, [...loc, memberTag(m)], mine);
        if (r !== FAIL) return r;
        all.push(...mine);
      }
      issues.push(...all);
      return FAIL;
    },
    schema: (ctx) => ({ anyOf: members.map((m) => m.schema(ctx)) }),
  };
}

/** how pydantic names a union member in an error's location */
function memberTag(t: PyType<unknown>): string {
  if (t instanceof ModelSpec) return t.name;
  return t === anyDict ? 'dict[any,any]' : 'any';
}

/** An instance of a domain model: its fields as properties, dumped in the declared order. */
export class PyModel extends PyObject {
  declare readonly $spec: ModelSpec<object>;
  get pyTypeName(): string {
    return this.$spec.name;
  }
  pyEquals(other: PyValue): boolean {
    if (!(other instanceof PyModel) || other.$spec !== this.$spec) return false;
    return pyEquals(modelDump(this), modelDump(other));
  }
  toStateJson(): never {
    throw new Error(`${this.$spec.name} has no state form`);
  }
  /** pydantic's repr: `Name(field=value, ...)` */
  override pyRepr(): string {
    const self = this as unknown as Record<string, PyValue>;
    return `${this.$spec.name}(${this.$spec.fields.map((f) => `${f.name}=${repr(self[f.name]!)}`).join(', ')})`;
  }
}

export type Model<T> = PyModel & T;

export interface FieldSpec {
  readonly name: string;
  readonly type: PyType<unknown>;
  /** present when the field has a default (the value pydantic fills in) */
  readonly default?: { readonly value: PyValue };
}

/** A pydantic model class: its name, its fields in declaration order, `extra='forbid'` or not. */
export class ModelSpec<T extends object> implements PyType<Model<T>> {
  readonly titled = false;
  constructor(
    readonly name: string,
    readonly fields: readonly FieldSpec[],
    readonly forbidExtra = false,
  ) {}

  /** An instance from already valid values (what tool code builds). */
  make(values: T): Model<T> {
    const m = Object.create(PyModel.prototype) as PyModel & { $spec: ModelSpec<T> };
    Object.defineProperty(m, '$spec', { value: this, enumerable: false });
    for (const f of this.fields) {
      const v = (values as Record<string, unknown>)[f.name];
      (m as unknown as Record<string, unknown>)[f.name] =
        v === undefined ? (f.default ? freshCopy(f.default.value) : undefined) : v;
    }
    return m as unknown as Model<T>;
  }

  validate(v: PyValue, loc: Loc, issues: Issue[]): Result<Model<T>> {
    if (v instanceof PyModel && v.$spec === (this as unknown)) return v as Model<T>;
    if (!(v instanceof Map))
      return issue(
        issues,
        loc,
        'model_type',
        `Input should be a valid dictionary or instance of ${this.name}`,
        v,
      );
    const values: Record<string, unknown> = {};
    let ok = true;
    for (const f of this.fields) {
      if (!v.has(f.name)) {
        if (f.default) values[f.name] = freshCopy(f.default.value);
        else {
          issue(issues, [...loc, f.name], 'missing', 'Field required', v);
          ok = false;
        }
        continue;
      }
      const r = f.type.validate(v.get(f.name)!, [...loc, f.name], issues);
      if (r === FAIL) ok = false;
      else values[f.name] = r;
    }
    if (this.forbidExtra)
      for (const [k, x] of v)
        if (!this.fields.some((f) => f.name === k)) {
          issue(issues, [...loc, String(k)], 'extra_forbidden', 'Extra inputs are not permitted', x);
          ok = false;
        }
    return ok ? this.make(values as T) : FAIL;
  }

  /** `Model.model_validate(data)` / `Model(**data)`: raises pydantic's ValidationError. */
  parse(v: PyValue): Model<T> {
    const issues: Issue[] = [];
    const r = this.validate(v, [], issues);
    if (r === FAIL) throw new ValidationError(this.name, issues);
    return r;
  }

  schema(ctx: SchemaContext): Record<string, unknown> {
    if (!ctx.defs.has(this.name)) {
      ctx.defs.set(this.name, {});
      const schema = objectSchema(this.name, this.fields, ctx, (f) => ctx.fieldDoc(this.name, f));
      const doc = ctx.modelDoc?.(this.name);
      // extra='forbid' shows in the schema (the reference's BaseModelNoExtra models)
      const shown = this.forbidExtra ? { additionalProperties: false, ...schema } : schema;
      ctx.defs.set(this.name, doc === undefined ? shown : { ...shown, description: doc });
    }
    return { $ref: `#/$defs/${this.name}` };
  }
}

export function model<T extends object>(name: string, fields: readonly FieldSpec[], forbidExtra = false) {
  return new ModelSpec<T>(name, fields, forbidExtra);
}

/** A field, optionally with a default. */
export function field(name: string, type: PyType<unknown>, ...dflt: [PyValue] | []): FieldSpec {
  return dflt.length ? { name, type, default: { value: dflt[0] } } : { name, type };
}

/** pydantic's title for a field: `order_id` -> `Order Id` (Python's str.title, then `_` -> space). */
export function fieldTitle(name: string): string {
  let out = '';
  let prevCased = false;
  for (const ch of name) {
    const lower = ch.toLowerCase();
    const upper = ch.toUpperCase();
    const cased = lower !== upper;
    out += cased ? (prevCased ? lower : upper) : ch;
    prevCased = cased;
  }
  return out.replace(/_/g, ' ');
}

/** The JSON schema of an object model (a model of `$defs`, or a tool's `parameters`). */
export function objectSchema(
  title: string,
  fields: readonly FieldSpec[],
  ctx: SchemaContext,
  describe: (field: string) => string | undefined,
): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  const required: string[] = [];
  for (const f of fields) {
    const s: Record<string, unknown> = { ...f.type.schema(ctx) };
    const description = describe(f.name);
    if (description !== undefined) s.description = description;
    if (f.type.titled) s.title = fieldTitle(f.name);
    if (f.default) s.default = jsonOf(f.default.value);
    else required.push(f.name);
    properties[f.name] = s;
  }
  const out: Record<string, unknown> = { properties };
  if (required.length) out.required = required;
  out.title = title;
  out.type = 'object';
  return out;
}

/** The whole schema pydantic's `model_json_schema()` gives: `$defs` first, keys sorted as pydantic sorts them. */
export function jsonSchema(
  title: string,
  fields: readonly FieldSpec[],
  fieldDoc: SchemaContext['fieldDoc'],
  describe: (field: string) => string | undefined,
  modelDoc?: SchemaContext['modelDoc'],
): Record<string, unknown> {
  const ctx: SchemaContext = { defs: new Map(), fieldDoc, ...(modelDoc ? { modelDoc } : {}) };
  const top = objectSchema(title, fields, ctx, describe);
  const whole = ctx.defs.size ? { $defs: Object.fromEntries(ctx.defs), ...top } : top;
  return sortSchema(whole, undefined) as Record<string, unknown>;
}

/**
 * pydantic (GenerateJsonSchema.sort) sorts every object's keys except the children of
 * `properties` and `default`, which keep the fields' order.
 */
function sortSchema(v: unknown, parent: string | undefined): unknown {
  if (Array.isArray(v)) return v.map((x) => sortSchema(x, parent));
  if (v === null || typeof v !== 'object') return v;
  const o = v as Record<string, unknown>;
  const keys = parent === 'properties' || parent === 'default' ? Object.keys(o) : Object.keys(o).sort();
  const out: Record<string, unknown> = {};
  for (const k of keys) out[k] = sortSchema(o[k], k);
  return out;
}

function jsonOf(v: PyValue): unknown {
  if (typeof v === 'bigint') return Number(v);
  if (Array.isArray(v)) return v.map(jsonOf);
  if (v instanceof Map) return Object.fromEntries([...v].map(([k, x]) => [String(k), jsonOf(x)]));
  return v;
}

/**
 * A default as each new instance gets it: pydantic copies a mutable default per instance (and a
 * `default_factory` makes a new one), so no two instances share a list, a dict or a model.
 */
export function freshCopy(v: PyValue): PyValue {
  if (v instanceof PyModel) {
    const self = v as unknown as Record<string, PyValue>;
    const values: Record<string, PyValue> = {};
    for (const f of v.$spec.fields) values[f.name] = freshCopy(self[f.name]!);
    return v.$spec.make(values);
  }
  if (Array.isArray(v)) return v.map(freshCopy);
  if (v instanceof Map) {
    const out: PyDict = new Map();
    for (const [k, x] of v) out.set(k, freshCopy(x));
    return out;
  }
  return v;
}

/** `model_dump()`: fields in order, nested models dumped, containers copied. */
export function modelDump(m: PyModel): PyDict {
  const out: PyDict = new Map();
  const self = m as unknown as Record<string, PyValue>;
  for (const f of m.$spec.fields) out.set(f.name, dumpValue(self[f.name]!));
  return out;
}

/** A held value as `model_dump` writes it. */
export function dumpValue(v: PyValue): PyValue {
  if (v instanceof PyModel) return modelDump(v);
  if (Array.isArray(v)) return v.map(dumpValue);
  if (v instanceof Map) {
    const out: PyDict = new Map();
    for (const [k, x] of v) out.set(k, dumpValue(x));
    return out;
  }
  return v;
}

/** pydantic_core shows an input by its repr, cut to 50 characters around `...`. */
function inputRepr(v: PyValue): string {
  const r = repr(v);
  const chars = [...r];
  return chars.length > 50 ? `${chars.slice(0, 25).join('')}...${chars.slice(-24).join('')}` : r;
}

function validationText(title: string, issues: readonly Issue[]): string {
  const n = issues.length;
  const lines = [`${n} validation error${n === 1 ? '' : 's'} for ${title}`];
  for (const i of issues) {
    if (i.loc.length) lines.push(i.loc.map(String).join('.'));
    lines.push(
      `  ${i.msg} [type=${i.type}, input_value=${inputRepr(i.input)}, input_type=${typeName(i.input)}]`,
    );
    lines.push(
      `    For further information visit https://errors.pydantic.dev/${PYDANTIC_DOCS_VERSION}/v/${i.type}`,
    );
  }
  return lines.join('\n');
}

/** `copy.deepcopy` of held values, models included (a fresh database from a validated template). */
export function deepClone<T extends PyValue>(v: T): T {
  if (v instanceof PyModel) {
    const self = v as unknown as Record<string, PyValue>;
    const values: Record<string, PyValue> = {};
    for (const f of v.$spec.fields) values[f.name] = deepClone(self[f.name]!);
    return v.$spec.make(values) as unknown as T;
  }
  if (Array.isArray(v)) return v.map((x) => deepClone(x)) as T;
  if (v instanceof Map) {
    const out: PyDict = new Map();
    for (const [k, x] of v as PyDict) out.set(k, deepClone(x));
    return out as T;
  }
  return v;
}

const sortedFieldsCache = new WeakMap<ModelSpec<object>, string[]>();
const PLAIN_JSON_TEXT = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;
const SURROGATE = /[\ud800-\udfff]/;

/**
 * `json.dumps(model_dump(), sort_keys=True)` of held values, written straight from the models
 * (the databases are megabytes, and the evaluator compares them often): the same text as
 * `jsonDumps(modelDump(m), { sortKeys: true })`, which the tests check.
 */
export function sortedJson(v: PyValue): string {
  const out: string[] = [];
  writeSorted(v, out);
  return out.join('');
}

function writeSorted(v: PyValue, out: string[]): void {
  if (typeof v === 'string') {
    out.push(PLAIN_JSON_TEXT.test(v) ? `"${v}"` : jsonDumps(v));
    return;
  }
  if (v instanceof PyModel) {
    let names = sortedFieldsCache.get(v.$spec);
    if (!names) {
      names = v.$spec.fields.map((f) => f.name).sort(compareCodePoints);
      sortedFieldsCache.set(v.$spec, names);
    }
    const self = v as unknown as Record<string, PyValue>;
    out.push('{');
    for (let i = 0; i < names.length; i++) {
      if (i) out.push(', ');
      out.push(`"${names[i]}": `);
      writeSorted(self[names[i]!]!, out);
    }
    out.push('}');
    return;
  }
  if (Array.isArray(v)) {
    out.push('[');
    for (let i = 0; i < v.length; i++) {
      if (i) out.push(', ');
      writeSorted(v[i]!, out);
    }
    out.push(']');
    return;
  }
  if (v instanceof Map) {
    const keys = [...v.keys()];
    if (!keys.every((k) => typeof k === 'string')) {
      out.push(jsonDumps(dumpValue(v), { sortKeys: true }));
      return;
    }
    const strKeys = keys as string[];
    if (strKeys.some((k) => SURROGATE.test(k))) strKeys.sort(compareCodePoints);
    else strKeys.sort();
    out.push('{');
    for (let i = 0; i < strKeys.length; i++) {
      if (i) out.push(', ');
      const k = strKeys[i]!;
      out.push(PLAIN_JSON_TEXT.test(k) ? `"${k}"` : jsonDumps(k), ': ');
      writeSorted(v.get(k)!, out);
    }
    out.push('}');
    return;
  }
  if (typeof v === 'bigint') out.push(v.toString());
  else if (typeof v === 'number') out.push(Number.isFinite(v) ? floatRepr(v) : jsonDumps(v));
  else if (typeof v === 'boolean') out.push(v ? 'true' : 'false');
  else if (v === null) out.push('null');
  else out.push(jsonDumps(v));
}
