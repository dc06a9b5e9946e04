/** The `seal` command line: thin wrappers that parse flags and call the parts. */
import { Command, Option } from 'commander';
import { TOOL_CALL_FORMATS } from '../agent/format.js';
import { DATA_DIR_ENV, defaultCacheDir, resolveDataDir } from '../envs/bfcl/data/locate.js';
import { BASE_URL_ENV, pullBfcl } from '../envs/bfcl/data/pull.js';
import { DataMissingError, SUITES, type SuiteName } from '../envs/bfcl/data/tasks.js';
import { loadSuite } from '../envs/suites.js';
import { CompareError } from '../eval/compare.js';
import { RunFolderError } from '../eval/run.js';
import {
  PRETRAIN_DEFAULTS as PD,
  DEFAULT_PRETRAIN_MODEL as PM,
  PretrainError,
} from '../learner/embedded/pretrain.js';
import { CheckpointError } from '../policy/embedded/checkpoint.js';
import { ContextOverflowError } from '../policy/embedded/policy.js';
import { ModelServerError } from '../policy/openai.js';
import { type EvalFlags, runCompareCommand, runEvalCommand } from './eval.js';
import { type PretrainFlags, runPretrainCommand } from './pretrain.js';
import { registerServe } from './serve.js';
import { runVerify, UsageError } from './verify.js';

const program = new Command();
program
  .name('seal')
  .description('SEAL: train tool-use agents together with their training environments (BFCL multi-turn).')
  .showHelpAfterError();

const dataDirOption = () =>
  new Option('--data-dir <dir>', `BFCL data directory (default: $${DATA_DIR_ENV}, else the pull cache)`);

program
  .command('verify')
  .description('Score a BFCL result file with the official multi-turn checker')
  .addOption(
    new Option('--suite <name>', 'task suite: bfcl, or the built-in synthetic mini suite')
      .choices([...SUITES])
      .default('bfcl'),
  )
  .option('--results <file>', 'BFCL result file: JSON lines of {id, result} (turns -> steps -> calls)')
  .option('--ground-truth', 'replay the ground truth as the result file (a self-check: 100.00 everywhere)')
  .option('--split <split>', 'only these tasks: train, test, all, or comma-separated ids')
  .option('--json', 'print the summary as one JSON object')
  .option('--out <file>', 'write one JSON line per task with its per-turn verdicts')
  .option(
    '--diagnose',
    'add per-turn diagnosis labels and the rollout weight w_j; print the label mix per category',
  )
  .addOption(dataDirOption())
  .action(
    async (opts: {
      suite: SuiteName;
      results?: string;
      groundTruth?: boolean;
      split?: string;
      json?: boolean;
      out?: string;
      diagnose?: boolean;
      dataDir?: string;
    }) => {
      const data = loadSuite(opts.suite, opts.dataDir);
      await runVerify(data, opts, (s) => console.log(s));
    },
  );

program
  .command('eval')
  .description(
    'Evaluate a policy (a model served by an OpenAI-compatible server, or the embedded one) under the strict protocol',
  )
  .addOption(
    new Option('--suite <name>', 'task suite: bfcl, or the built-in synthetic mini suite')
      .choices([...SUITES])
      .default('bfcl'),
  )
  .option('--split <split>', 'test, train, all, or comma-separated task ids', 'test')
  .addOption(
    new Option(
      '--policy <kind>',
      'server: an OpenAI-compatible model server; embedded: the built-in small model',
    )
      .choices(['server', 'embedded'])
      .default('server'),
  )
  .option(
    '--model <name>',
    'server: the model name as the server knows it; embedded: a checkpoint directory (default: the shipped base)',
  )
  .option(
    '--base-url <url>',
    'OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1 (default: $OPENAI_BASE_URL)',
  )
  .option('--api-key-env <var>', 'environment variable holding the API key', 'OPENAI_API_KEY')
  .addOption(
    new Option(
      '--format <format>',
      'tool-call format (default: native for a server, compact for embedded)',
    ).choices([...TOOL_CALL_FORMATS]),
  )
  .option('--concurrency <n>', 'tasks in flight at once', '8')
  .option('--temperature <t>', 'sampling temperature', '0')
  .option('--top-p <p>', 'nucleus sampling')
  .option('--max-tokens <n>', 'completion length limit per step')
  .option('--seed <n>', 'sampling seed, when the server supports it')
  .option('--stop <text...>', 'stop sequences')
  .option('--extra-body <json>', 'extra request fields, e.g. \'{"return_token_ids": true}\' for vLLM')
  .option('--logprobs', 'ask for token logprobs and keep them in the trajectories')
  .option('--timeout <seconds>', 'per-request timeout', '300')
  .option('--retries <n>', 'retries on 429, 5xx, timeouts and network errors', '3')
  .requiredOption('--out <dir>', 'run folder; rerunning into it resumes')
  .addOption(dataDirOption())
  .action(async (opts: EvalFlags & { dataDir?: string }) => {
    const data = loadSuite(opts.suite, opts.dataDir);
    await runEvalCommand(data, opts, (s) => console.log(s));
  });

program
  .command('compare')
  .description('Compare evaluation runs side by side (Table 1 layout, differences to the first)')
  .argument('<dirs...>', 'run folders written by seal eval')
  .action((dirs: string[]) => runCompareCommand(dirs, (s) => console.log(s)));

program
  .command('pretrain')
  .description(
    "Build the embedded policy's base checkpoint: supervised training on generated mini-suite demonstrations (resumable)",
  )
  .requiredOption('--out <dir>', 'checkpoint directory; rerunning into it resumes')
  .option('--steps <n>', `optimiser steps in total (default ${PD.steps})`)
  .option(
    '--seed <n>',
    `seed of the demonstrations, the initial weights and the batches (default ${PD.seed})`,
  )
  .option('--tasks <n>', `generated training tasks, one demonstration each (default ${PD.tasks})`)
  .option('--batch-size <n>', `sequences per step (default ${PD.batchSize})`)
  .option('--lr <x>', `peak Adam learning rate (default ${PD.lr})`)
  .addOption(
    new Option(
      '--schedule <kind>',
      `learning rate: warm-up then cosine decay to a tenth, or constant (default ${PD.schedule})`,
    ).choices(['cosine', 'constant']),
  )
  .option('--warmup <n>', `warm-up steps of the cosine schedule (default ${PD.warmup})`)
  .option('--max-grad-norm <x>', `gradient clipping (default ${PD.maxGradNorm})`)
  .option(
    '--cue-share <x>',
    `share of demonstrations shown through the training interface (default ${PD.cueShare})`,
  )
  .option('--recovery-share <x>', `share with a failed call and its repair (default ${PD.recoveryShare})`)
  .addOption(
    new Option(
      '--overflow <rule>',
      `demonstrations longer than the context (default ${PD.overflow})`,
    ).choices(['window', 'head', 'tail']),
  )
  .option(
    '--context-weight <x>',
    `loss weight of prompt, user and tool-result tokens next to 1 for assistant tokens (default ${PD.contextWeight})`,
  )
  .option('--vocab <n>', `tokenizer vocabulary size (default ${PM.vocabSize})`)
  .option('--context <n>', `context length in tokens (default ${PM.contextLength})`)
  .option('--layers <n>', `transformer layers (default ${PM.nLayer})`)
  .option('--heads <n>', `attention heads (default ${PM.nHead})`)
  .option('--width <n>', `model width (default ${PM.dModel})`)
  .option('--untied', 'separate input and output embeddings')
  .option(
    '--previous-token',
    "add the previous token's embedding, through a learned map, to each position (copying from the context becomes easy to learn; with --init, added at zero)",
  )
  .option('--workers <n>', 'gradient worker threads (default: 2, or 1 on a one-core machine)')
  .option(
    '--copy-drills <x>',
    `share of batch sequences that are copy drills (random tokens, then the same again) instead of demonstrations (default ${PD.copyDrills})`,
  )
  .option(
    '--init <dir>',
    'start from this checkpoint (its tokenizer, model config and weights) instead of fresh weights',
  )
  .option('--save-every <n>', `checkpoint every n steps (default ${PD.saveEvery})`)
  .option(
    '--held-out <n>',
    `demonstrations of unseen tasks scored at every checkpoint (loss, token accuracy); 0 for none (default ${PD.heldOut})`,
  )
  .option('--quiet', 'no progress lines (training.log.jsonl has every step)')
  .action((flags: PretrainFlags) => runPretrainCommand(flags, (s) => console.log(s)));

registerServe(program);

const data = program.command('data').description('Manage task data');
data
  .command('pull')
  .argument('<suite>', 'which data set (bfcl)')
  .description('Download the pinned BFCL multi-turn files and check them against the sha256 manifest')
  .option('--dest <dir>', `where to put the files (default: $${DATA_DIR_ENV}, else ${defaultCacheDir()})`)
  .option('--base-url <url>', `raw-file host (default: $${BASE_URL_ENV} or GitHub)`)
  .action(async (suite: string, opts: { dest?: string; baseUrl?: string }) => {
    if (suite !== 'bfcl') throw new UsageError(`unknown data set "${suite}"; the one available is "bfcl".`);
    const dest = resolveDataDir(opts.dest);
    const report = await pullBfcl({
      dest,
      ...(opts.baseUrl ? { baseUrl: opts.baseUrl } : {}),
      log: (l) => console.error(l),
    });
    console.log(
      `${dest}: ${report.downloaded.length} downloaded, ${report.alreadyPresent.length} already present, ${report.failed.length} failed`,
    );
    if (report.failed.length > 0) {
      for (const f of report.failed) console.error(`  ${f.path}: ${f.reason}`);
      console.error('Files that did verify are kept; run the same command again to retry the rest.');
      if (report.failed.every((f) => f.reason.startsWith('cannot reach'))) {
        console.error(
          `No network route to the file host? Point --data-dir DIR or $${DATA_DIR_ENV} at a local copy of the data instead.`,
        );
      }
      process.exitCode = 1;
    }
  });

try {
  await program.parseAsync(process.argv);
} catch (e) {
  if (
    e instanceof UsageError ||
    e instanceof DataMissingError ||
    e instanceof RunFolderError ||
    e instanceof CompareError ||
    e instanceof CheckpointError ||
    e instanceof PretrainError
  ) {
    console.error(`seal: ${e.message}`);
    process.exitCode = 2;
  } else if (e instanceof ModelServerError || e instanceof ContextOverflowError) {
    console.error(`seal: ${e.message}\nTasks that finished are kept; rerun the same command to continue.`);
    process.exitCode = 1;
  } else {
    throw e;
  }
}
