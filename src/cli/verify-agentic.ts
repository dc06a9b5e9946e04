/**
 * `seal verify` on result files of BFCL v4's agentic categories (memory_kv, memory_vector,
 * memory_rec_sum, web_search_base, web_search_no_snippet): the reference's agentic checker on the
 * last response that is not a tool call, summarised in Table 2's layout.
 */

import { agenticSummaryTable, summariseAgentic } from '../bfcl/agentic-summary.js';
import { checkAgenticResult } from '../envs/bfcl/agentic/checker.js';
import { type AgenticCategory, loadAgenticAnswers, parseAgenticId } from '../envs/bfcl/agentic/data.js';
import { UsageError } from '../util/errors.js';
import { writeJsonLines } from '../util/files.js';
import { commaList } from './flags.js';
import { checkOutPath } from './verify-out.js';

/** The flags of `seal verify` that agentic scoring reads. */
export interface AgenticVerifyOptions {
  readonly suite?: string;
  readonly results?: string;
  readonly split?: string;
  readonly json?: boolean;
  readonly out?: string;
  readonly diagnose?: boolean;
}

export interface AgenticVerdict {
  readonly id: string;
  readonly category: AgenticCategory;
  readonly valid: boolean;
  readonly error_type?: string;
  readonly error_message?: string;
  /** the response that was checked: the last step that is not a tool call */
  readonly last_message?: unknown;
  readonly standardized_response?: string;
  readonly possible_answers?: readonly string[];
}

/** Whether a result file holds agentic entries (then all of its scored lines must be). */
export function hasAgenticIds(results: ReadonlyMap<string, unknown>): boolean {
  for (const id of results.keys()) if (parseAgenticId(id)) return true;
  return false;
}

export function runVerifyAgentic(
  dataDir: string,
  results: ReadonlyMap<string, unknown>,
  opts: AgenticVerifyOptions,
  print: (s: string) => void,
): AgenticVerdict[] {
  const file = opts.results ?? 'the result file';
  if (opts.suite && opts.suite !== 'bfcl')
    throw new UsageError(`${file} holds BFCL v4 agentic entries; score it with --suite bfcl.`);
  if (opts.diagnose)
    throw new UsageError(
      '--diagnose labels multi-turn turns; agentic entries (memory, web search) have one answer each. Drop --diagnose.',
    );
  if (opts.out) checkOutPath(opts.out, opts.results ? [opts.results] : []);
  const other = [...results.keys()].filter((id) => !parseAgenticId(id));
  if (other.length > 0)
    throw new UsageError(
      `${file} mixes agentic entries with ${other.length} other id(s), e.g. ${other[0]}; score each category's result file on its own.`,
    );
  let entries = [...results].map(([id, result]) => ({ id, result, parsed: parseAgenticId(id)! }));
  const prereq = entries.filter((e) => e.parsed.prereq).length;
  entries = entries.filter((e) => !e.parsed.prereq);
  if (opts.split && opts.split !== 'all') {
    if (opts.split === 'train' || opts.split === 'test' || opts.split === 'dev')
      throw new UsageError(
        `--split ${opts.split}: the agentic categories have no SEAL split. Use all or a comma-separated id list.`,
      );
    const keep = new Set(commaList(opts.split));
    entries = entries.filter((e) => keep.has(e.id));
  }
  if (entries.length === 0)
    throw new UsageError(
      opts.split
        ? `--split ${opts.split} selects none of the questions in ${file}; nothing to score.`
        : `${file} holds only memory prerequisite conversations, which the reference does not score; give the questions' result file.`,
    );
  const answers = loadAgenticAnswers(dataDir, {
    memory: entries.some((e) => e.parsed.category.startsWith('memory_')),
    web: entries.some((e) => e.parsed.category.startsWith('web_search_')),
  });
  const unknown = entries.filter((e) => !answers.has(e.parsed.baseId));
  if (unknown.length > 0)
    throw new UsageError(
      `${file}: ${unknown.length} id(s) are not BFCL v4 agentic questions, e.g. ${unknown[0]!.id}.`,
    );
  const verdicts = entries.map(({ id, result, parsed }): AgenticVerdict => {
    const possible = answers.get(parsed.baseId)!;
    const r = checkAgenticResult(result, possible);
    if (r.valid) return { id, category: parsed.category, valid: true };
    return {
      id,
      category: parsed.category,
      valid: false,
      ...(r.errorType ? { error_type: r.errorType } : {}),
      ...(r.errorMessage ? { error_message: r.errorMessage } : {}),
      ...(r.lastMessage !== undefined ? { last_message: r.lastMessage } : {}),
      ...(r.standardizedResponse !== undefined ? { standardized_response: r.standardizedResponse } : {}),
      possible_answers: possible,
    };
  });
  const summary = summariseAgentic(verdicts);
  if (opts.out) writeJsonLines(opts.out, verdicts);
  if (opts.json) print(JSON.stringify(summary));
  else {
    print(agenticSummaryTable(summary));
    if (prereq > 0)
      print(
        `\n${prereq} memory prerequisite conversation(s) not scored (the reference scores only the questions).`,
      );
    if (opts.out) print(`\nper-task verdicts: ${opts.out}`);
  }
  return verdicts;
}
