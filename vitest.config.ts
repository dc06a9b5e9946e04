import { defineConfig } from 'vitest/config';
import { BFCL_DATA_TAG, missingBfclData } from './test/support/data-setup.js';

export default defineConfig(async () => {
  // the BFCL task files, pulled into the cache when no shared copy is beside the repository
  const missing = await missingBfclData();
  if (missing !== undefined) {
    if (process.env.CI) throw new Error(`CI needs the BFCL task files: ${missing}`);
    console.error(`Skipping the tests tagged ${BFCL_DATA_TAG}: ${missing}.`);
  }
  return {
    test: {
      include: ['test/**/*.test.ts'],
      setupFiles: ['test/support/setup.ts'],
      tags: [
        {
          name: BFCL_DATA_TAG,
          description: 'reads the BFCL task files',
          skip: missing !== undefined,
        },
      ],
      testTimeout: 120_000,
      hookTimeout: 120_000,
      pool: 'forks',
    },
  };
});
