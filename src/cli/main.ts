/**
 * The `seal` command line: one file per command (`register<Command>` in src/cli/<command>.ts);
 * this file builds the program from them and maps what escapes to exit codes.
 */
import { Command, CommanderError } from 'commander';
import { ContextOverflowError } from '../policy/embedded/policy.js';
import { ModelServerError } from '../policy/openai.js';
import { SampleFailedError } from '../policy/policy.js';
import { AdapterError } from '../tinker/adapter.js';
import { TinkerError } from '../tinker/errors.js';
import { UserError } from '../util/errors.js';
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

const program = new Command();
program
  .name('seal')
  .description('SEAL: train tool-use agents together with their training environments (BFCL multi-turn).')
  // commander's own usage errors (unknown flag, bad choice, missing option) are the user's to fix
  // like every other: exit 2, no stack trace
  .exitOverride();

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

try {
  await program.parseAsync(process.argv);
} catch (e) {
  if (e instanceof CommanderError) {
    // help and --version end through here too, with exit code 0; commander already printed
    process.exitCode = e.exitCode === 0 ? 0 : 2;
  } else if (e instanceof UserError) {
    console.error(`seal: ${e.message}`);
    process.exitCode = 2;
  } else if (e instanceof TinkerError) {
    console.error(`seal: ${tinkerErrorText(e)}`);
    process.exitCode = e.kind === 'usage' || e.kind === 'auth' ? 2 : 1;
  } else if (e instanceof AdapterError) {
    // what the service handed back is not a usable adapter: not the user's input to fix
    console.error(`seal: the downloaded checkpoint is not a usable LoRA adapter: ${e.message}`);
    process.exitCode = 1;
  } else if (
    e instanceof ModelServerError ||
    e instanceof ContextOverflowError ||
    e instanceof SampleFailedError
  ) {
    console.error(`seal: ${e.message}\nTasks that finished are kept; rerun the same command to continue.`);
    process.exitCode = 1;
  } else {
    throw e;
  }
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

/**
 * A Tinker service's last word as one sentence with what to check: a refused key and a bad
 * setting are the user's to fix (exit 2); a service that cannot be reached or gave up is not.
 */
function tinkerErrorText(e: TinkerError): string {
  switch (e.kind) {
    case 'usage':
      return e.message;
    case 'auth':
      return `the Tinker service refused the key (${e.message}). Set TINKER_API_KEY to a valid key for this service.`;
    case 'unreachable':
    case 'timeout':
      return `the Tinker service could not be reached: ${e.message}. Check the base URL (--base-url or TINKER_BASE_URL), that the service is running, and that this machine can reach it.`;
    default:
      return `the Tinker service failed: ${e.message}`;
  }
}
