import type { Command } from 'commander';
import { abstentionText } from '../bfcl/abstention.js';
import { type EvalRunConfig, runEval } from '../bfcl/eval.js';
import type { BfclData } from '../envs/bfcl/data/tasks.js';
import { loadSuite } from '../envs/suites.js';
import { EVAL_SETTINGS, type EvalConfig } from '../eval/config.js';
import { parseCategories, refuseAgenticFlags, runAgenticEvalCommand } from './eval-agentic.js';
import { chooseEvalPolicy, policyRecord } from './eval-policy.js';
import { addSettingOptions } from './flags.js';
import { progressBar } from './progress.js';
import { splitIds } from './verify.js';

/** `seal eval` */
export function registerEval(program: Command): void {
  const cmd = program
    .command('eval')
    .description(
      'Evaluate a policy (a model served by an OpenAI-compatible server, or the embedded one) under the strict protocol',
    );
  addSettingOptions(cmd, EVAL_SETTINGS);
  cmd.action(async (opts: Record<string, unknown>) => {
    const config = EVAL_SETTINGS.ofFlags(opts);
    const print = (s: string) => console.log(s);
    const suite = config.suite;
    if (suite === 'tau2') {
      refuseAgenticFlags(config, 'tau2');
      const { runTau2EvalCommand } = await import('./eval-tau2.js');
      await runTau2EvalCommand(config, print);
      return;
    }
    const choice = config.categories ? parseCategories(config.categories) : undefined;
    if (choice?.kind === 'agentic') {
      await runAgenticEvalCommand(config, choice.categories, print);
      return;
    }
    refuseAgenticFlags(config, 'the multi-turn categories');
    await runEvalCommand(loadSuite(suite, config.dataDir), { ...config, suite }, print);
  });
}

export async function runEvalCommand(
  data: BfclData,
  flags: EvalConfig & { suite: BfclData['suite'] },
  print: (s: string) => void,
): Promise<void> {
  const concurrency = flags.concurrency;
  const chosen = await chooseEvalPolicy(flags, concurrency);
  try {
    const ids = splitIds(data, flags.split);
    const categories = flags.categories ? parseCategories(flags.categories).categories : undefined;
    const tasks = data.tasks.filter(
      (t) => ids.has(t.id) && (!categories || (categories as readonly string[]).includes(t.category)),
    );
    const config: EvalRunConfig = { suite: flags.suite, ...policyRecord(flags, chosen), split: flags.split };
    const outcome = await runEval(data, tasks, chosen.policy, config, flags.out, {
      concurrency,
      progress: progressBar('eval'),
      ...(flags.force ? { force: true } : {}),
    });
    print(outcome.table);
    const held = Object.entries(outcome.abstention).map(
      ([category, count]) => `${category} ${abstentionText(count)}`,
    );
    if (held.length > 0) print(`\nturns with nothing to call answered without a call: ${held.join(', ')}`);
    print(`\n${outcome.ran} task(s) run, ${outcome.resumed} kept from before; results in ${flags.out}`);
  } finally {
    if ('close' in chosen) await chosen.close();
  }
}
