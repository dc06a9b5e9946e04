/**
 * MemoryAPI_vector (`memory_vector.py` in BFCL v4): a core store of at most 7 texts of 300
 * characters and an archival store of 50 texts of 2000, each text kept under a sequential id with
 * its embedding; retrieval is the nearest neighbours by inner product of L2-normalised vectors (a
 * FAISS `IndexIDMap(IndexFlatIP)` in the reference: exhaustive, scores as float32, best first).
 * Ties are broken by position in the index (insertion order; an update moves an entry to the end,
 * as `remove_ids` + `add_with_ids` do). The embeddings come from the configured `Embedder`
 * (`configureVectorEmbedder`); the memory a task starts from is its scenario's snapshot,
 * `initial_config.MemoryAPI_vector.snapshot`, in the reference's shape
 * (`{"core_memory": {"next_id", "store"}, "archival_memory": {...}}`).
 */
import { PyException, TypeError_ } from '../../py/errors.js';
import { str } from '../../py/format.js';
import { len } from '../../py/ops.js';
import { dictOf, type PyDict, type PyValue } from '../../py/values.js';
import type { Embedder } from '../agentic/embeddings.js';
import type { ApiClass, BfclApi, ScenarioContext } from './api.js';
import { opt, req } from './api.js';

let embedder: Embedder | undefined;

/** Set the embeddings every MemoryAPI_vector instance created afterwards uses. */
export function configureVectorEmbedder(e: Embedder | undefined): void {
  embedder = e;
}

function needEmbedder(): Embedder {
  if (!embedder)
    throw new PyException(
      'RuntimeError',
      'memory_vector needs sentence embeddings: give seal an embeddings server (--embeddings-url)',
    );
  return embedder;
}

/** A store id as Python's dict lookup sees it: ints, integral floats and bools are numbers. */
function idOf(v: PyValue): number | undefined {
  if (typeof v === 'bigint') return Number(v);
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v === 'number' && Number.isInteger(v)) return v;
  return undefined;
}

class VectorStore {
  /** id -> text, in the dict's insertion order */
  readonly store = new Map<number, string>();
  /** ids in index order */
  private order: number[] = [];
  private readonly vectors = new Map<number, Float32Array>();
  nextId = 0;

  constructor(
    private readonly maxSize: number,
    private readonly maxEntryLength: number,
  ) {}

  add(text: PyValue): PyDict {
    if (len(text) > this.maxEntryLength)
      return dictOf({ error: `Entry length exceeds maximum length of ${this.maxEntryLength} characters.` });
    if (this.store.size >= this.maxSize)
      return dictOf({ error: `Memory size exceeds maximum size of ${this.maxSize} entries.` });
    const t = String(text);
    const id = this.nextId++;
    this.vectors.set(id, needEmbedder().embed([t])[0]!);
    this.order.push(id);
    this.store.set(id, t);
    return dictOf({ id: BigInt(id) });
  }

  remove(vecId: PyValue): PyDict {
    const id = idOf(vecId);
    if (id === undefined || !this.store.has(id))
      return dictOf({ error: `ID ${str(vecId)} not present in store.` });
    this.order = this.order.filter((x) => x !== id);
    this.vectors.delete(id);
    this.store.delete(id);
    return dictOf({ status: `ID ${str(vecId)} removed from store.` });
  }

  update(vecId: PyValue, newText: PyValue): PyDict {
    const id = idOf(vecId);
    if (id === undefined || !this.store.has(id))
      return dictOf({ error: `ID ${str(vecId)} not present in store.` });
    if (len(newText) > this.maxEntryLength)
      return dictOf({ error: `Entry length exceeds maximum length of ${this.maxEntryLength} characters.` });
    const t = String(newText);
    this.order = this.order.filter((x) => x !== id);
    this.vectors.set(id, needEmbedder().embed([t])[0]!);
    this.order.push(id);
    this.store.set(id, t);
    return dictOf({ status: `ID ${str(vecId)} updated.` });
  }

  clear(): PyDict {
    this.store.clear();
    this.vectors.clear();
    this.order = [];
    this.nextId = 0;
    return dictOf({ status: 'Memory cleared.' });
  }

  retrieve(query: PyValue, topK: PyValue): PyValue[] {
    if (this.store.size === 0) return [];
    if (typeof query !== 'string') throw TypeError_('the query must be a string');
    const n = this.store.size;
    if (topK === null) throw TypeError_("'<' not supported between instances of 'int' and 'NoneType'");
    const k = typeof topK === 'bigint' ? Number(topK) : typeof topK === 'boolean' ? Number(topK) : Number.NaN;
    if (!Number.isInteger(k)) throw TypeError_('top_k must be an integer');
    const kk = Math.min(k, n);
    if (kk <= 0) throw new PyException('AssertionError', 'k must be positive');
    const q = needEmbedder().embed([query])[0]!;
    const scored = this.order.map((id, pos) => ({ id, pos, score: innerProduct(q, this.vectors.get(id)!) }));
    scored.sort((a, b) => b.score - a.score || a.pos - b.pos);
    return scored
      .slice(0, kk)
      .map((s) => dictOf({ id: BigInt(s.id), similarity_score: s.score, text: this.store.get(s.id)! }));
  }

  retrieveAll(): PyValue[] {
    return [...this.store].map(([id, text]) => dictOf({ id: BigInt(id), text }));
  }

  export(): PyDict {
    const store: PyDict = new Map();
    for (const [id, text] of this.store) store.set(String(id), text);
    return dictOf({ next_id: BigInt(this.nextId), store });
  }

  /** `load_from_snapshot`: ids re-embedded and indexed in ascending order. */
  load(snap: PyValue | undefined): void {
    this.clear();
    if (!(snap instanceof Map)) return;
    const next = snap.get('next_id');
    this.nextId = typeof next === 'bigint' ? Number(next) : Number(next ?? 0);
    const store = snap.get('store');
    if (store instanceof Map) for (const [k, v] of store) this.store.set(Number(k), String(v));
    const ids = [...this.store.keys()].sort((a, b) => a - b);
    if (ids.length === 0) return;
    const vecs = needEmbedder().embed(ids.map((id) => this.store.get(id)!));
    for (const [i, id] of ids.entries()) this.vectors.set(id, vecs[i]!);
    this.order = ids;
  }
}

/** FAISS reports the inner product as a float32. */
function innerProduct(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!;
  return Math.fround(s);
}

export class MemoryVectorInstance implements BfclApi {
  readonly className = 'MemoryAPI_vector' as const;
  readonly core = new VectorStore(7, 300);
  readonly archival = new VectorStore(50, 2000);

  loadScenario(config: PyDict, _ctx: ScenarioContext): void {
    const snap = config.get('snapshot');
    if (snap instanceof Map) {
      this.core.load(snap.get('core_memory'));
      this.archival.load(snap.get('archival_memory'));
    }
  }

  publicState(): ReadonlyMap<string, PyValue> {
    return new Map<string, PyValue>([
      ['core_memory', this.core.export()],
      ['archival_memory', this.archival.export()],
    ]);
  }

  snapshot(): PyDict {
    return dictOf({ core_memory: this.core.export(), archival_memory: this.archival.export() });
  }
}

const k5 = (k: PyValue | undefined): PyValue => (k === undefined ? 5n : k);

export const memoryVector: ApiClass<MemoryVectorInstance> = {
  className: 'MemoryAPI_vector',
  stateless: false,
  create: () => new MemoryVectorInstance(),
  methods: {
    core_memory_add: { params: [req('text')], run: (s, a) => s.core.add(a[0]!) },
    core_memory_remove: { params: [req('vec_id')], run: (s, a) => s.core.remove(a[0]!) },
    core_memory_update: {
      params: [req('vec_id'), req('new_text')],
      run: (s, a) => s.core.update(a[0]!, a[1]!),
    },
    core_memory_clear: { params: [], run: (s) => s.core.clear() },
    core_memory_retrieve: {
      params: [req('query'), opt('top_k')],
      run: (s, a) => dictOf({ result: s.core.retrieve(a[0]!, k5(a[1])) }),
    },
    core_memory_retrieve_all: { params: [], run: (s) => dictOf({ result: s.core.retrieveAll() }) },
    archival_memory_add: { params: [req('text')], run: (s, a) => s.archival.add(a[0]!) },
    archival_memory_remove: { params: [req('vec_id')], run: (s, a) => s.archival.remove(a[0]!) },
    archival_memory_update: {
      params: [req('vec_id'), req('new_text')],
      run: (s, a) => s.archival.update(a[0]!, a[1]!),
    },
    archival_memory_clear: { params: [], run: (s) => s.archival.clear() },
    archival_memory_retrieve: {
      params: [req('query'), opt('top_k')],
      run: (s, a) => dictOf({ result: s.archival.retrieve(a[0]!, k5(a[1])) }),
    },
    archival_memory_retrieve_all: { params: [], run: (s) => dictOf({ result: s.archival.retrieveAll() }) },
  },
};
