/** The check of `seal verify --out`, shared by the multi-turn and the agentic scoring. */
import { existsSync, realpathSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { UsageError } from '../util/errors.js';

/** `--out` must not overwrite an input, and must be a file that can be written. */
export function checkOutPath(out: string, inputs: readonly string[]): void {
  const real = (p: string) => {
    try {
      return realpathSync(p);
    } catch {
      return resolve(p);
    }
  };
  for (const input of inputs)
    if (real(out) === real(input))
      throw new UsageError(`--out ${out} is the input file ${input}; write the verdicts to another file.`);
  if (existsSync(out) && statSync(out).isDirectory())
    throw new UsageError(`--out ${out} is a folder; give a file name for the verdicts (JSON lines).`);
}
