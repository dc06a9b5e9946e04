/**
 * MemoryAPI_kv (`memory_kv.py` in BFCL v4): a core memory of at most 7 entries of 300 characters
 * and an archival memory of 50 entries of 2000, both keyed by snake_case keys, with BM25+ key
 * search (agentic/bm25.ts). The memory a task starts from is its scenario's snapshot, given as
 * `initial_config.MemoryAPI_kv.snapshot` in the reference's snapshot shape
 * (`{"core_memory": {...}, "archival_memory": {...}}`).
 */
import { TypeError_, ZeroDivisionError_ } from '../../py/errors.js';
import { str } from '../../py/format.js';
import { len, strFor } from '../../py/ops.js';
import { dictOf, isHashableScalar, type PyDict, PyTuple, type PyValue, typeName } from '../../py/values.js';
import { bm25Rank } from '../agentic/bm25.js';
import type { ApiClass, BfclApi, BoundArgs, ScenarioContext } from './api.js';
import { opt, req } from './api.js';

const MAX_CORE_MEMORY_SIZE = 7;
const MAX_CORE_MEMORY_ENTRY_LENGTH = 300;
const MAX_ARCHIVAL_MEMORY_SIZE = 50;
const MAX_ARCHIVAL_MEMORY_ENTRY_LENGTH = 2000;

/** Python's `re.match(r"^[a-z]+(_[a-z0-9]+)*$", s)`: `$` also matches before a final newline. */
const KEY_FORMAT = /^[a-z]+(?:_[a-z0-9]+)*\n?$/;

const status = (s: string) => dictOf({ status: s });
const error = (s: string) => dictOf({ error: s });

/** `key in d` for a dict of str keys: only a str can be there; an unhashable key raises. */
function lookupKey(d: Map<string, string>, key: PyValue): string | undefined {
  if (typeof key === 'string') return d.has(key) ? key : undefined;
  if (!isHashableScalar(key) && !(key instanceof PyTuple))
    throw TypeError_(`unhashable type: '${typeName(key)}'`);
  return undefined;
}

/** `list[:k]` with Python's slice rules for an int (or bool) k. */
function slicePy<T>(items: readonly T[], k: PyValue): T[] {
  if (k === null) return [...items];
  let n: number;
  if (typeof k === 'bigint') n = Number(k);
  else if (typeof k === 'boolean') n = k ? 1 : 0;
  else throw TypeError_('slice indices must be integers or None or have an __index__ method');
  return items.slice(0, n < 0 ? Math.max(0, items.length + n) : n);
}

/** One key-value store with the reference's limits and messages. */
class KvStore {
  readonly entries = new Map<string, string>();
  constructor(
    private readonly maxSize: number,
    private readonly maxEntryLength: number,
    private readonly fullMessage: string,
    private readonly addedMessage: string,
  ) {}

  add(key: PyValue, value: PyValue): PyDict {
    const k = str(key);
    const v = str(value);
    if (this.entries.size >= this.maxSize) return error(this.fullMessage);
    if (len(v) > this.maxEntryLength)
      return error(
        `Entry is too long. Please shorten the entry to less than ${this.maxEntryLength} characters.`,
      );
    if (!KEY_FORMAT.test(k)) return error('Key must be in snake_case format and cannot contain spaces.');
    if (this.entries.has(k)) return error('Key name must be unique.');
    this.entries.set(k, v);
    return status(this.addedMessage);
  }

  remove(key: PyValue): PyDict {
    const k = lookupKey(this.entries, key);
    if (k === undefined) return error('Key not found.');
    this.entries.delete(k);
    return status('Key removed.');
  }

  replace(key: PyValue, value: PyValue): PyDict {
    const k = str(key);
    const v = str(value);
    if (!this.entries.has(k)) return error('Key not found.');
    if (len(v) > this.maxEntryLength)
      return error(
        `Entry is too long. Please shorten the entry to less than ${this.maxEntryLength} characters.`,
      );
    this.entries.set(k, v);
    return status('Key replaced.');
  }

  retrieve(key: PyValue): PyDict {
    const k = lookupKey(this.entries, key);
    if (k === undefined) return error('Key not found.');
    return dictOf({ value: this.entries.get(k)! });
  }

  listKeys(): PyDict {
    return dictOf({ keys: [...this.entries.keys()] });
  }

  keySearch(query: PyValue, k: PyValue): PyDict {
    const keys = [...this.entries.keys()];
    // the reference builds the index (which divides by the key count) before reading the query
    if (keys.length === 0) throw ZeroDivisionError_('division by zero');
    const ranked = bm25Rank(strFor(query, 'replace'), keys);
    return dictOf({ ranked_results: slicePy(ranked, k).map(([s, t]) => new PyTuple([s, t])) });
  }

  toDict(): PyDict {
    return new Map(this.entries);
  }

  load(d: PyValue | undefined): void {
    this.entries.clear();
    if (d instanceof Map) for (const [k, v] of d) this.entries.set(String(k), String(v));
  }
}

export class MemoryKvInstance implements BfclApi {
  readonly className = 'MemoryAPI_kv' as const;
  readonly core = new KvStore(
    MAX_CORE_MEMORY_SIZE,
    MAX_CORE_MEMORY_ENTRY_LENGTH,
    'Core memory is full. Please clear some entries.',
    'Key-value pair added.',
  );
  readonly archival = new KvStore(
    MAX_ARCHIVAL_MEMORY_SIZE,
    MAX_ARCHIVAL_MEMORY_ENTRY_LENGTH,
    'Long term memory is full. Please clear some entries.',
    'Key added.',
  );

  loadScenario(config: PyDict, _ctx: ScenarioContext): void {
    const snap = config.get('snapshot');
    if (snap instanceof Map) {
      this.core.load(snap.get('core_memory'));
      this.archival.load(snap.get('archival_memory'));
    }
  }

  publicState(): ReadonlyMap<string, PyValue> {
    return new Map<string, PyValue>([
      ['core_memory', this.core.toDict()],
      ['archival_memory', this.archival.toDict()],
    ]);
  }

  /** The reference's snapshot file content. */
  snapshot(): PyDict {
    return dictOf({ core_memory: this.core.toDict(), archival_memory: this.archival.toDict() });
  }
}

const k5 = (k: PyValue | undefined): PyValue => (k === undefined ? 5n : k);

export const memoryKv: ApiClass<MemoryKvInstance> = {
  className: 'MemoryAPI_kv',
  stateless: false,
  create: () => new MemoryKvInstance(),
  methods: {
    core_memory_add: {
      params: [req('key'), req('value')],
      run: (s, a: BoundArgs) => s.core.add(a[0]!, a[1]!),
    },
    core_memory_remove: { params: [req('key')], run: (s, a) => s.core.remove(a[0]!) },
    core_memory_replace: { params: [req('key'), req('value')], run: (s, a) => s.core.replace(a[0]!, a[1]!) },
    core_memory_clear: {
      params: [],
      run: (s) => {
        s.core.entries.clear();
        return status('Short term memory cleared.');
      },
    },
    core_memory_retrieve: { params: [req('key')], run: (s, a) => s.core.retrieve(a[0]!) },
    core_memory_list_keys: { params: [], run: (s) => s.core.listKeys() },
    core_memory_key_search: {
      params: [req('query'), opt('k')],
      run: (s, a) => s.core.keySearch(a[0]!, k5(a[1])),
    },
    core_memory_retrieve_all: { params: [], run: (s) => s.core.toDict() },
    archival_memory_add: {
      params: [req('key'), req('value')],
      run: (s, a) => s.archival.add(a[0]!, a[1]!),
    },
    archival_memory_remove: { params: [req('key')], run: (s, a) => s.archival.remove(a[0]!) },
    archival_memory_replace: {
      params: [req('key'), req('value')],
      run: (s, a) => s.archival.replace(a[0]!, a[1]!),
    },
    archival_memory_clear: {
      params: [],
      run: (s) => {
        s.archival.entries.clear();
        return status('Long term memory cleared.');
      },
    },
    archival_memory_retrieve: { params: [req('key')], run: (s, a) => s.archival.retrieve(a[0]!) },
    archival_memory_list_keys: { params: [], run: (s) => s.archival.listKeys() },
    archival_memory_key_search: {
      params: [req('query'), opt('k')],
      run: (s, a) => s.archival.keySearch(a[0]!, k5(a[1])),
    },
  },
};
