/**
 * The Python value model the BFCL port runs on.
 *
 * The reference environment is Python, and its observable behaviour (result strings, state
 * equality) depends on Python's types: `5` and `5.0` print differently, dict keys `0` and `'0'`
 * differ, dicts keep insertion order even for integer-like keys. So the port keeps values in
 * this model instead of plain JSON:
 *
 * | Python       | here                                   |
 * |--------------|----------------------------------------|
 * | int          | `bigint` (unbounded, like Python's)    |
 * | float        | `number`                               |
 * | bool         | `boolean`                              |
 * | None         | `null`                                 |
 * | str          | `string`                               |
 * | list         | `PyValue[]`                            |
 * | dict         | `Map` (insertion order, typed keys)    |
 * | tuple / set  | `PyTuple` / `PySet`                    |
 * | mpf, Decimal, Ellipsis | `PyOpaque` (printed by repr, not JSON-serialisable) |
 * | class instances (file tree nodes) | subclasses of `PyObject` |
 */

export type PyKey = string | bigint | number | boolean | null | PyTuple;
export type PyDict = Map<PyKey, PyValue>;
export type PyList = PyValue[];
export type PyValue =
  | null
  | boolean
  | bigint
  | number
  | string
  | PyList
  | PyDict
  | PyTuple
  | PySet
  | PyOpaque
  | PyObject;

/** An immutable Python tuple. */
export class PyTuple {
  constructor(readonly items: readonly PyValue[]) {}
}

/** A Python set of hashable scalars (the reference only ever stores ints or strings in sets). */
export class PySet {
  readonly items: Set<string | bigint | number | boolean | null>;
  constructor(items: Iterable<string | bigint | number | boolean | null> = []) {
    this.items = new Set();
    for (const item of items) this.add(item);
  }
  add(item: string | bigint | number | boolean | null): void {
    this.items.add(normaliseScalarKey(item) as string | bigint | number | boolean | null);
  }
  has(item: PyValue): boolean {
    if (!isHashableScalar(item)) return false;
    return this.items.has(normaliseScalarKey(item) as string | bigint | number | boolean | null);
  }
  get size(): number {
    return this.items.size;
  }
}

/**
 * A value that only ever shows up through its repr: mpmath `mpf('2.5')`, `Decimal('1.4')`,
 * `Ellipsis`. json.dumps rejects it, which is what sends the reference to `str(dict)`.
 */
export class PyOpaque {
  constructor(
    readonly typeName: string,
    readonly reprText: string,
  ) {}
}

export const ELLIPSIS = new PyOpaque('ellipsis', 'Ellipsis');

/** Base of instances of reference classes that live inside state (e.g. the file tree's nodes). */
export abstract class PyObject {
  abstract readonly pyTypeName: string;
  /** Python `==` against another value. */
  abstract pyEquals(other: PyValue): boolean;
  /** The golden/state JSON form of this object (SPEC 9.1). */
  abstract toStateJson(): JsonValue;
  pyRepr(): string {
    return `<${this.pyTypeName} object>`;
  }
}

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

export function isHashableScalar(v: PyValue): v is string | bigint | number | boolean | null {
  const t = typeof v;
  return v === null || t === 'string' || t === 'bigint' || t === 'number' || t === 'boolean';
}

/**
 * Python's `1 == 1.0 == True` share one dict slot. Map lookups use SameValueZero, so numbers
 * that Python treats as the same key are normalised to one representative for *lookups*.
 */
function normaliseScalarKey(k: PyKey): PyKey {
  if (typeof k === 'boolean') return k ? 1n : 0n;
  if (typeof k === 'number' && Number.isInteger(k)) return BigInt(k);
  return k;
}

/** Dict lookup with Python key equality (`d[1]` finds key `1.0` or `True`). */
export function dictGet(d: PyDict, key: PyKey): PyValue | undefined {
  const direct = d.get(key);
  if (direct !== undefined || d.has(key)) return direct;
  const found = findKey(d, key);
  return found === undefined ? undefined : d.get(found.key);
}

/** Whether the dict has `key` under Python key equality. */
export function dictHas(d: PyDict, key: PyKey): boolean {
  return d.has(key) || findKey(d, key) !== undefined;
}

/** The key actually stored in `d` that Python would consider equal to `key`. */
export function findKey(d: PyDict, key: PyKey): { key: PyKey } | undefined {
  if (d.has(key)) return { key };
  if (key instanceof PyTuple) {
    for (const k of d.keys()) if (pyEquals(k, key)) return { key: k };
    return undefined;
  }
  if (typeof key === 'string' || key === null) return undefined;
  const norm = normaliseScalarKey(key);
  for (const k of d.keys()) {
    if (typeof k === 'string' || k === null || k instanceof PyTuple) continue;
    if (normaliseScalarKey(k) === norm) return { key: k };
  }
  return undefined;
}

/** Set `d[key] = value`, keeping the original key object and position when an equal key exists. */
export function dictSet(d: PyDict, key: PyKey, value: PyValue): void {
  const found = findKey(d, key);
  d.set(found ? found.key : key, value);
}

/** Delete `d[key]` under Python key equality; returns whether something was removed. */
export function dictDelete(d: PyDict, key: PyKey): boolean {
  const found = findKey(d, key);
  return found ? d.delete(found.key) : false;
}

/** Build a dict from entries (keys in the given order). */
export function pyDict(entries: Iterable<readonly [PyKey, PyValue]> = []): PyDict {
  const d: PyDict = new Map();
  for (const [k, v] of entries) dictSet(d, k, v);
  return d;
}

/** Build a str-keyed dict from a plain object literal (handy for result dicts in API code). */
export function dictOf(obj: Record<string, PyValue>): PyDict {
  return new Map(Object.entries(obj));
}

export function isDict(v: PyValue | undefined): v is PyDict {
  return v instanceof Map;
}

export function isList(v: PyValue | undefined): v is PyList {
  return Array.isArray(v);
}

export function isInt(v: PyValue | undefined): v is bigint {
  return typeof v === 'bigint';
}

export function isFloat(v: PyValue | undefined): v is number {
  return typeof v === 'number';
}

export function isStr(v: PyValue | undefined): v is string {
  return typeof v === 'string';
}

/** Python `type(v).__name__`. */
export function typeName(v: PyValue): string {
  if (v === null) return 'NoneType';
  switch (typeof v) {
    case 'boolean':
      return 'bool';
    case 'bigint':
      return 'int';
    case 'number':
      return 'float';
    case 'string':
      return 'str';
  }
  if (Array.isArray(v)) return 'list';
  if (v instanceof Map) return 'dict';
  if (v instanceof PyTuple) return 'tuple';
  if (v instanceof PySet) return 'set';
  if (v instanceof PyOpaque) return v.typeName;
  return v.pyTypeName;
}

function numericValue(v: PyValue): bigint | number | undefined {
  if (typeof v === 'bigint' || typeof v === 'number') return v;
  if (typeof v === 'boolean') return v ? 1n : 0n;
  return undefined;
}

/** Python `a == b`. */
export function pyEquals(a: PyValue, b: PyValue): boolean {
  if (a === b) return true;
  const na = numericValue(a);
  const nb = numericValue(b);
  if (na !== undefined || nb !== undefined) {
    if (na === undefined || nb === undefined) return false;
    // Loose equality compares bigint and number by mathematical value, like Python.
    // biome-ignore lint/suspicious/noDoubleEquals: intentional cross-type numeric comparison
    return na == nb;
  }
  if (a === null || b === null) return false;
  if (typeof a === 'string' || typeof b === 'string') return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!pyEquals(a[i]!, b[i]!)) return false;
    return true;
  }
  if (a instanceof PyTuple) {
    if (!(b instanceof PyTuple) || a.items.length !== b.items.length) return false;
    for (let i = 0; i < a.items.length; i++) if (!pyEquals(a.items[i]!, b.items[i]!)) return false;
    return true;
  }
  if (a instanceof Map) {
    if (!(b instanceof Map) || a.size !== b.size) return false;
    for (const [k, v] of a) {
      const found = findKey(b, k);
      if (!found) return false;
      if (!pyEquals(v, b.get(found.key)!)) return false;
    }
    return true;
  }
  if (a instanceof PySet) {
    if (!(b instanceof PySet) || a.size !== b.size) return false;
    for (const item of a.items) if (!b.has(item)) return false;
    return true;
  }
  if (a instanceof PyOpaque) {
    return b instanceof PyOpaque && a.typeName === b.typeName && a.reprText === b.reprText;
  }
  if (a instanceof PyObject) return a.pyEquals(b);
  return false;
}

/** `copy.deepcopy` for plain data (objects are not copied: scenarios never contain them). */
export function deepCopy<T extends PyValue>(v: T): T {
  if (v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) return v.map((x) => deepCopy(x)) as T;
  if (v instanceof Map) {
    const out: PyDict = new Map();
    for (const [k, val] of v as PyDict) out.set(k, deepCopy(val));
    return out as T;
  }
  if (v instanceof PyTuple) return new PyTuple(v.items.map((x) => deepCopy(x))) as T;
  if (v instanceof PySet) return new PySet(v.items) as T;
  return v;
}

/**
 * The state form of SPEC 9.1: dicts become objects with string keys (ints in decimal),
 * sets become sorted lists, tuples lists, ints plain numbers.
 */
export function toStateJson(v: PyValue): JsonValue {
  if (v === null || typeof v === 'boolean' || typeof v === 'string' || typeof v === 'number') return v;
  if (typeof v === 'bigint') return Number(v);
  if (Array.isArray(v)) return v.map(toStateJson);
  if (v instanceof PyTuple) return v.items.map(toStateJson);
  if (v instanceof Map) {
    const out: { [key: string]: JsonValue } = {};
    for (const [k, val] of v) out[keyToStateString(k)] = toStateJson(val);
    return out;
  }
  if (v instanceof PySet) {
    const items = [...v.items];
    items.sort((x, y) => (x! < y! ? -1 : x! > y! ? 1 : 0));
    return items.map((x) => toStateJson(x));
  }
  if (v instanceof PyOpaque) return v.reprText;
  return v.toStateJson();
}

function keyToStateString(k: PyKey): string {
  if (typeof k === 'string') return k;
  if (typeof k === 'bigint') return k.toString();
  if (k === null) return 'None';
  if (typeof k === 'boolean') return k ? 'True' : 'False';
  if (typeof k === 'number') return String(k);
  return JSON.stringify(toStateJson(k));
}
