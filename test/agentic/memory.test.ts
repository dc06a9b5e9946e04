/**
 * The memory backends as the executor runs them (call strings, result strings). The BM25+ rankings
 * were computed by rank_bm25's BM25Plus rules (k1 1.5, b 0.75, delta 1, the library's operation
 * order) in Python, with the reference's tokenisation and its stable sort: ties keep key order.
 */
import { describe, expect, it } from 'vitest';
import type { ClassName } from '../../src/envs/bfcl/apis/api.js';
import { TaskEnvironment } from '../../src/envs/bfcl/executor.js';
import { parsePyJson } from '../../src/envs/py/json.js';
import type { PyDict } from '../../src/envs/py/values.js';

const env = (cls: ClassName, snapshot?: unknown) =>
  new TaskEnvironment({
    taskId: 'memory_kv_0-customer-0',
    involvedClasses: [cls],
    initialConfig: parsePyJson(JSON.stringify(snapshot ? { [cls]: { snapshot } } : {})) as PyDict,
    longContext: false,
  });

const KEYS = [
  'user_name',
  'user_age',
  'favorite_coffee_order',
  'home_city',
  'kitchen_counter_size',
  'order_delivery_days',
  'favorite_color',
];

/** [query, k, the reference's result string] */
const RANKINGS: readonly [string, number, string][] = [
  [
    'user name',
    5,
    '{"ranked_results": [[7.23043304961093, "user_name"], [4.971614761524208, "user_age"], [3.465735902799726, "favorite_coffee_order"], [3.465735902799726, "home_city"], [3.465735902799726, "kitchen_counter_size"]]}',
  ],
  [
    'favorite',
    5,
    '{"ranked_results": [[2.892173219844372, "favorite_color"], [2.6398584110687278, "favorite_coffee_order"], [1.3862943611198906, "user_name"], [1.3862943611198906, "user_age"], [1.3862943611198906, "home_city"]]}',
  ],
  [
    'coffee order favorite',
    3,
    '{"ranked_results": [[9.239504438740546, "favorite_coffee_order"], [6.357909122644099, "favorite_color"], [6.105594313868455, "order_delivery_days"]]}',
  ],
  [
    'unknown words',
    5,
    '{"ranked_results": [[0.0, "user_name"], [0.0, "user_age"], [0.0, "favorite_coffee_order"], [0.0, "home_city"], [0.0, "kitchen_counter_size"]]}',
  ],
  [
    'Home_City city',
    2,
    '{"ranked_results": [[13.014779489299675, "home_city"], [6.238324625039507, "user_name"]]}',
  ],
  [
    'order order',
    7,
    '{"ranked_results": [[5.2797168221374555, "favorite_coffee_order"], [5.2797168221374555, "order_delivery_days"], [2.772588722239781, "user_name"], [2.772588722239781, "user_age"], [2.772588722239781, "home_city"], [2.772588722239781, "kitchen_counter_size"], [2.772588722239781, "favorite_color"]]}',
  ],
  [
    'favorite_color',
    -2,
    '{"ranked_results": [[7.23043304961093, "favorite_color"], [4.719299952748564, "favorite_coffee_order"], [3.465735902799726, "user_name"], [3.465735902799726, "user_age"], [3.465735902799726, "home_city"]]}',
  ],
];

describe('MemoryAPI_kv', () => {
  it.each(RANKINGS)('ranks keys for %j (k=%d) as BM25Plus does', (query, k, want) => {
    const e = env('MemoryAPI_kv');
    for (const key of KEYS)
      expect(e.execute(`core_memory_add(key='${key}', value='v')`)).toBe(
        '{"status": "Key-value pair added."}',
      );
    expect(e.execute(`core_memory_key_search(query=${JSON.stringify(query)}, k=${k})`)).toBe(want);
  });

  it('keeps the limits, key format and messages of the reference', () => {
    const e = env('MemoryAPI_kv');
    expect(e.execute("core_memory_key_search(query='x')")).toBe('Error during execution: division by zero');
    expect(e.execute("core_memory_add(key='Bad Key', value='v')")).toBe(
      '{"error": "Key must be in snake_case format and cannot contain spaces."}',
    );
    // Python's `$` also matches before a final newline
    expect(e.execute("core_memory_add(key='ok_key\\n', value='v')")).toBe(
      '{"status": "Key-value pair added."}',
    );
    expect(e.execute(`core_memory_add(key='long', value='${'x'.repeat(301)}')`)).toBe(
      '{"error": "Entry is too long. Please shorten the entry to less than 300 characters."}',
    );
    for (let i = 0; i < 6; i++) e.execute(`core_memory_add(key='k_${i}', value=${i})`);
    expect(e.execute("core_memory_add(key='eighth', value='v')")).toBe(
      '{"error": "Core memory is full. Please clear some entries."}',
    );
    expect(e.execute("core_memory_retrieve(key='k_3')")).toBe('{"value": "3"}');
    expect(e.execute("archival_memory_add(key='home_city', value='Seattle, WA — café')")).toBe(
      '{"status": "Key added."}',
    );
    expect(e.execute("archival_memory_retrieve(key='home_city')")).toBe(
      '{"value": "Seattle, WA \\u2014 caf\\u00e9"}',
    );
    expect(e.execute("archival_memory_add(key='home_city', value='x')")).toBe(
      '{"error": "Key name must be unique."}',
    );
  });

  it('starts from its scenario snapshot', () => {
    const e = env('MemoryAPI_kv', { core_memory: { user_name: 'Michael' }, archival_memory: {} });
    expect(e.execute('core_memory_retrieve_all()')).toBe('{"user_name": "Michael"}');
  });
});

describe('MemoryAPI_rec_sum', () => {
  it('appends, replaces and retrieves one text', () => {
    const e = env('MemoryAPI_rec_sum', { memory: 'Name: Michael. ' });
    expect(e.execute("memory_append(text='Age: 35.')")).toBe('{"status": "Memory appended."}');
    expect(e.execute("memory_replace(old_text='35', new_text='36')")).toBe('{"status": "Memory updated."}');
    expect(e.execute('memory_retrieve()')).toBe('{"memory_content": "Name: Michael. Age: 36."}');
    expect(e.execute("memory_replace(old_text='zzz', new_text='y')")).toBe(
      '{"error": "Text \'zzz\' not found in memory."}',
    );
    expect(e.execute('memory_clear()')).toBe('{"status": "Short term memory cleared."}');
    expect(e.execute('memory_retrieve()')).toBe('{"error": "Memory is empty."}');
    expect(e.execute(`memory_update(text='${'x'.repeat(10001)}')`)).toContain('less than 10000 characters');
  });
});
