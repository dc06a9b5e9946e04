/**
 * The `seal` command line: parses the arguments with the program of program.ts and maps what
 * escapes to exit codes.
 */

import { CommanderError } from 'commander';
import { ContextOverflowError, ModelServerError } from '../policy/errors.js';
import { SampleFailedError } from '../policy/policy.js';
import { AdapterError } from '../tinker/adapter.js';
import { TinkerError } from '../tinker/errors.js';
import { UserError } from '../util/errors.js';
import { buildProgram } from './program.js';

const program = await buildProgram(process.argv);

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
