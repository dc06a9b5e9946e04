import { configDefaults, defineConfig } from 'vitest/config';
import { BFCL_DATA_TAG, filesNeedingBfclData, missingBfclData } from './test/support/data-setup.js';

export default defineConfig(async () => {
  // the BFCL task files, pulled into the cache when no shared copy is beside the repository
  const missing = await missingBfclData();
  const skipped = missing === undefined ? [] : filesNeedingBfclData();
  if (missing !== undefined) {
    if (process.env.CI) throw new Error(`CI needs the BFCL task files: ${missing}`);
    const files = `${skipped.length} test file${skipped.length === 1 ? '' : 's'}`;
    console.error(`Skipping the ${files} tagged ${BFCL_DATA_TAG}: ${missing}.`);
  }
  return {
    test: {
      include: ['test/**/*.test.ts'],
      exclude: [...configDefaults.exclude, ...skipped],
      setupFiles: ['test/support/setup.ts'],
      globalSetup: ['test/support/global-setup.ts'],
      tags: [
        {
          name: BFCL_DATA_TAG,
          description: 'reads the BFCL task files',
        },
      ],
      testTimeout: 120_000,
      hookTimeout: 120_000,
      pool: 'forks',
      // two files at a time: most files wait on processes, servers and worker threads for much of
      // their time, and vitest's default on two cores (cores - 1) ran them one after another
      maxWorkers: 2,
    },
  };
});
