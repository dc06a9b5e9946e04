/**
 * Tools as a suite declares them and a format shows them: the OpenAI function-tool shape, with
 * the part of JSON Schema that tool parameters use. Suites and formats share this, so that no
 * format has to know which suite a tool came from.
 */

export interface JsonSchemaLike {
  readonly type?: string;
  readonly description?: string;
  readonly items?: JsonSchemaLike;
  readonly properties?: Readonly<Record<string, JsonSchemaLike>>;
  readonly required?: readonly string[];
  readonly enum?: readonly unknown[];
  readonly default?: unknown;
  readonly [key: string]: unknown;
}

/** A tool as an OpenAI-compatible request declares it. */
export interface OpenAiTool {
  readonly type: 'function';
  readonly function: {
    readonly name: string;
    readonly description: string;
    readonly parameters: JsonSchemaLike;
    readonly response?: unknown;
  };
}

/**
 * Type names as tool data sets write them, JSON Schema's own and those borrowed from Python
 * (`dict`, `float`, `tuple`) and Java (`ArrayList`, `HashMap`, `long`), read as JSON Schema's. The
 * table is BFCL's (its `GORILLA_TO_OPENAPI`), which is where such names occur.
 */
export const JSON_SCHEMA_TYPE_OF: Readonly<Record<string, string>> = {
  integer: 'integer',
  number: 'number',
  float: 'number',
  string: 'string',
  boolean: 'boolean',
  bool: 'boolean',
  array: 'array',
  list: 'array',
  dict: 'object',
  object: 'object',
  tuple: 'array',
  any: 'string',
  byte: 'integer',
  short: 'integer',
  long: 'integer',
  double: 'number',
  char: 'string',
  ArrayList: 'array',
  Array: 'array',
  HashMap: 'object',
  Hashtable: 'object',
  Queue: 'array',
  Stack: 'array',
  Any: 'string',
  String: 'string',
  Bigint: 'integer',
};
