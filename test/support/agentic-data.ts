/**
 * Where the tests find BFCL v4's agentic data (memory, web search): `../shared/bfcl-v4-agentic/data`
 * beside the repository, or `$SEAL_SHARED_BFCL_AGENTIC`. When it is absent the tests that need it
 * are skipped, and one line says what is missing and how to provide it.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';

export const AGENTIC_DATA =
  process.env.SEAL_SHARED_BFCL_AGENTIC ??
  join(import.meta.dirname, '..', '..', '..', 'shared', 'bfcl-v4-agentic', 'data');

export const HAS_AGENTIC_DATA = existsSync(join(AGENTIC_DATA, 'BFCL_v4_memory.json'));

/** Say once, in the test output, why the data-bound tests of a file were skipped. */
export function reportMissingAgenticData(file: string): void {
  if (!HAS_AGENTIC_DATA)
    console.error(
      `${file}: BFCL v4 agentic data not found in ${AGENTIC_DATA}; its data tests are skipped. ` +
        'Provide it with `npx seal data pull bfcl --dest DIR` and SEAL_SHARED_BFCL_AGENTIC=DIR.',
    );
}
