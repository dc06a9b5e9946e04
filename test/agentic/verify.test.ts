/**
 * `seal verify` on result files of BFCL v4's agentic categories, as a user runs it: a real process
 * on real files. Each entry's expected verdict was computed by the reference's `agentic_runner`
 * rules (the last step that is not a tool call, FC-style decoding, `agentic_checker`) in Python on
 * the reference data, so the answers with non-ASCII letters and punctuation are the real ones.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { AGENTIC_DATA, HAS_AGENTIC_DATA, reportMissingAgenticData } from '../support/agentic-data.js';
import { buildDist, seal } from '../support/cli.js';

reportMissingAgenticData('test/agentic/verify.test.ts');

/** id, result, and the reference's verdict (true, or its error_type) */
const ENTRIES: readonly { id: string; result: unknown; expected: true | string }[] = [
  {
    id: 'web_search_base_69',
    result: [
      [
        [
          {
            search_engine_query: '{"keywords": "who"}',
          },
        ],
        [
          {
            fetch_url_content: '{"url": "https://example.org", "mode": "truncate"}',
          },
        ],
        "{'answer': 'Predrag Puharić', 'context': 'from the page'}",
      ],
    ],
    expected: true,
  },
  {
    id: 'web_search_base_72',
    result: [
      [
        [
          {
            search_engine_query: '{"keywords": "who"}',
          },
        ],
        "{'answer': 'Ashiya, Hyōgo Prefecture'}",
      ],
    ],
    expected: true,
  },
  {
    id: 'web_search_base_95',
    result: [
      [
        [
          {
            search_engine_query: '{"keywords": "who"}',
          },
        ],
        "{'answer': 'ElkeBüdenbender'}",
      ],
    ],
    expected: 'agentic:answer_not_found',
  },
  {
    id: 'web_search_base_51',
    result: [
      [
        [
          {
            search_engine_query: '{"keywords": "who"}',
          },
        ],
        'Roughly $222 million.',
      ],
    ],
    expected: true,
  },
  {
    id: 'web_search_base_23',
    result: [
      [
        "{'answer': 'the ČSSR'}",
        [
          {
            search_engine_query: '{"keywords": "who"}',
          },
        ],
      ],
    ],
    expected: true,
  },
  {
    id: 'web_search_base_26',
    result: [
      [
        [
          {
            search_engine_query: '{"keywords": "who"}',
          },
        ],
        "{'answer': 'Finneas O’Connell'}",
      ],
    ],
    expected: true,
  },
  {
    id: 'web_search_base_0',
    result: 'Error during inference: rate limited',
    expected: 'agentic:inference_error',
  },
  {
    id: 'web_search_base_1',
    result: [
      [
        [
          {
            search_engine_query: '{"keywords": "who"}',
          },
        ],
        '',
      ],
    ],
    expected: 'agentic:no_last_message',
  },
  {
    id: 'web_search_base_2',
    result: [["{'answer': 'Yoon Dong-Sup'}"], []],
    expected: 'agentic:inference_error',
  },
  {
    id: 'web_search_base_9',
    result: [['Srikant M. Datar is the dean']],
    expected: true,
  },
  {
    id: 'web_search_no_snippet_69',
    result: [
      [
        [
          {
            search_engine_query: '{"keywords": "who"}',
          },
        ],
        [
          {
            fetch_url_content: '{"url": "https://example.org", "mode": "truncate"}',
          },
        ],
        "{'answer': 'Predrag Puharić', 'context': 'from the page'}",
      ],
    ],
    expected: true,
  },
  {
    id: 'web_search_no_snippet_72',
    result: [
      [
        [
          {
            search_engine_query: '{"keywords": "who"}',
          },
        ],
        "{'answer': 'Ashiya, Hyōgo Prefecture'}",
      ],
    ],
    expected: true,
  },
  {
    id: 'web_search_no_snippet_95',
    result: [
      [
        [
          {
            search_engine_query: '{"keywords": "who"}',
          },
        ],
        "{'answer': 'ElkeBüdenbender'}",
      ],
    ],
    expected: 'agentic:answer_not_found',
  },
  {
    id: 'web_search_no_snippet_51',
    result: [
      [
        [
          {
            search_engine_query: '{"keywords": "who"}',
          },
        ],
        'Roughly $222 million.',
      ],
    ],
    expected: true,
  },
  {
    id: 'web_search_no_snippet_23',
    result: [
      [
        "{'answer': 'the ČSSR'}",
        [
          {
            search_engine_query: '{"keywords": "who"}',
          },
        ],
      ],
    ],
    expected: true,
  },
  {
    id: 'web_search_no_snippet_26',
    result: [
      [
        [
          {
            search_engine_query: '{"keywords": "who"}',
          },
        ],
        "{'answer': 'Finneas O’Connell'}",
      ],
    ],
    expected: true,
  },
  {
    id: 'web_search_no_snippet_0',
    result: 'Error during inference: rate limited',
    expected: 'agentic:inference_error',
  },
  {
    id: 'web_search_no_snippet_1',
    result: [
      [
        [
          {
            search_engine_query: '{"keywords": "who"}',
          },
        ],
        '',
      ],
    ],
    expected: 'agentic:no_last_message',
  },
  {
    id: 'web_search_no_snippet_2',
    result: [["{'answer': 'Yoon Dong-Sup'}"], []],
    expected: 'agentic:inference_error',
  },
  {
    id: 'web_search_no_snippet_9',
    result: [['Srikant M. Datar is the dean']],
    expected: true,
  },
  {
    id: 'memory_kv_0-customer-0',
    result: [
      [
        [
          {
            core_memory_retrieve_all: '{}',
          },
        ],
        "{'answer': 'Michael', 'context': 'core memory'}",
      ],
    ],
    expected: true,
  },
  {
    id: 'memory_kv_1-customer-1',
    result: [["{'answer': 'thirty-five'}"]],
    expected: 'agentic:answer_not_found',
  },
  {
    id: 'memory_kv_20-customer-20',
    result: [["{'answer': 'five hundred and thirteen'}"]],
    expected: true,
  },
  {
    id: 'memory_kv_83-student-3',
    result: [['I think it is machine_learning']],
    expected: 'agentic:answer_not_found',
  },
  {
    id: 'memory_vector_0-customer-0',
    result: [
      [
        [
          {
            core_memory_retrieve_all: '{}',
          },
        ],
        "{'answer': 'Michael', 'context': 'core memory'}",
      ],
    ],
    expected: true,
  },
  {
    id: 'memory_vector_1-customer-1',
    result: [["{'answer': 'thirty-five'}"]],
    expected: 'agentic:answer_not_found',
  },
  {
    id: 'memory_vector_20-customer-20',
    result: [["{'answer': 'five hundred and thirteen'}"]],
    expected: true,
  },
  {
    id: 'memory_vector_83-student-3',
    result: [['I think it is machine_learning']],
    expected: 'agentic:answer_not_found',
  },
  {
    id: 'memory_rec_sum_0-customer-0',
    result: [
      [
        [
          {
            core_memory_retrieve_all: '{}',
          },
        ],
        "{'answer': 'Michael', 'context': 'core memory'}",
      ],
    ],
    expected: true,
  },
  {
    id: 'memory_rec_sum_1-customer-1',
    result: [["{'answer': 'thirty-five'}"]],
    expected: 'agentic:answer_not_found',
  },
  {
    id: 'memory_rec_sum_20-customer-20',
    result: [["{'answer': 'five hundred and thirteen'}"]],
    expected: true,
  },
  {
    id: 'memory_rec_sum_83-student-3',
    result: [['I think it is machine_learning']],
    expected: 'agentic:answer_not_found',
  },
];

const dir = mkdtempSync(join(tmpdir(), 'seal-agentic-verify-'));
const write = (name: string, rows: readonly object[]) => {
  const path = join(dir, name);
  writeFileSync(path, rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
  return path;
};

describe.skipIf(!HAS_AGENTIC_DATA)('seal verify on agentic result files', () => {
  beforeAll(buildDist, 120_000);

  for (const category of [
    'web_search_base',
    'web_search_no_snippet',
    'memory_kv',
    'memory_vector',
    'memory_rec_sum',
  ]) {
    it(`gives the reference's verdict on every ${category} entry`, async () => {
      const rows = ENTRIES.filter((e) => e.id.startsWith(`${category}_`));
      const results = write(`${category}.jsonl`, [
        ...(category.startsWith('memory') ? [{ id: `${category}_prereq_22-student-0`, result: [[]] }] : []),
        ...rows.map(({ id, result }) => ({ id, result })),
      ]);
      const out = join(dir, `${category}.verdicts.jsonl`);
      const r = await seal(['verify', '--results', results, '--data-dir', AGENTIC_DATA, '--out', out]);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      const verdicts = readFileSync(out, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      expect(verdicts.map((v) => [v.id, v.valid ? true : v.error_type])).toEqual(
        rows.map((e) => [e.id, e.expected]),
      );
      if (category.startsWith('memory'))
        expect(r.stdout).toContain('1 memory prerequisite conversation(s) not scored');
    });
  }

  it('prints the summary in Table 2 layout, and as JSON', async () => {
    const results = write(
      'all.jsonl',
      ENTRIES.map(({ id, result }) => ({ id, result })),
    );
    const r = await seal(['verify', '--results', results, '--data-dir', AGENTIC_DATA, '--json']);
    expect(r.code).toBe(0);
    const s = JSON.parse(r.stdout);
    const acc = (c: string) => {
      const rows = ENTRIES.filter((e) => e.id.startsWith(`${c}_`));
      return rows.filter((e) => e.expected === true).length / rows.length;
    };
    const web = (acc('web_search_base') + acc('web_search_no_snippet')) / 2;
    const memory = (acc('memory_kv') + acc('memory_vector') + acc('memory_rec_sum')) / 3;
    expect(s.categories.web_search_base).toEqual({
      n: 10,
      accuracy: Math.round(acc('web_search_base') * 10000) / 100,
    });
    expect(s.web_search).toBe(Math.round(web * 10000) / 100);
    expect(s.memory).toBe(Math.round(memory * 10000) / 100);
    expect(s.average).toBe(Math.round(((web + memory) / 2) * 10000) / 100);
    const t = await seal(['verify', '--results', results, '--data-dir', AGENTIC_DATA]);
    expect(t.stdout.split('\n')[0]).toMatch(
      /\|\s+\| Average \| Web Search \|\s+Base \| No Snippet \| Memory \|/,
    );
  });

  it('refuses what would not mean the official score, saying what to do', async () => {
    const mixed = write('mixed.jsonl', [
      { id: 'web_search_base_0', result: [['x']] },
      { id: 'multi_turn_base_0', result: [[]] },
    ]);
    let r = await seal(['verify', '--results', mixed, '--data-dir', AGENTIC_DATA]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('score each category');
    const unknown = write('unknown.jsonl', [{ id: 'web_search_base_999', result: [['x']] }]);
    r = await seal(['verify', '--results', unknown, '--data-dir', AGENTIC_DATA]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('not BFCL v4 agentic questions, e.g. web_search_base_999');
    const ok = write('ok.jsonl', [{ id: 'memory_kv_0-customer-0', result: [['Michael']] }]);
    r = await seal(['verify', '--results', ok, '--data-dir', AGENTIC_DATA, '--diagnose']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('Drop --diagnose');
    r = await seal(['verify', '--results', ok, '--data-dir', dir]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('seal data pull bfcl');
  });
});
