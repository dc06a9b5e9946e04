/**
 * The suites by name, for the layers that must not name one: which suites `seal eval` plays, where
 * each downloaded suite's data is looked for, and the BFCL-shaped ones (BFCL multi-turn from
 * downloaded or given data, the synthetic mini suite built in) loaded as BFCL data, which training
 * and `seal serve` play today.
 */
import { DATA_DIR_ENV, resolveDataDir } from './bfcl/data/locate.js';
import { type BfclData, loadBfclData, SUITES, type SuiteName } from './bfcl/data/tasks.js';
import { loadMiniSuite } from './mini/index.js';
import { TAU2_DATA_ENV } from './tau2/data.js';

/** the suites `seal eval` plays: BFCL multi-turn, the mini suite (BFCL-shaped), and τ²-bench */
export const EVAL_SUITES = [...SUITES, 'tau2'] as const;
export type EvalSuite = (typeof EVAL_SUITES)[number];

/** the environment variable naming a downloaded suite's data folder, when no flag gives one */
export const DATA_ENV = { bfcl: DATA_DIR_ENV, tau2: TAU2_DATA_ENV } as const;

export function loadSuite(suite: SuiteName, dataDir?: string): BfclData {
  return suite === 'mini' ? loadMiniSuite() : loadBfclData(resolveDataDir(dataDir));
}
