/**
 * The instances of one task for one rollout, and the execution of call strings against them,
 * matching the reference executor (`execute_multi_turn_func_call`) result for result.
 *
 * The one deliberate difference: the reference `eval`s the call string; here it is parsed
 * (py/parse.ts) and only literal arguments are accepted. Anything the reference would have
 * computed (arithmetic, nested calls, builtins) comes back as an `Error during execution: ...`
 * result that says so.
 */

import { PyException, TypeError_ } from '../py/errors.js';
import { resultToString } from '../py/format.js';
import { type Expr, ParseTooDeep, PySyntaxError, parsePythonExpression } from '../py/parse.js';
import {
  deepCopy,
  dictSet,
  isHashableScalar,
  type PyDict,
  type PyKey,
  PySet,
  PyTuple,
  type PyValue,
  typeName,
} from '../py/values.js';
import type { ApiClass, BfclApi, ClassName, LongContextConstants, MethodSpec } from './apis/api.js';
import { API_CLASSES } from './apis/index.js';

export const ERROR_PREFIX = 'Error during execution: ';

/** Names the reference refuses to call (checked on the text before the first parenthesis). */
const BLOCKED_NAMES = new Set(['kill', 'exit', 'quit', 'remove', 'unlink', 'popen', 'Popen', 'run']);

/** Python builtins: the reference would run them through eval; we refuse with a clear message. */
const PYTHON_BUILTINS = new Set(
  (
    'abs all any ascii bin bool breakpoint bytearray bytes callable chr classmethod compile complex delattr dict dir ' +
    'divmod enumerate eval exec filter float format frozenset getattr globals hasattr hash help hex id input int ' +
    'isinstance issubclass iter len list locals map max memoryview min next object oct open ord pow print property ' +
    'range repr reversed round set setattr slice sorted staticmethod str sum super tuple type vars zip __import__ ' +
    '__build_class__ __debug__ __doc__ __name__ __loader__ __spec__ __package__ __builtins__ Ellipsis NotImplemented'
  ).split(' '),
);

class Unsupported extends Error {}

const unsupported = (what: string) =>
  new Unsupported(
    `${what} is not supported: tool calls are parsed, never evaluated, so arguments must be literal values ` +
      '(strings, numbers, True/False/None, lists, tuples, dicts)',
  );

export interface TaskEnvironmentOptions {
  readonly taskId: string;
  readonly involvedClasses: readonly ClassName[];
  /** The task's `initial_config` (class name -> scenario); deep-copied per instance. */
  readonly initialConfig: PyDict;
  readonly longContext: boolean;
  readonly constants?: LongContextConstants;
  /**
   * The model name the reference prefixes instance names with. It only shows through a quirk:
   * `name(` inside a string literal gets rewritten too (error case gfs-097).
   */
  readonly modelName?: string;
}

interface MethodRef {
  readonly className: ClassName;
  readonly instance: BfclApi;
  readonly name: string;
  readonly spec: MethodSpec<BfclApi>;
}

/**
 * The global name a class's instance goes by in rewritten calls. The reference replaces `-`, `.`
 * and `/` (model names like `Qwen/Qwen2.5-7B`); any other character a policy name may carry (`@` in
 * `embedded:base@1a2b3c`, `:`) is replaced too, or every call would fail to parse as an operator or
 * a malformed number, and a leading digit gets `_` before it.
 */
export function instanceNameFor(model: string, taskId: string, className: ClassName): string {
  const name = `${model}_${taskId}_${className}_instance`.replace(/[^\p{L}\p{N}_]/gu, '_');
  return /^\p{N}/u.test(name) ? `_${name}` : name;
}

/** One task's live instances. Nothing is shared between two TaskEnvironments. */
export class TaskEnvironment {
  readonly instances = new Map<ClassName, BfclApi>();
  private readonly classes = new Map<ClassName, ApiClass>();
  /** bare method name -> owning class (later classes win, as in the reference's dict update) */
  private readonly methodOwner = new Map<string, ClassName>();
  /** global instance name -> class */
  private readonly instanceNames = new Map<string, ClassName>();
  private readonly instanceNameOf = new Map<ClassName, string>();
  private readonly rewritePattern = /(?<![\p{L}\p{N}_])([A-Za-z_][\p{L}\p{N}_]*)\s*(?=\()/gu;

  constructor(readonly options: TaskEnvironmentOptions) {
    const model = options.modelName ?? 'seal';
    for (const className of options.involvedClasses) {
      if (this.instances.has(className)) continue;
      const cls = API_CLASSES[className];
      const instance = cls.create();
      if (!cls.stateless) {
        const raw = options.initialConfig.get(className);
        const config: PyDict = raw instanceof Map ? deepCopy(raw) : new Map();
        instance.loadScenario(config, { longContext: options.longContext, constants: options.constants });
      }
      this.instances.set(className, instance);
      this.classes.set(className, cls);
      const instanceName = instanceNameFor(model, options.taskId, className);
      this.instanceNames.set(instanceName, className);
      this.instanceNameOf.set(className, instanceName);
      for (const method of Object.keys(cls.methods)) this.methodOwner.set(method, className);
    }
  }

  /** The public attributes of every instance, in involved-class order. */
  publicState(): Map<ClassName, ReadonlyMap<string, PyValue>> {
    const out = new Map<ClassName, ReadonlyMap<string, PyValue>>();
    for (const [name, inst] of this.instances) out.set(name, inst.publicState());
    return out;
  }

  /** Whether `name` is a method of an involved class (what the tool list can offer). */
  hasMethod(name: string): boolean {
    return this.methodOwner.has(name);
  }

  /** Run one call string; always returns the result string, never throws. */
  execute(call: string): string {
    try {
      return this.executeOrThrow(call);
    } catch (e) {
      return ERROR_PREFIX + errorText(e);
    }
  }

  private executeOrThrow(call: string): string {
    // Same order as the reference: prefix method names, refuse blocked names, then "eval".
    const rewritten = call.replace(this.rewritePattern, (_m, name: string) => {
      const owner = this.methodOwner.get(name);
      return owner ? `${this.instanceNameOf.get(owner)}.${name}` : name;
    });
    let head = rewritten.includes('(') ? rewritten.split('(')[0]! : rewritten;
    if (head.includes('.')) head = head.split('.')[1]!;
    if (BLOCKED_NAMES.has(head)) throw new PyException('Exception', `Function call ${head} is not allowed.`);
    const expr = parsePythonExpression(rewritten);
    return resultToString(this.evaluate(expr, true));
  }

  private evaluate(e: Expr, topLevel = false): PyValue {
    switch (e.kind) {
      case 'literal':
        return e.value;
      case 'name':
        this.resolveName(e.name);
        throw unsupported(`using the method '${e.name}' as a value`);
      case 'attribute': {
        const ref = this.resolveAttribute(e.object, e.attr);
        throw unsupported(`using the method '${ref.name}' as a value`);
      }
      case 'call': {
        if (!topLevel) {
          // Resolve first so an unknown name still reads as Python's NameError.
          this.resolveCallee(e.callee);
          throw unsupported('a nested call');
        }
        const ref = this.resolveCallee(e.callee);
        const args = e.args.map((a) => this.evaluate(a));
        const kwargs = e.kwargs.map((k) => [k.name, this.evaluate(k.value)] as const);
        const bound = bindArguments(ref, args, kwargs);
        return ref.spec.run(ref.instance, bound);
      }
      case 'list':
        return e.items.map((x) => this.evaluate(x));
      case 'tuple':
        return new PyTuple(e.items.map((x) => this.evaluate(x)));
      case 'set': {
        const set = new PySet();
        for (const item of e.items) {
          const v = this.evaluate(item);
          if (!isHashableScalar(v)) throw TypeError_(`unhashable type: '${typeName(v)}'`);
          set.add(v);
        }
        return set;
      }
      case 'dict': {
        const d: PyDict = new Map();
        for (const [k, v] of e.entries) {
          const key = this.evaluate(k);
          const value = this.evaluate(v);
          if (!isHashableScalar(key) && !(key instanceof PyTuple))
            throw TypeError_(`unhashable type: '${typeName(key)}'`);
          dictSet(d, key as PyKey, value);
        }
        return d;
      }
      case 'unsupported':
        throw unsupported(e.what);
    }
  }

  private resolveName(name: string): MethodRef {
    const owner = this.methodOwner.get(name);
    if (owner) return this.methodRef(owner, name);
    if (this.instanceNames.has(name)) throw unsupported(`using the instance '${name}' as a value`);
    if (PYTHON_BUILTINS.has(name)) throw unsupported(`the Python builtin '${name}'`);
    throw new PyException('NameError', `name '${name}' is not defined`);
  }

  private resolveAttribute(object: Expr, attr: string): MethodRef {
    if (object.kind === 'name') {
      const cls = this.instanceNames.get(object.name);
      if (cls) {
        if (!Object.hasOwn(this.classes.get(cls)!.methods, attr)) {
          throw new PyException('AttributeError', `'${cls}' object has no attribute '${attr}'`);
        }
        return this.methodRef(cls, attr);
      }
      this.resolveName(object.name);
    }
    if (object.kind === 'attribute') this.resolveAttribute(object.object, object.attr);
    throw unsupported('attribute access');
  }

  private resolveCallee(callee: Expr): MethodRef {
    if (callee.kind === 'name') return this.resolveName(callee.name);
    if (callee.kind === 'attribute') return this.resolveAttribute(callee.object, callee.attr);
    if (callee.kind === 'unsupported') throw unsupported(callee.what);
    throw unsupported('calling something that is not a tool');
  }

  private methodRef(className: ClassName, name: string): MethodRef {
    const spec = this.classes.get(className)!.methods[name]!;
    return { className, instance: this.instances.get(className)!, name, spec };
  }
}

function errorText(e: unknown): string {
  if (
    e instanceof PyException ||
    e instanceof PySyntaxError ||
    e instanceof Unsupported ||
    e instanceof ParseTooDeep
  ) {
    return e.message;
  }
  if (e instanceof RangeError) return 'maximum recursion depth exceeded';
  // A bug in a port must not crash a rollout; it still reads as a failed call.
  return `internal error: ${e instanceof Error ? e.message : String(e)}`;
}

/** CPython's argument binding for `Class.method(self, ...)`, with its TypeError texts. */
function bindArguments(
  ref: MethodRef,
  args: readonly PyValue[],
  kwargs: readonly (readonly [string, PyValue])[],
): (PyValue | undefined)[] {
  const params = ref.spec.params;
  const qual = `${ref.className}.${ref.name}()`;
  const bound: (PyValue | undefined)[] = new Array(params.length).fill(undefined);
  for (let i = 0; i < Math.min(args.length, params.length); i++) bound[i] = args[i];
  for (const [name, value] of kwargs) {
    const idx = params.findIndex((p) => p.name === name);
    if (idx < 0) throw TypeError_(`${qual} got an unexpected keyword argument '${name}'`);
    if (bound[idx] !== undefined) throw TypeError_(`${qual} got multiple values for argument '${name}'`);
    bound[idx] = value;
  }
  if (args.length > params.length) {
    const total = params.length + 1; // self counts
    const required = params.filter((p) => p.required).length + 1;
    const given = args.length + 1;
    const takes =
      required === total
        ? `${total} positional argument${total === 1 ? '' : 's'}`
        : `from ${required} to ${total} positional arguments`;
    throw TypeError_(`${qual} takes ${takes} but ${given} ${given === 1 ? 'was' : 'were'} given`);
  }
  const missing = params.filter((p, i) => p.required && bound[i] === undefined).map((p) => `'${p.name}'`);
  if (missing.length > 0) {
    const list =
      missing.length === 1
        ? missing[0]
        : missing.length === 2
          ? `${missing[0]} and ${missing[1]}`
          : `${missing.slice(0, -1).join(', ')}, and ${missing[missing.length - 1]}`;
    throw TypeError_(
      `${qual} missing ${missing.length} required positional argument${missing.length === 1 ? '' : 's'}: ${list}`,
    );
  }
  return bound;
}
