import { configDefaults, defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { BFCL_DATA_TAG, filesNeedingBfclData, missingBfclData } from './test/support/data-setup.js';

/**
 * The longest files (CI, two cores, 2026-12-07: 70-310 s each), started first so that the two
 * workers end together; without vitest's cache of durations (a fresh clone) it starts the largest
 * files first, and the longest ran last. The rest keep vitest's order.
 */
const LONGEST_FIRST = [
  'test/train/kill-resume.test.ts',
  'test/train/extend.test.ts',
  'test/train/evaluations.test.ts',
  'test/train/loop.test.ts',
  'test/train/guided.test.ts',
  'test/envs/tau2-evaluator-gold.test.ts',
  'test/eval/tau2-cli.test.ts',
  'test/envs/tau2/replay.test.ts',
  'test/envs/tau2/telecom-evaluate.test.ts',
  'test/train/run-folder.test.ts',
  'test/server/limits.test.ts',
  'test/train/tinker.test.ts',
  'test/eval/eval.test.ts',
  'test/train/tinker-clock.test.ts',
];

class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (f: TestSpecification) => {
      const i = LONGEST_FIRST.findIndex((name) => f.moduleId.endsWith(name));
      return i < 0 ? LONGEST_FIRST.length : i;
    };
    return [...(await super.sort(files))].sort((a, b) => rank(a) - rank(b));
  }
}

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
      sequence: { sequencer: LongestFirst },
    },
  };
});
