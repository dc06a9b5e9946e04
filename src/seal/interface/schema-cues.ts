/**
 * phi_schema: make constraints that are already in the public schema explicit, inside the tool
 * descriptions the policy reads. Only descriptions grow; no key, name, type or value is removed
 * or renamed, so a decorated tool still validates and executes exactly like the original.
 *
 * Every cue is computed from the schema alone (required lists, `enum` keys, closed value sets
 * stated in descriptions, types), so it can say nothing a reader of the schema could not know.
 */
import type { FunctionDoc } from '../../envs/bfcl/data/tasks.js';
import type { JsonSchemaLike } from '../../envs/tools.js';
import { JSON_SCHEMA_TYPE_OF, type OpenAiTool } from '../../envs/tools.js';
import { allowedValuesFromDescription } from '../schema.js';

export interface SchemaCueSet {
  readonly requiredMarks: boolean;
  readonly allowedValues: boolean;
  readonly types: boolean;
}

/**
 * The schema facts a format's tool rendering already states for every parameter (the compact
 * signature `f(a: int, b?: str)` shows which arguments are required and their types). The cues
 * for them would only say the same again, at a cost a small context cannot pay: with every
 * schema cue on, 64% of the mini training tasks' first prompts outgrew the embedded policy's
 * window; without the restated marks and types, 15% (5% with no interface at all).
 */
export type SchemaShown = Partial<Readonly<SchemaCueSet>>;

export const REQUIRED_MARK = '(required)';

function typeName(t: string | undefined): string {
  return t === undefined ? 'string' : (JSON_SCHEMA_TYPE_OF[t] ?? t);
}

/** e.g. `string`, `array of number`, `object` */
export function typeText(p: JsonSchemaLike): string {
  const t = typeName(p.type);
  return t === 'array' && p.items ? `array of ${typeText(p.items)}` : t;
}

function literalList(values: readonly unknown[]): string {
  return values.map((v) => JSON.stringify(v)).join(', ');
}

/** The closed value set of a parameter (an `enum` key or one stated in its description). */
export function allowedValues(
  p: JsonSchemaLike,
): { values: readonly unknown[]; perItem: boolean } | undefined {
  if (typeName(p.type) === 'array' && p.items) {
    const items = p.items;
    const v =
      items.enum ??
      allowedValuesFromDescription(items.description) ??
      allowedValuesFromDescription(p.description);
    return v && v.length > 0 ? { values: v, perItem: true } : undefined;
  }
  const v = p.enum ?? allowedValuesFromDescription(p.description);
  return v && v.length > 0 ? { values: v, perItem: false } : undefined;
}

export function allowedValuesText(p: JsonSchemaLike): string | undefined {
  const a = allowedValues(p);
  if (!a) return undefined;
  return a.perItem
    ? `Each item must be one of: ${literalList(a.values)}.`
    : `Allowed values: ${literalList(a.values)}.`;
}

function append(description: string | undefined, parts: readonly string[]): string | undefined {
  if (parts.length === 0) return description;
  const base = description ?? '';
  const sep = base === '' || /\s$/.test(base) ? '' : ' ';
  return `${base}${sep}${parts.join(' ')}`;
}

function decorateProperty(p: JsonSchemaLike, required: boolean, cues: SchemaCueSet): JsonSchemaLike {
  const parts: string[] = [];
  if (cues.requiredMarks && required) parts.push(REQUIRED_MARK);
  if (cues.types) parts.push(`Type: ${typeText(p)}.`);
  if (cues.allowedValues) {
    const a = allowedValuesText(p);
    if (a) parts.push(a);
  }
  const out: { [key: string]: unknown } = { ...p };
  const description = append(p.description, parts);
  if (description !== undefined) out.description = description;
  if (p.properties) out.properties = decorateProperties(p.properties, p.required ?? [], cues);
  if (p.items?.properties)
    out.items = {
      ...p.items,
      properties: decorateProperties(p.items.properties, p.items.required ?? [], cues),
    };
  return out as JsonSchemaLike;
}

function decorateProperties(
  props: Readonly<Record<string, JsonSchemaLike>>,
  required: readonly string[],
  cues: SchemaCueSet,
): Record<string, JsonSchemaLike> {
  return Object.fromEntries(
    Object.entries(props).map(([k, v]) => [k, decorateProperty(v, required.includes(k), cues)]),
  );
}

interface ToolShape {
  readonly description: string;
  readonly parameters: {
    readonly properties?: Readonly<Record<string, JsonSchemaLike>>;
    readonly required?: readonly string[];
  };
}

function decorateShape<T extends ToolShape>(tool: T, cues: SchemaCueSet): T {
  if (!cues.requiredMarks && !cues.allowedValues && !cues.types) return tool;
  const required = tool.parameters.required ?? [];
  const properties = tool.parameters.properties ?? {};
  const description =
    cues.requiredMarks && required.length > 0
      ? append(tool.description, [`Required arguments: ${required.join(', ')}.`])!
      : tool.description;
  return {
    ...tool,
    description,
    parameters: { ...tool.parameters, properties: decorateProperties(properties, required, cues) },
  };
}

export function decorateFunctionDoc(doc: FunctionDoc, cues: SchemaCueSet): FunctionDoc {
  return decorateShape(doc, cues);
}

export function decorateOpenAiTool(tool: OpenAiTool, cues: SchemaCueSet): OpenAiTool {
  return { ...tool, function: decorateShape(tool.function, cues) };
}
