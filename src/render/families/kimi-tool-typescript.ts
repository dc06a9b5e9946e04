/**
 * Kimi K2.5's tool declaration: each tool's JSON schema written as a TypeScript function type in a
 * `namespace functions { ... }`, the form Moonshot's K2.5 tokenizer folder writes and the cookbook's
 * kimi_k25 renderer reproduces. Written here from the behaviour of the cookbook's encoder:
 *
 *   - an object's required fields first, then the optional ones (`name?`), each group by name;
 *   - a field's description and its constraints (`maxLength`, `minimum`, ...) as `//` lines above
 *     it, its default as `// Default: ...` (Python's repr for numbers and booleans, JSON otherwise);
 *   - `integer` is `number`, an enum is a union of literals, `anyOf` and a list of types are unions,
 *     `$ref`s to `$defs` become named interfaces written before the function type;
 *   - values Python writes (constraint numbers, enum literals) are written as Python's str() does.
 *
 * A schema the encoder cannot read (a field with no type, enum values of another type than
 * declared, an unknown $ref) is refused, as the cookbook raises on it.
 */
import { RenderRefused, type ToolSpec } from './family.js';
import { dumps, fromJs, pyRepr, pyStr } from './python.js';

const INDENT = '  ';
const FIELDS = ',\n';

type Schema = Record<string, unknown>;

const isObject = (v: unknown): v is Schema => typeof v === 'object' && v !== null && !Array.isArray(v);

function comment(description: string, indent = ''): string {
  return description
    .split('\n')
    .map((line) => (line ? `${indent}// ${line}` : ''))
    .join('\n');
}

/** a pythonic truthiness, for the encoder's `if x:` tests */
function truthy(v: unknown): boolean {
  if (Array.isArray(v)) return v.length > 0;
  if (isObject(v)) return Object.keys(v).length > 0;
  return Boolean(v);
}

class Registry {
  readonly definitions = new Map<string, unknown>();
  selfRef = false;

  register(defs: unknown): void {
    if (!isObject(defs)) return;
    for (const [name, schema] of Object.entries(defs)) this.definitions.set(name, schema);
  }

  /** the name a $ref is written as */
  resolve(ref: string): string {
    if (ref === '#') {
      this.selfRef = true;
      return 'parameters';
    }
    if (ref.startsWith('#/$defs/')) {
      const name = ref.split('/').pop()!;
      if (!this.definitions.has(name)) throw new RenderRefused(`tool schema: reference not found: ${ref}`);
      return name;
    }
    throw new RenderRefused(`tool schema: unsupported reference format: ${ref}`);
  }
}

abstract class TsType {
  readonly description: string;
  readonly constraints: [string, unknown][];

  constructor(schema: Schema, constraintKeys: readonly string[] = []) {
    this.description = typeof schema.description === 'string' ? schema.description : '';
    this.constraints = Object.entries(schema)
      .filter(([k]) => constraintKeys.includes(k))
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  }

  abstract ts(indent: string): string;

  docstring(indent: string): string {
    const lines: string[] = [];
    if (this.description) lines.push(comment(this.description, indent));
    if (this.constraints.length > 0)
      lines.push(`${indent}// ${this.constraints.map(([k, v]) => `${k}: ${pyStr(fromJs(v))}`).join(', ')}`);
    return lines.map((l) => l + '\n').join('');
  }
}

class Scalar extends TsType {
  constructor(
    readonly type: string,
    schema: Schema = {},
  ) {
    super(
      schema,
      type === 'string'
        ? ['maxLength', 'minLength', 'pattern']
        : type === 'number' || type === 'integer'
          ? ['maximum', 'minimum']
          : [],
    );
  }

  ts(): string {
    return this.type === 'integer' ? 'number' : this.type;
  }
}

class Field {
  constructor(
    readonly name: string,
    readonly type: TsType,
    readonly optional: boolean,
    readonly defaultValue: unknown,
  ) {}

  ts(indent: string): string {
    let comments = this.type.docstring(indent);
    if (this.defaultValue !== null && this.defaultValue !== undefined) {
      const v = fromJs(this.defaultValue);
      const text =
        typeof v === 'bigint' || typeof v === 'number' || typeof v === 'boolean'
          ? pyRepr(v)
          : dumps(v, { ensureAscii: false });
      comments += `${indent}// Default: ${text}\n`;
    }
    return `${comments}${indent}${this.name}${this.optional ? '?' : ''}: ${this.type.ts(indent)}`;
  }
}

class ObjectType extends TsType {
  readonly fields: Field[] = [];
  readonly additional: TsType | boolean | undefined;

  constructor(schema: Schema, registry: Registry) {
    super(schema);
    if (Object.keys(schema).length === 0) return;
    if ('$defs' in schema) registry.register(schema.$defs);
    const ap = schema.additionalProperties;
    this.additional = isObject(ap) ? parseType(ap, registry) : (ap as boolean | undefined);
    if (!isObject(schema.properties)) return;
    const required = new Set(Array.isArray(schema.required) ? schema.required : []);
    for (const [name, prop] of Object.entries(schema.properties))
      this.fields.push(
        new Field(name, parseType(prop, registry), !required.has(name), isObject(prop) ? prop.default : null),
      );
  }

  ts(indent = ''): string {
    const byName = (a: Field, b: Field) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
    const ordered = [
      ...this.fields.filter((f) => !f.optional).sort(byName),
      ...this.fields.filter((f) => f.optional).sort(byName),
    ];
    const lines = ordered.map((f) => f.ts(indent + INDENT));
    if (this.additional !== undefined && this.additional !== null) {
      let t: string;
      if (this.additional === true) t = 'any';
      else if (this.additional === false) t = 'never';
      else if (this.additional instanceof TsType) t = this.additional.ts(indent + INDENT);
      else throw new RenderRefused(`tool schema: unknown additionalProperties: ${String(this.additional)}`);
      lines.push(`${indent + INDENT}[k: string]: ${t}`);
    }
    if (lines.length === 0) return '{}';
    return `{\n${lines.join(FIELDS)}\n${indent}}`;
  }
}

class ArrayType extends TsType {
  readonly item: TsType;

  constructor(schema: Schema, registry: Registry) {
    super(schema, ['minItems', 'maxItems']);
    this.item = truthy(schema.items) ? parseType(schema.items, registry) : new Scalar('any');
  }

  ts(indent = ''): string {
    const doc = this.item.docstring(indent + INDENT);
    if (doc) return `Array<\n${doc}${indent}${INDENT}${this.item.ts(indent + INDENT)}\n${indent}>`;
    return `Array<${this.item.ts(indent)}>`;
  }
}

class EnumType extends TsType {
  readonly values: unknown[];

  constructor(schema: Schema) {
    super(schema);
    this.values = Array.isArray(schema.enum) ? schema.enum : [];
    if (!('type' in schema)) return;
    let type = schema.type;
    if (Array.isArray(type)) {
      if (type.length === 1) type = type[0];
      else if (type.length === 2 && type.includes('null')) type = type[0] !== 'null' ? type[0] : type[1];
      else throw new RenderRefused(`tool schema: enum type ${JSON.stringify(type)} is not supported`);
    }
    const fits: Record<string, (v: unknown) => boolean> = {
      string: (v) => typeof v === 'string',
      // Python's bool is an int, so booleans pass the numeric checks
      number: (v) => typeof v === 'number' || typeof v === 'boolean',
      integer: (v) => (typeof v === 'number' && Number.isInteger(v)) || typeof v === 'boolean',
      boolean: (v) => typeof v === 'boolean',
    };
    const check = typeof type === 'string' && Object.hasOwn(fits, type) ? fits[type] : undefined;
    for (const v of this.values)
      if (v !== null && check && !check(v))
        throw new RenderRefused(`tool schema: enum value ${JSON.stringify(v)} is not a ${String(type)}`);
  }

  ts(): string {
    return this.values.map((v) => (typeof v === 'string' ? `"${v}"` : pyStr(fromJs(v)))).join(' | ');
  }
}

class AnyOfType extends TsType {
  readonly types: TsType[];

  constructor(schema: Schema, registry: Registry) {
    super(schema);
    this.types = (Array.isArray(schema.anyOf) ? schema.anyOf : []).map((s) => parseType(s, registry));
  }

  ts(indent = ''): string {
    return this.types.map((t) => t.ts(indent)).join(' | ');
  }
}

const UNION_NAMES: Record<string, string> = {
  string: 'string',
  number: 'number',
  integer: 'number',
  boolean: 'boolean',
  null: 'null',
  object: '{}',
  array: 'Array<any>',
};

class UnionType extends TsType {
  readonly names: string[];

  constructor(schema: Schema) {
    super(schema);
    this.names = (schema.type as unknown[]).map((t) => {
      const name = typeof t === 'string' ? UNION_NAMES[t] : undefined;
      if (name === undefined) throw new RenderRefused(`tool schema: unknown type ${JSON.stringify(t)}`);
      return name;
    });
  }

  ts(): string {
    return this.names.join(' | ');
  }
}

class RefType extends TsType {
  readonly name: string;

  constructor(schema: Schema, registry: Registry) {
    super(schema);
    this.name = registry.resolve(String(schema.$ref));
  }

  ts(): string {
    return this.name;
  }
}

function parseType(schema: unknown, registry: Registry): TsType {
  if (typeof schema === 'boolean') return new Scalar(schema ? 'any' : 'null');
  if (!isObject(schema))
    throw new RenderRefused(`tool schema: invalid JSON Schema object: ${JSON.stringify(schema)}`);
  if ('$ref' in schema) return new RefType(schema, registry);
  if ('anyOf' in schema) return new AnyOfType(schema, registry);
  if ('enum' in schema) return new EnumType(schema);
  if ('type' in schema) {
    const type = schema.type;
    if (Array.isArray(type)) return new UnionType(schema);
    if (type === 'object') return new ObjectType(schema, registry);
    if (type === 'array') return new ArrayType(schema, registry);
    return new Scalar(String(type), schema);
  }
  if (Object.keys(schema).length === 0) return new Scalar('any');
  throw new RenderRefused(`tool schema: invalid JSON Schema object: ${JSON.stringify(schema)}`);
}

function functionType(tool: ToolSpec): string {
  const registry = new Registry();
  const parameters = isObject(tool.parameters) ? tool.parameters : {};
  const root = new ObjectType(parameters, registry);
  const interfaces: string[] = [];
  if (registry.selfRef) {
    // a schema that refers to itself names its root `parameters`, fields in the order written
    const fields = root.fields.map((f) => f.ts(INDENT)).join(FIELDS);
    interfaces.push(`interface parameters {${fields ? `\n${fields}\n` : ''}}`);
  }
  for (const [name, schema] of [...registry.definitions]) {
    const body = parseType(schema, registry).ts('');
    const description = isObject(schema) && typeof schema.description === 'string' ? schema.description : '';
    interfaces.push(`${description ? comment(description) + '\n' : ''}interface ${name} ${body}`);
  }
  const name = tool.name ?? 'function';
  const typeDef = `type ${name} = (_: ${registry.selfRef ? 'parameters' : root.ts('')}) => any;`;
  return [interfaces.join('\n'), tool.description ? comment(tool.description) : '', typeDef]
    .filter((s) => s)
    .join('\n');
}

/** the tool_declare message's text for K2.5: empty when there are no tools */
export function typescriptTools(tools: readonly ToolSpec[]): string {
  if (tools.length === 0) return '';
  return `# Tools\n\n## functions\nnamespace functions {\n${tools.map(functionType).join('\n')}\n}\n`;
}
