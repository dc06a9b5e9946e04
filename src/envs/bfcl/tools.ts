/**
 * BFCL function docs -> the OpenAI tool schema a policy sees, converted the way the reference's
 * `convert_to_tool(..., GORILLA_TO_OPENAPI, OPENAI_COMPLETIONS)` does: top-level type `object`,
 * BFCL type names mapped to JSON Schema ones, floats marked with `format: float` and a sentence
 * in the description.
 */
import { JSON_SCHEMA_TYPE_OF, type OpenAiTool } from '../tools.js';
import type { FunctionDoc } from './data/tasks.js';

type Mutable = { [key: string]: unknown };

function castProperties(props: Record<string, Mutable>): Record<string, Mutable> {
  for (const value of Object.values(props)) {
    const t = value.type as string | undefined;
    if (t === undefined) value.type = 'string';
    else {
      if (t === 'float') {
        value.format = 'float';
        value.description = `${(value.description as string | undefined) ?? ''} This is a float type value.`;
      }
      value.type = JSON_SCHEMA_TYPE_OF[t] ?? 'string';
    }
    if (value.type === 'array' || value.type === 'object') {
      if (value.properties) castProperties(value.properties as Record<string, Mutable>);
      else if (value.items) {
        const items = value.items as Mutable;
        items.type = JSON_SCHEMA_TYPE_OF[items.type as string] ?? items.type;
        if (items.type === 'array' && items.items) {
          const inner = items.items as Mutable;
          inner.type = JSON_SCHEMA_TYPE_OF[inner.type as string] ?? inner.type;
        } else if (items.type === 'object' && items.properties) {
          castProperties(items.properties as Record<string, Mutable>);
        }
      }
    }
  }
  return props;
}

/**
 * Converted tools by doc: an episode asks for its tools at every step, and the conversion (a deep
 * clone) would otherwise dominate a step. Safe to share because both types are read-only.
 */
const converted = new WeakMap<FunctionDoc, OpenAiTool>();

export function toOpenAiTool(doc: FunctionDoc): OpenAiTool {
  let tool = converted.get(doc);
  if (!tool) {
    tool = convert(doc);
    converted.set(doc, tool);
  }
  return tool;
}

function convert(doc: FunctionDoc): OpenAiTool {
  const fn = structuredClone(doc) as unknown as Mutable & { parameters: Mutable };
  fn.parameters.type = 'object';
  fn.parameters.properties = castProperties((fn.parameters.properties ?? {}) as Record<string, Mutable>);
  return { type: 'function', function: fn as unknown as OpenAiTool['function'] };
}
