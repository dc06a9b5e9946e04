/**
 * The `seal` program: one file per command (`register<Command>` in src/cli/<command>.ts). Built
 * here without being run, so that the docs' flag tables can be made from the same declarations
 * the command line parses with (scripts/docs-flags.ts).
 */
import { Command, CommanderError } from 'commander';
import { checkoutCommit, packageVersion } from '../train/code-version.js';

type Register = (program: Command) => void;

/**
 * Each command's module, in the order the help lists them. A command's module is loaded only when
 * that command runs (or for the help that lists them all): loading every command's dependencies
 * (the HTTP server, the model server client, the renderers, ...) cost each `seal` process most of
 * a second before it did anything.
 */
const COMMANDS: Readonly<Record<string, () => Promise<Register>>> = {
  verify: async () => (await import('./verify.js')).registerVerify,
  eval: async () => (await import('./eval.js')).registerEval,
  compare: async () => (await import('./compare.js')).registerCompare,
  pretrain: async () => (await import('./pretrain.js')).registerPretrain,
  data: async () => (await import('./data.js')).registerData,
  train: async () => (await import('./train.js')).registerTrain,
  experiment: async () => (await import('./experiment.js')).registerExperiment,
  report: async () => (await import('./report.js')).registerReport,
  serve: async () => (await import('./serve.js')).registerServe,
  render: async () => (await import('./render.js')).registerRender,
  checkpoints: async () => (await import('./checkpoints.js')).registerCheckpoints,
};

/**
 * The command line; `main.ts` parses `process.argv` with it. Given the arguments, only the command
 * they name is registered (every command when they name none, or one that does not exist, so that
 * the help and the "did you mean" see them all).
 */
export async function buildProgram(argv?: readonly string[]): Promise<Command> {
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
  const named = argv?.[2];
  const names = named !== undefined && Object.hasOwn(COMMANDS, named) ? [named] : Object.keys(COMMANDS);
  const registers = await Promise.all(names.map((name) => COMMANDS[name]!()));
  for (const register of registers) register(program);
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
