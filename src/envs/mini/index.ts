/**
 * `mini`: a compact synthetic multi-turn suite over the 8 BFCL API classes, sized for a small
 * embedded policy. Same executor, same official checker, no downloaded data.
 */
export { MINI_DOCS } from './docs.js';
export {
  type GenerateOptions,
  generate,
  generateTask,
  groundTruthRuns,
  MINI_PREFIX,
  miniTaskId,
} from './generate.js';
export {
  buildMiniSplits,
  generateForTraining,
  loadMiniSuite,
  MINI_DEV_OFFSET,
  MINI_DEV_SEED,
  MINI_PER_CATEGORY,
  MINI_SPLIT_SIZE,
  MINI_TEST_OFFSET,
  MINI_TEST_SEED,
  MINI_TRAIN_SEED,
  type MiniSplits,
  miniData,
  miniDocs,
  miniTaskToJson,
  notInTestSplit,
  scenarioKeys,
} from './suite.js';
export { call, pyJson, pyLit } from './util.js';
