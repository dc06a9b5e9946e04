/** `seal report DIR [DIR...]`: flag parsing and the one-line summary; the work is in report/. */
import type { Command } from 'commander';
import { DEFAULT_REPORT_OPTIONS } from '../report/data.js';
import { defaultReportPath, writeReport } from '../report/report.js';
import { parseNumberFlag } from './flags.js';

interface ReportFlags {
  readonly out?: string;
  readonly rollouts: string;
  readonly maxChars: string;
}

export function registerReport(program: Command): void {
  program
    .command('report')
    .description(
      'Write one self-contained HTML report (charts, interface timeline, trajectory browser) for one or several seal train runs',
    )
    .argument('<dirs...>', 'run folders written by seal train')
    .option(
      '--out <file>',
      'where to write (default: DIR/report.html for one run, ./report.html for several)',
    )
    .option(
      '--rollouts <n>',
      'rollouts per round in the trajectory browser (fewer when a run has many rounds)',
      String(DEFAULT_REPORT_OPTIONS.rolloutsPerRound),
    )
    .option(
      '--max-chars <n>',
      'model text and tool output per step cut after this many characters',
      String(DEFAULT_REPORT_OPTIONS.maxTextChars),
    )
    .action((dirs: string[], flags: ReportFlags) => {
      const options = {
        ...DEFAULT_REPORT_OPTIONS,
        rolloutsPerRound: parseNumberFlag('--rollouts', flags.rollouts, { int: true, min: 1 }),
        maxTextChars: parseNumberFlag('--max-chars', flags.maxChars, { int: true, min: 1 }),
      };
      const r = writeReport(dirs, flags.out ?? defaultReportPath(dirs), options);
      const rounds = r.runs.map((run) => `${run.name}: ${run.rounds.length} round(s)`).join(', ');
      console.log(`${r.path}: ${(r.bytes / 1024).toFixed(0)} KiB (${rounds})`);
    });
}
