/**
 * The tool-call formats by name. Each adapter presents tools to a policy, decodes its output
 * into call strings (parsed, never evaluated) and writes the exchange back into the history.
 */
import type { FormatAdapter, ToolCallFormat } from '../format.js';
import { compactFormat } from './compact.js';
import { hermesFormat } from './hermes.js';
import { nativeFormat } from './native.js';
import { pythonFormat } from './python.js';

const ADAPTERS: Readonly<Record<ToolCallFormat, FormatAdapter>> = {
  native: nativeFormat,
  hermes: hermesFormat,
  python: pythonFormat,
  compact: compactFormat,
};

export function formatAdapter(format: ToolCallFormat): FormatAdapter {
  const adapter = ADAPTERS[format];
  if (!adapter) throw new Error(`unknown tool-call format: ${String(format)}`);
  return adapter;
}

export { BASE_SYSTEM_PROMPT, invalidFormatText, stripThinking } from './common.js';
export { compactFormat } from './compact.js';
export { hermesFormat } from './hermes.js';
export { nativeFormat, toolCallIds } from './native.js';
export { pythonFormat } from './python.js';
