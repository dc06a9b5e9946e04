/**
 * The `seal` program: one file per command (`register<Command>` in src/cli/<command>.ts). Built
 * here without being run, so that the docs' flag tables can be made from the same declarations
 * the command line parses with (scripts/docs-flags.ts).
 */
import { Command, CommanderError } from 'commander';
import { checkoutCommit, packageVersion } from '../train/code-version.js';
import { registerCheckpoints } from './checkpoints.js';
import { registerCompare } from './compare.js';
import { registerData } from './data.js';
import { registerEval } from './eval.js';
import { registerExperiment } from './experiment.js';
import { registerPretrain } from './pretrain.js';
import { registerRender } from './render.js';
import { registerReport } from './report.js';
import { registerServe } from './serve.js';
import { registerTrain } from './train.js';
import { registerVerify } from './verify.js';

/** The whole command line, every command registered; `main.ts` parses `process.argv` with it. */
export function buildProgram(): Command {
  const program = new Command();
  program
    .name('seal')
    .description('SEAL: train tool-use agents together with their training environments (BFCL multi-turn).')
    // commander's own usage errors (unknown flag, bad choice, missing option) are the user's to fix
    // like every other: exit 2, no stack trace
    .exitOverride()
    // not commander's .version(): that takes the text when the program is built, and the commit
    // costs a git process, spent only when asked for
    .option('-V, --version', 'print the version (in a checkout also the commit) and exit')
    .on('option:version', () => {
      console.log(versionText());
      throw new CommanderError(0, 'commander.version', versionText());
    });

  registerVerify(program);
  registerEval(program);
  registerCompare(program);
  registerPretrain(program);
  registerData(program);
  registerTrain(program);
  registerExperiment(program);
  registerReport(program);
  registerServe(program);
  registerRender(program);
  registerCheckpoints(program);
  pointToHelpAfterErrors(program, 'seal');
  return program;
}

/** `seal 0.1.0`, in a checkout `seal 0.1.0 (commit 0123456789ab)`, with uncommitted edits said */
export function versionText(): string {
  const checkout = checkoutCommit();
  if (!checkout) return `seal ${packageVersion()}`;
  return `seal ${packageVersion()} (commit ${checkout.git.slice(0, 12)}${checkout.dirty ? ', with uncommitted edits in src/, bin/ or package.json' : ''})`;
}

/**
 * After a usage error (an unknown or misspelled flag, a missing value), commander's message and its
 * "Did you mean" are followed by one line naming the help, not by the whole help: a train help of
 * 180 lines would push the error and the suggestion off the screen.
 */
function pointToHelpAfterErrors(cmd: Command, path: string): void {
  let hint = `(${path} --help lists every flag)`;
  if (cmd.commands.length > 0) hint = `(${path} --help lists its commands)`;
  if (!cmd.parent) hint = `(${path} --help lists the commands; ${path} COMMAND --help the flags of one)`;
  cmd.showHelpAfterError(hint);
  for (const sub of cmd.commands) pointToHelpAfterErrors(sub, `${path} ${sub.name()}`);
}
