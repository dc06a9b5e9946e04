/**
 * The `seal` command line: one file per command (`register<Command>` in src/cli/<command>.ts);
 * this file builds the program from them and maps what escapes to exit codes.
 */
import { Command, CommanderError } from 'commander';
import { ContextOverflowError } from '../policy/embedded/policy.js';
import { ModelServerError } from '../policy/openai.js';
import { UserError } from '../util/errors.js';
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
  .showHelpAfterError()
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

try {
  await program.parseAsync(process.argv);
} catch (e) {
  if (e instanceof CommanderError) {
    // help and --version end through here too, with exit code 0; commander already printed
    process.exitCode = e.exitCode === 0 ? 0 : 2;
  } else if (e instanceof UserError) {
    console.error(`seal: ${e.message}`);
    process.exitCode = 2;
  } else if (e instanceof ModelServerError || e instanceof ContextOverflowError) {
    console.error(`seal: ${e.message}\nTasks that finished are kept; rerun the same command to continue.`);
    process.exitCode = 1;
  } else {
    throw e;
  }
}
