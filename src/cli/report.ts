/** `seal report DIR [DIR...]`: flag parsing and the one-line summary; the work is in report/. */
import type { Command } from 'commander';
import { z } from 'zod';
import { DEFAULT_REPORT_OPTIONS } from '../report/data.js';
import { defaultReportPath, writeReport } from '../report/report.js';
import { Settings } from '../util/settings.js';
import { addSettingOptions } from './flags.js';

/** The flags of `seal report`, declared once (util/settings.ts). */
export const REPORT_SCHEMA = z
  .object({
    out: z.string().min(1).optional().meta({
      description: 'where to write (default: DIR/report.html for one run, ./report.html for several)',
      placeholder: 'file',
    }),
    rollouts: z
      .number()
      .int()
      .min(1)
      .default(DEFAULT_REPORT_OPTIONS.rolloutsPerRound)
      .describe('rollouts per round in the trajectory browser (fewer when a run has many rounds)'),
    episodes: z
      .number()
      .int()
      .min(1)
      .default(DEFAULT_REPORT_OPTIONS.episodesPerGroup)
      .describe("an evaluation's episodes per group (category, domain) in its browser"),
    maxChars: z
      .number()
      .int()
      .min(1)
      .default(DEFAULT_REPORT_OPTIONS.maxTextChars)
      .describe('model text and tool output per step cut after this many characters'),
  })
  .strict();
export const REPORT_SETTINGS = new Settings(REPORT_SCHEMA, 'flag');

export function registerReport(program: Command): void {
  const cmd = program
    .command('report')
    .description(
      'Write one self-contained HTML report for seal train runs (charts, interface timeline, trajectory browser) and seal eval folders (scores, episode browser)',
    )
    .argument('<dirs...>', 'run folders written by seal train, evaluation folders written by seal eval');
  addSettingOptions(cmd, REPORT_SETTINGS);
  cmd.action((dirs: string[], opts: Record<string, unknown>) => {
    const config = REPORT_SETTINGS.ofFlags(opts);
    const options = {
      ...DEFAULT_REPORT_OPTIONS,
      rolloutsPerRound: config.rollouts,
      maxTextChars: config.maxChars,
      episodesPerGroup: config.episodes,
    };
    const r = writeReport(dirs, config.out ?? defaultReportPath(dirs), options);
    const rounds = [
      ...r.runs.map((run) => `${run.rounds.length} round(s)`),
      ...r.evaluations.map((e) => `${e.episodes.length} episode(s)`),
    ]
      .map((what, i) => `${r.names[i]}: ${what}`)
      .join(', ');
    console.log(`${r.path}: ${(r.bytes / 1024).toFixed(0)} KiB (${rounds})`);
  });
}
