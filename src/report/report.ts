/** `seal report`: load the train runs and evaluation folders, build the page, write one HTML file (atomically). */
import { join } from 'node:path';
import { RUN_FILES } from '../train/record.js';
import { writeAtomic } from '../util/files.js';
import { buildPage, DEFAULT_REPORT_OPTIONS, type ReportOptions } from './data.js';
import { withEvaluations } from './evaluation.js';
import { renderReport } from './html.js';
import { type LoadedRun, loadFolder } from './load.js';
import type { LoadedEvaluation } from './load-eval.js';

export interface ReportResult {
  readonly path: string;
  readonly bytes: number;
  readonly runs: readonly LoadedRun[];
  readonly evaluations: readonly LoadedEvaluation[];
  /** what the page calls each run and evaluation, in order (names shared by two folders told apart) */
  readonly names: readonly string[];
}

/** One run: its own folder's report.html; several: report.html in the working directory. */
export function defaultReportPath(dirs: readonly string[]): string {
  return dirs.length === 1 ? join(dirs[0]!, RUN_FILES.report) : RUN_FILES.report;
}

export function writeReport(
  dirs: readonly string[],
  out: string = defaultReportPath(dirs),
  options: ReportOptions = DEFAULT_REPORT_OPTIONS,
): ReportResult {
  // every folder is checked before anything is written, so a typo in the third costs nothing
  const folders = dirs.map(loadFolder);
  const runs = folders.flatMap((f) => (f.kind === 'train' ? [f.run] : []));
  const evaluations = folders.flatMap((f) => (f.kind === 'eval' ? [f.evaluation] : []));
  const page = withEvaluations(buildPage(runs, options), evaluations, options);
  const text = renderReport(page);
  writeAtomic(out, text);
  const names = [...page.runs, ...page.evaluations].map((p) => p.name);
  return { path: out, bytes: Buffer.byteLength(text), runs, evaluations, names };
}
