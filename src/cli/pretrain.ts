/** `seal pretrain`: flags (derived from the settings schema) and progress output; the work is in learner/embedded/pretrain.ts. */
import type { Command } from 'commander';
import { pretrain } from '../learner/embedded/pretrain.js';
import { optionsOfFlags, PRETRAIN_DEFAULTS, PRETRAIN_SETTINGS } from '../learner/embedded/pretrain-config.js';
import { addSettingOptions } from './flags.js';

/** `seal pretrain` */
export function registerPretrain(program: Command): void {
  const cmd = program
    .command('pretrain')
    .description(
      "Build the embedded policy's base checkpoint: supervised training on generated mini-suite demonstrations (resumable)",
    )
    .requiredOption('--out <dir>', 'checkpoint directory; rerunning into it resumes')
    .option(
      '--config <file>',
      'YAML file of settings keys (seed, tasks, init, ...; the stages of the base are under configs/pretrain/); flags override it',
    );
  addSettingOptions(cmd, PRETRAIN_SETTINGS);
  cmd
    .option('--quiet', 'no progress lines (training.log.jsonl has every step)')
    .action((opts: Record<string, unknown>) => runPretrainCommand(opts, (s) => console.log(s)));
}

export async function runPretrainCommand(
  opts: Readonly<Record<string, unknown>>,
  print: (s: string) => void,
): Promise<void> {
  const out = String(opts.out);
  const file = opts.config === undefined ? {} : PRETRAIN_SETTINGS.readFile(String(opts.config));
  const given = optionsOfFlags({ ...file, ...PRETRAIN_SETTINGS.fromFlags(opts) });
  let last = 0;
  const r = await pretrain({
    ...given,
    outDir: out,
    workers: given.workers ?? PRETRAIN_DEFAULTS.workers,
    kernels: given.kernels ?? PRETRAIN_DEFAULTS.kernels,
    log: (line) => {
      // every step is in training.log.jsonl; the terminal gets a line every few seconds, and every
      // checkpoint's held-out score
      const now = Date.now();
      if (opts.quiet) return;
      if (!line.startsWith('step ') || line.includes('held-out') || now - last > 5000) {
        last = now;
        print(line);
      }
    },
  });
  const tail = r.history.slice(-20);
  const loss = tail.length ? tail.reduce((a, h) => a + h.loss, 0) / tail.length : Number.NaN;
  print(
    `${out}: ${r.config.stepsDone} steps (${r.history.length} this run, resumed from ${r.resumedFrom}); ` +
      `mean loss of the last ${tail.length} steps ${loss.toFixed(4)}; model sha256 ${r.config.modelSha256}`,
  );
}
