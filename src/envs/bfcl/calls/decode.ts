/**
 * Reading the steps of a BFCL result file into the call strings its executor runs.
 */
import { structuredCallToString } from '../../py/calls.js';
import { decodeExecutePrompting } from '../../py/prompting.js';

/**
 * One step of a BFCL result file: already-decoded call strings (run as they are, as the official
 * checker runs them), a list of structured calls, or raw model text, which is decoded by BFCL's
 * default prompting decoder exactly (keyword arguments only; see prompting.ts). A step that does
 * not decode yields [] (the official evaluator drops it).
 */
export function decodeStep(step: unknown): string[] {
  try {
    if (typeof step === 'string') {
      const r = decodeExecutePrompting(step);
      return r.ok ? r.calls : [];
    }
    if (!Array.isArray(step)) return [];
    return step.flatMap((item): string[] => {
      if (typeof item === 'string') return [item];
      if (item && typeof item === 'object') {
        const obj = item as Record<string, unknown>;
        if (typeof obj.name === 'string' && 'arguments' in obj)
          return [structuredCallToString(obj.name, obj.arguments)];
        const fn = obj.function as Record<string, unknown> | undefined;
        if (fn && typeof fn.name === 'string') return [structuredCallToString(fn.name, fn.arguments)];
        const entries = Object.entries(obj);
        if (entries.length === 1) return [structuredCallToString(entries[0]![0], entries[0]![1])];
      }
      throw new Error('undecodable call');
    });
  } catch {
    return [];
  }
}
