/**
 * The base of every τ² domain: a toolkit (the reference's `ToolKitBase` subclass: a class name,
 * its tools, its helper methods, its database) and the environment that runs calls on one or two
 * toolkits as the reference's `Environment` does. What a model sees of a call (result text, error
 * text, whether it is an error) is the reference's, byte for byte: Python's argument binding
 * errors, `to_json_str`, `Error: {str(e)}`.
 */

import { PyException, TypeError_, ValueError_ } from '../py/errors.js';
import { jsonDumps, str } from '../py/format.js';
import { deepCopy, dictGet, dictSet, type PyDict, PyTuple, type PyValue, typeName } from '../py/values.js';
import { type FieldSpec, jsonSchema, type ModelSpec, modelDump, PyModel, sortedJson } from './pydantic.js';
import { toolDescription } from './tool-docs.js';
import type {
  EnvFunctionCall,
  Requestor,
  Tau2DomainName,
  Tau2Environment,
  Tau2ToolCall,
  Tau2ToolSchema,
  ToolDocs,
  ToolKind,
  ToolResponse,
} from './types.js';

/** A call's arguments after binding: every parameter, defaults filled in. */
export type Args = ReadonlyMap<string, PyValue>;

/** A method of a toolkit: its Python signature (after `self`) and what it does. */
export interface FunctionSpec<Kit> {
  readonly name: string;
  readonly params: readonly FieldSpec[];
  /** the class that defines the method, when not the toolkit's own (its qualified name in errors) */
  readonly owner?: string;
  run(kit: Kit, args: Args): PyValue;
}

/** A method marked `@is_tool(kind)`. */
export interface ToolSpec<Kit> extends FunctionSpec<Kit> {
  readonly kind: ToolKind;
}

/**
 * CPython 3.10+'s binding of keyword arguments to `def f(self, <params>)`: each keyword in order
 * (unknown -> unexpected keyword; `self` -> multiple values), then the missing ones.
 */
export function bindKeywords(
  qualname: string,
  params: readonly FieldSpec[],
  kwargs: PyDict,
): Map<string, PyValue> {
  const bound = new Map<string, PyValue>();
  for (const [k, v] of kwargs) {
    const key = String(k);
    if (key === 'self') throw TypeError_(`${qualname}() got multiple values for argument 'self'`);
    if (!params.some((p) => p.name === key))
      throw TypeError_(`${qualname}() got an unexpected keyword argument '${key}'`);
    bound.set(key, v);
  }
  const missing = params.filter((p) => !p.default && !bound.has(p.name)).map((p) => `'${p.name}'`);
  if (missing.length) {
    const n = missing.length;
    const names =
      n === 1
        ? missing[0]
        : n === 2
          ? `${missing[0]} and ${missing[1]}`
          : `${missing.slice(0, -1).join(', ')}, and ${missing[n - 1]}`;
    throw TypeError_(
      `${qualname}() missing ${n} required positional argument${n === 1 ? '' : 's'}: ${names}`,
    );
  }
  for (const p of params) if (!bound.has(p.name) && p.default) bound.set(p.name, deepCopy(p.default.value));
  return bound;
}

/** The reference's `Environment.to_json_str`. */
export function toJsonStr(resp: PyValue): string {
  if (typeof resp === 'string') return resp;
  return jsonDumps(processResult(resp));
}

function processResult(v: PyValue): PyValue {
  if (v instanceof PyModel) return modelDump(v);
  if (v === null || typeof v === 'string') return v;
  if (typeof v === 'bigint' || typeof v === 'number' || typeof v === 'boolean') return str(v);
  if (Array.isArray(v)) return v.map(processResult);
  if (v instanceof PyTuple) return new PyTuple(v.items.map(processResult));
  if (v instanceof Map) {
    const out: PyDict = new Map();
    for (const [k, x] of v) out.set(k, processResult(x));
    return out;
  }
  throw ValueError_(`Unsupported type: <class '${typeName(v)}'>`);
}

/** addict's `Dict.update`: dicts met in both merge recursively, anything else is replaced. */
export function addictUpdate(target: PyDict, data: PyDict): void {
  for (const [k, v] of data) {
    const old = dictGet(target, k);
    if (old instanceof Map && v instanceof Map) addictUpdate(old, v);
    else dictSet(target, k, deepCopy(v));
  }
}

export interface ToolkitOptions<Db extends PyModel> {
  /** the Python class name (`RetailTools`): the qualified names of its methods in errors */
  readonly className: string;
  readonly dbModel: ModelSpec<object>;
  readonly db: Db;
  /** the tools, in the order the reference lists them */
  readonly tools: readonly ToolSpec<Toolkit<Db>>[];
  /** methods reachable only by `run_env_function_call` (initialisation actions, assertions) */
  readonly helpers?: readonly FunctionSpec<Toolkit<Db>>[];
  readonly docs: ToolDocs;
}

/** A toolkit: one side's tools on its database. Tools read `kit.db` on every call (updates replace it). */
export class Toolkit<Db extends PyModel> {
  readonly className: string;
  db: Db;
  private readonly dbModel: ModelSpec<object>;
  private readonly tools: ReadonlyMap<string, ToolSpec<Toolkit<Db>>>;
  private readonly helpers: ReadonlyMap<string, FunctionSpec<Toolkit<Db>>>;
  private readonly docs: ToolDocs;
  private schemaCache: readonly Tau2ToolSchema[] | undefined;

  constructor(o: ToolkitOptions<Db>) {
    this.className = o.className;
    this.db = o.db;
    this.dbModel = o.dbModel;
    this.tools = new Map(o.tools.map((t) => [t.name, t]));
    this.helpers = new Map((o.helpers ?? []).map((t) => [t.name, t]));
    this.docs = o.docs;
  }

  hasTool(name: string): boolean {
    return this.tools.has(name);
  }

  toolKind(name: string): ToolKind | undefined {
    return this.tools.get(name)?.kind;
  }

  toolNames(): string[] {
    return [...this.tools.keys()];
  }

  /** `use_tool`: a tool by name with keyword arguments. */
  useTool(name: string, kwargs: PyDict): PyValue {
    const tool = this.tools.get(name);
    if (!tool) throw ValueError_(`Tool '${name}' not found.`);
    return this.invoke(tool, kwargs);
  }

  /** `getattr(toolkit, name)(**kwargs)`: a tool or a helper. */
  callFunction(name: string, kwargs: PyDict): PyValue {
    const fn = this.tools.get(name) ?? this.helpers.get(name);
    if (!fn) throw new PyException('AttributeError', `'${this.className}' object has no attribute '${name}'`);
    return this.invoke(fn, kwargs);
  }

  private invoke(fn: FunctionSpec<Toolkit<Db>>, kwargs: PyDict): PyValue {
    const args = bindKeywords(`${fn.owner ?? this.className}.${fn.name}`, fn.params, kwargs);
    return fn.run(this, args);
  }

  /** `update_db`: addict merge into the dump, then validation into a new database. */
  updateDb(data: PyDict | null): void {
    const raw = modelDump(this.db);
    addictUpdate(raw, data ?? new Map());
    this.db = this.dbModel.parse(raw) as unknown as Db;
  }

  /** `json.dumps(db.model_dump(), sort_keys=True, default=str)` */
  dbText(): string {
    return sortedJson(this.db);
  }

  /** `Tool.openai_schema` of every tool, in order. */
  schemas(): readonly Tau2ToolSchema[] {
    this.schemaCache ??= [...this.tools.values()].map((t) => this.schemaOf(t));
    return this.schemaCache;
  }

  private schemaOf(t: ToolSpec<Toolkit<Db>>): Tau2ToolSchema {
    const doc = this.docs.tool(t.owner ?? this.className, t.name);
    const description = toolDescription(doc, t.name);
    const parameters = jsonSchema(
      'parameters',
      t.params,
      (model, field) => this.docs.field(model, field),
      (p) => doc?.params.get(p),
      (model) => this.docs.model(model),
    );
    return { type: 'function', function: { name: t.name, description, parameters } };
  }
}

/** A toolkit of any database, as the environment holds it. */
// biome-ignore lint/suspicious/noExplicitAny: the environment runs toolkits of every domain's database
export type AnyToolkit = Toolkit<any>;

export interface EnvironmentOptions {
  readonly domain: Tau2DomainName;
  readonly policy: string;
  readonly tools: AnyToolkit;
  readonly userTools?: AnyToolkit;
  /** `sync_tools` of the domain's environment subclass (telecom); none by default */
  readonly sync?: (env: ToolkitEnvironment) => void;
}

/** The reference's `Environment` over one or two toolkits. */
export class ToolkitEnvironment implements Tau2Environment {
  readonly domain: Tau2DomainName;
  readonly policy: string;
  readonly tools: AnyToolkit;
  readonly userToolkit: AnyToolkit | undefined;
  private readonly sync: ((env: ToolkitEnvironment) => void) | undefined;

  constructor(o: EnvironmentOptions) {
    this.domain = o.domain;
    this.policy = o.policy;
    this.tools = o.tools;
    this.userToolkit = o.userTools;
    this.sync = o.sync;
    this.syncTools();
  }

  agentTools(): readonly Tau2ToolSchema[] {
    return this.tools.schemas();
  }

  userTools(): readonly Tau2ToolSchema[] {
    return this.userToolkit?.schemas() ?? [];
  }

  toolKind(requestor: Requestor, name: string): ToolKind | undefined {
    return this.side(requestor)?.toolKind(name);
  }

  respond(call: Tau2ToolCall): ToolResponse {
    try {
      const resp = this.makeToolCall(call);
      this.syncTools();
      return { content: toJsonStr(resp), error: false };
    } catch (e) {
      return { content: `Error: ${errorText(e)}`, error: true };
    }
  }

  /** `make_tool_call(name, requestor=..., **arguments)`, its own binding included. */
  makeToolCall(call: Tau2ToolCall): PyValue {
    const kwargs = call.arguments;
    if (kwargs.has('requestor'))
      throw TypeError_(
        "tau2.environment.environment.Environment.make_tool_call() got multiple values for keyword argument 'requestor'",
      );
    for (const k of kwargs.keys())
      if (k === 'self' || k === 'tool_name')
        throw TypeError_(`Environment.make_tool_call() got multiple values for argument '${k}'`);
    if (call.requestor === 'user') {
      if (!this.userToolkit) throw ValueError_('User tools not available');
      return this.userToolkit.useTool(call.name, kwargs);
    }
    return this.tools.useTool(call.name, kwargs);
  }

  updateDb(side: Requestor, data: PyDict): void {
    const kit = this.side(side);
    if (!kit) throw new PyException('AttributeError', "'NoneType' object has no attribute 'update_db'");
    kit.updateDb(data);
  }

  runFunction(call: EnvFunctionCall): PyValue {
    const kit = this.side(call.env_type);
    if (!kit)
      throw new PyException('AttributeError', `'NoneType' object has no attribute '${call.func_name}'`);
    const res = kit.callFunction(call.func_name, call.arguments);
    this.syncTools();
    return res;
  }

  syncTools(): void {
    this.sync?.(this);
  }

  dbText(side: Requestor): string | null {
    return this.side(side)?.dbText() ?? null;
  }

  private side(requestor: Requestor): AnyToolkit | undefined {
    return requestor === 'user' ? this.userToolkit : this.tools;
  }
}

/** `str(e)` of what a tool raised; a slip of the port itself reads as Python's generic failure. */
function errorText(e: unknown): string {
  if (e instanceof PyException) return e.message;
  return e instanceof Error ? e.message : String(e);
}
