/**
 * The public tool schemas as the diagnosis and the interface read them.
 *
 * BFCL docs carry closed value sets only in descriptions (`[Enum]: [...]`, "Options are: ...",
 * "Here are the options: ..."), never as `enum` keys, and never set `additionalProperties:
 * false` although the API methods reject unknown keywords (docs/method.md, section 10). So the
 * checkable schema is derived here: BFCL type names mapped the way the reference maps them,
 * allowed values lifted out of the descriptions, unknown keys forbidden. Validation is Ajv's.
 */
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import type { FunctionDoc } from '../envs/bfcl/data/tasks.js';
import type { JsonSchemaLike } from '../envs/tools.js';
import { JSON_SCHEMA_TYPE_OF } from '../envs/tools.js';

/** Allowed values stated in a parameter description, or undefined when it states none. */
export function allowedValuesFromDescription(description: string | undefined): string[] | undefined {
  if (!description) return undefined;
  const bracketed = /\[Enum\]:\s*(\[[^\]]*\])/.exec(description);
  if (bracketed) {
    try {
      const values = JSON.parse(bracketed[1]!) as unknown;
      if (Array.isArray(values) && values.every((v) => typeof v === 'string')) return values;
    } catch {
      // fall through to the plain list form
    }
  }
  const listed = /(?:\[Enum\]:|Options are:|Here are the options:)\s*([^.[\]]+?)\s*(?:\.\s|\.$|$)/.exec(
    description,
  );
  if (!listed) return undefined;
  const values = listed[1]!
    .split(',')
    .map((v) => v.trim())
    .filter((v) => v.length > 0);
  return values.length > 0 ? values : undefined;
}

export type JsonSchema = { [key: string]: unknown };

function propertySchema(p: JsonSchemaLike): JsonSchema {
  const out: JsonSchema = {};
  const t = p.type === undefined ? 'string' : (JSON_SCHEMA_TYPE_OF[p.type] ?? 'string');
  out.type = t;
  const allowed = allowedValuesFromDescription(p.description);
  if (t === 'array') {
    const items: JsonSchema = p.items ? propertySchema(p.items) : {};
    if (allowed && !items.enum) items.enum = allowed;
    out.items = items;
  } else if (allowed) {
    out.enum = allowed;
  }
  if (t === 'object' && p.properties) {
    out.properties = Object.fromEntries(Object.entries(p.properties).map(([k, v]) => [k, propertySchema(v)]));
  }
  return out;
}

/** The checkable JSON Schema of a tool's arguments. */
export function argumentSchema(doc: FunctionDoc): JsonSchema {
  return {
    type: 'object',
    properties: Object.fromEntries(
      Object.entries(doc.parameters.properties).map(([k, v]) => [k, propertySchema(v)]),
    ),
    required: [...(doc.parameters.required ?? [])],
    additionalProperties: false,
  };
}

export type ArgumentIssueKind =
  | 'missing_required'
  | 'unknown_argument'
  | 'wrong_type'
  | 'value_not_allowed'
  | 'malformed';

export interface ArgumentIssue {
  readonly kind: ArgumentIssueKind;
  /** the argument concerned (a JSON pointer below the arguments for nested values) */
  readonly argument: string;
  readonly message: string;
}

function toIssue(e: ErrorObject): ArgumentIssue {
  const path = e.instancePath.replace(/^\//, '');
  switch (e.keyword) {
    case 'required':
      return {
        kind: 'missing_required',
        argument: String(e.params.missingProperty),
        message: `missing required argument '${e.params.missingProperty}'`,
      };
    case 'additionalProperties':
      return {
        kind: 'unknown_argument',
        argument: path ? `${path}/${e.params.additionalProperty}` : String(e.params.additionalProperty),
        message: `unknown argument '${e.params.additionalProperty}'`,
      };
    case 'type':
      return { kind: 'wrong_type', argument: path, message: `'${path}' must be ${e.params.type}` };
    case 'enum':
      return {
        kind: 'value_not_allowed',
        argument: path,
        message: `'${path}' must be one of ${(e.params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`,
      };
    default:
      return { kind: 'malformed', argument: path, message: `'${path}' ${e.message ?? 'is malformed'}` };
  }
}

/** Validates calls against the public schemas (compiled once per tool). */
export class ArgumentChecker {
  private readonly ajv = new Ajv({ allErrors: true, strict: false });
  private readonly validators = new Map<string, ValidateFunction>();

  constructor(private readonly docs: ReadonlyMap<string, FunctionDoc>) {}

  /** Issues with the arguments of a call to `name` (empty when they conform). */
  check(name: string, args: Readonly<Record<string, unknown>>): ArgumentIssue[] {
    const doc = this.docs.get(name);
    if (!doc) return [];
    let validate = this.validators.get(name);
    if (!validate) {
      validate = this.ajv.compile(argumentSchema(doc));
      this.validators.set(name, validate);
    }
    if (validate(args)) return [];
    return (validate.errors ?? []).map(toIssue);
  }
}
