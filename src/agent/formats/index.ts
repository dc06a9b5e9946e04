/**
 * The tool-call formats by name. Each adapter presents tools to a policy, decodes its output
 * into call strings (parsed, never evaluated) and writes the exchange back into the history.
 */
import type { FormatAdapter, ToolCallFormat } from '../format.js';
import { compactFormat } from './compact.js';
import { hermesFormat } from './hermes.js';
import { nativeFormat } from './native.js';
import { pythonFormat, pythonLenientFormat } from './python.js';

const ADAPTERS: Readonly<Record<ToolCallFormat, FormatAdapter>> = {
  native: nativeFormat,
  hermes: hermesFormat,
  python: pythonFormat,
  compact: compactFormat,
};

/**
 * How the python format's text is decoded: `official` is BFCL's prompting decoder (evaluation),
 * `lenient` finds call lists inside prose and keeps positional arguments (training rollouts).
 * The other formats have one rule each.
 */
export type PythonDecoding = 'official' | 'lenient';

export function formatAdapter(format: ToolCallFormat, decoding: PythonDecoding = 'official'): FormatAdapter {
  if (format === 'python' && decoding === 'lenient') return pythonLenientFormat;
  const adapter = ADAPTERS[format];
  if (!adapter) throw new Error(`unknown tool-call format: ${String(format)}`);
  return adapter;
}

export { BASE_SYSTEM_PROMPT, invalidFormatText, stripThinking } from './common.js';
export { compactFormat } from './compact.js';
export { hermesFormat } from './hermes.js';
export { nativeFormat, toolCallIds } from './native.js';
export { pythonFormat, pythonLenientFormat } from './python.js';
