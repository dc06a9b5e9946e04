/**
 * MemoryAPI_rec_sum (`memory_rec_sum.py` in BFCL v4): one text of at most 10,000 characters that
 * the model appends to, rewrites or edits (recursive summarisation). The memory a task starts from
 * is its scenario's snapshot, `initial_config.MemoryAPI_rec_sum.snapshot` = `{"memory": "..."}`.
 */
import { str } from '../../py/format.js';
import { len } from '../../py/ops.js';
import { dictOf, type PyDict, type PyValue } from '../../py/values.js';
import type { ApiClass, BfclApi, ScenarioContext } from './api.js';
import { req } from './api.js';

const MAX_MEMORY_ENTRY_LENGTH = 10000;

const status = (s: string) => dictOf({ status: s });
const error = (s: string) => dictOf({ error: s });

export class MemoryRecSumInstance implements BfclApi {
  readonly className = 'MemoryAPI_rec_sum' as const;
  memory = '';

  loadScenario(config: PyDict, _ctx: ScenarioContext): void {
    const snap = config.get('snapshot');
    if (snap instanceof Map && typeof snap.get('memory') === 'string')
      this.memory = snap.get('memory') as string;
  }

  publicState(): ReadonlyMap<string, PyValue> {
    return new Map<string, PyValue>([['memory', this.memory]]);
  }

  snapshot(): PyDict {
    return dictOf({ memory: this.memory });
  }
}

export const memoryRecSum: ApiClass<MemoryRecSumInstance> = {
  className: 'MemoryAPI_rec_sum',
  stateless: false,
  create: () => new MemoryRecSumInstance(),
  methods: {
    memory_append: {
      params: [req('text')],
      run: (s, a) => {
        const text = str(a[0]!);
        if (len(s.memory + text) > MAX_MEMORY_ENTRY_LENGTH)
          return error(
            `Entry will be too long after appending. Please shorten the entry to less than ${MAX_MEMORY_ENTRY_LENGTH} characters.`,
          );
        s.memory += text;
        return status('Memory appended.');
      },
    },
    memory_update: {
      params: [req('text')],
      run: (s, a) => {
        const text = str(a[0]!);
        if (len(text) > MAX_MEMORY_ENTRY_LENGTH)
          return error(
            `Entry will be too long after updating. Please shorten the entry to less than ${MAX_MEMORY_ENTRY_LENGTH} characters.`,
          );
        s.memory = text;
        return status('Memory updated.');
      },
    },
    memory_clear: {
      params: [],
      run: (s) => {
        s.memory = '';
        return status('Short term memory cleared.');
      },
    },
    memory_replace: {
      params: [req('old_text'), req('new_text')],
      run: (s, a) => {
        const oldText = str(a[0]!);
        const newText = str(a[1]!);
        if (!s.memory.includes(oldText)) return error(`Text '${oldText}' not found in memory.`);
        if (len(newText) > MAX_MEMORY_ENTRY_LENGTH)
          return error(
            `Entry will be too long after replacing. Please shorten the entry to less than ${MAX_MEMORY_ENTRY_LENGTH} characters.`,
          );
        s.memory = pyReplaceAll(s.memory, oldText, newText);
        return status('Memory updated.');
      },
    },
    memory_retrieve: {
      params: [],
      run: (s) => (s.memory ? dictOf({ memory_content: s.memory }) : error('Memory is empty.')),
    },
  },
};

/** Python's `str.replace(old, new)`: an empty `old` inserts `new` between every character. */
function pyReplaceAll(s: string, oldText: string, newText: string): string {
  if (oldText === '') return [...s].reduce((acc, ch) => acc + ch + newText, newText);
  return s.split(oldText).join(newText);
}
