/**
 * The contract every BFCL API class port implements.
 *
 * An instance holds one task's state for one rollout. The executor binds a parsed call's
 * positional and keyword arguments against `methods[name].params` (raising CPython's TypeError
 * texts for missing, unexpected or doubled arguments), then calls `run` with one slot per
 * parameter in Python order: the bound value, or `undefined` when the caller left an optional
 * parameter out (the method applies its own default, which is how per-instance default objects
 * such as TwitterAPI's shared `mentions=[]` list can be reproduced).
 */
import type { PyDict, PyValue } from '../../py/values.js';

export const CLASS_NAMES = [
  'GorillaFileSystem',
  'MathAPI',
  'MessageAPI',
  'TwitterAPI',
  'TicketAPI',
  'TradingBot',
  'TravelAPI',
  'VehicleControlAPI',
] as const;
/** The 8 classes of the multi-turn categories (the mini suite draws from these). */
export type MultiTurnClassName = (typeof CLASS_NAMES)[number];

/**
 * The classes of BFCL v4's agentic categories: one memory backend each for memory_kv,
 * memory_vector and memory_rec_sum, and web search (agentic/).
 */
export const AGENTIC_CLASS_NAMES = [
  'MemoryAPI_kv',
  'MemoryAPI_vector',
  'MemoryAPI_rec_sum',
  'WebSearchAPI',
] as const;
export type AgenticClassName = (typeof AGENTIC_CLASS_NAMES)[number];

export type ClassName = MultiTurnClassName | AgenticClassName;

/** Whether `s` names one of the 8 multi-turn classes. */
export function isClassName(s: string): s is MultiTurnClassName {
  return (CLASS_NAMES as readonly string[]).includes(s);
}

export interface ParamSpec {
  readonly name: string;
  /** false when the Python signature gives a default */
  readonly required: boolean;
}

export type BoundArgs = readonly (PyValue | undefined)[];

export interface MethodSpec<T> {
  /** Parameters in Python signature order (not the doc's order). */
  readonly params: readonly ParamSpec[];
  // Method syntax on purpose: it makes `self` bivariant, so a table typed for one class can sit
  // in the registry of all classes.
  run(self: T, args: BoundArgs): PyValue;
}

export type MethodTable<T> = Readonly<Record<string, MethodSpec<T>>>;

/** The constants of the reference's `long_context.py`, read from the data directory. */
export type LongContextConstants = ReadonlyMap<string, PyValue>;

export interface ScenarioContext {
  readonly longContext: boolean;
  /** Present whenever `longContext` is true. */
  readonly constants: LongContextConstants | undefined;
}

export interface BfclApi {
  readonly className: ClassName;
  /**
   * `_load_scenario(config, long_context)`. The config is already a private deep copy. Not
   * called for MathAPI (stateless in the reference).
   */
  loadScenario(config: PyDict, ctx: ScenarioContext): void;
  /**
   * The public (non-underscore) attributes in `vars()` order: what the official state checker
   * compares with Python `==` and what the golden traces record.
   */
  publicState(): ReadonlyMap<string, PyValue>;
}

export interface ApiClass<T extends BfclApi = BfclApi> {
  readonly className: ClassName;
  /** Stateless classes get no scenario (MathAPI). */
  readonly stateless: boolean;
  create(): T;
  readonly methods: MethodTable<T>;
}

/** Helper for method tables: a required parameter. */
export const req = (name: string): ParamSpec => ({ name, required: true });
/** Helper for method tables: an optional parameter (Python default applied by the method). */
export const opt = (name: string): ParamSpec => ({ name, required: false });

/** Fetch a long-context constant, failing loudly if the data directory lacks it. */
export function longContextConstant(ctx: ScenarioContext, name: string): PyValue {
  const v = ctx.constants?.get(name);
  if (v === undefined) {
    throw new Error(
      `long-context constant ${name} is missing: the BFCL data directory lacks long-context constants`,
    );
  }
  return v;
}
