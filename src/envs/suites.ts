/** The task suites by name: BFCL (downloaded or given data) and the synthetic mini suite (built in). */
import { resolveDataDir } from './bfcl/data/locate.js';
import { type BfclData, loadBfclData, type SuiteName } from './bfcl/data/tasks.js';
import { loadMiniSuite } from './mini/index.js';

export function loadSuite(suite: SuiteName, dataDir?: string): BfclData {
  return suite === 'mini' ? loadMiniSuite() : loadBfclData(resolveDataDir(dataDir));
}
