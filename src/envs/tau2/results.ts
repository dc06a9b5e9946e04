/**
 * τ²-bench v0.2.0's results file (`Results`: the run's info, its tasks and every conversation with
 * its reward), read and written so that conversations from the reference's harness can be scored by
 * seal and seal's read by the reference's tools; and `verifyResults`, which scores every
 * conversation of a file again with seal's evaluator.
 *
 * Reading is as lenient as the reference's pydantic models (fields with defaults may be missing,
 * unknown fields are ignored) and names the first thing that is wrong with its path in the file.
 * Tool-call arguments and the run's model arguments stay Python values (`json.loads` semantics:
 * `10.0` is a float), so they are written back as they were read.
 */
import { UserError } from '../../util/errors.js';
import { jsonDumps } from '../py/format.js';
import { parsePyJson } from '../py/json.js';
import { isDict, type PyDict, type PyValue, typeName } from '../py/values.js';
import { evaluateSimulation } from './evaluator/evaluate.js';
import { computeMetrics, type Tau2Metrics } from './evaluator/metrics.js';
import { Tau2ReplayError } from './evaluator/replay.js';
import {
  type ActionCheck,
  type CommunicateCheck,
  type DbCheck,
  type EnvAssertionCheck,
  type InfoDict,
  type InfoValue,
  type NlAssertionCheck,
  type RewardBreakdown,
  type RewardInfo,
  TERMINATION_REASONS,
  type TerminationReason,
} from './evaluator/reward.js';
import { parseTau2Tasks } from './tasks.js';
import type {
  EnvAssertion,
  EnvFunctionCall,
  Requestor,
  RewardType,
  Tau2Action,
  Tau2Domain,
  Tau2Message,
  Tau2Task,
  Tau2ToolCall,
} from './types.js';

export interface Tau2AgentInfo {
  readonly implementation: string;
  readonly llm: string | null;
  readonly llm_args: PyDict | null;
}
export interface Tau2UserInfo extends Tau2AgentInfo {
  readonly global_simulation_guidelines: string | null;
}
export interface Tau2RunInfo {
  readonly git_commit: string;
  readonly num_trials: number;
  readonly max_steps: number;
  readonly max_errors: number;
  readonly user_info: Tau2UserInfo;
  readonly agent_info: Tau2AgentInfo;
  readonly environment_info: {
    readonly domain_name: string;
    readonly policy: string;
    /** kept as read: seal neither needs nor writes the reference's tool signatures */
    readonly tool_defs: PyValue;
  };
  readonly seed: number | null;
}

/** One conversation of a run (`SimulationRun`). */
export interface Tau2SimulationRun {
  readonly id: string;
  readonly task_id: string;
  readonly timestamp: string | null;
  readonly start_time: string;
  readonly end_time: string;
  /** seconds */
  readonly duration: number;
  readonly termination_reason: TerminationReason;
  readonly agent_cost: number | null;
  readonly user_cost: number | null;
  readonly reward_info: RewardInfo | null;
  readonly messages: readonly Tau2Message[];
  readonly trial: number | null;
  readonly seed: number | null;
}

export interface Tau2Results {
  readonly timestamp: string | null;
  readonly info: Tau2RunInfo;
  readonly tasks: readonly Tau2Task[];
  readonly simulations: readonly Tau2SimulationRun[];
}

/** A results file that is not one (what is wrong, where). */
export class Tau2ResultsError extends UserError {
  override name = 'Tau2ResultsError';
}

// ---------------------------------------------------------------------------------------------
// Reading

function describe(v: PyValue | undefined): string {
  if (v === undefined) return 'nothing';
  if (v === null) return 'null';
  if (isDict(v)) return 'an object';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'string')
    return `the string ${JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}...` : v)}`;
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (typeof v === 'bigint' || typeof v === 'number') return `the number ${String(v)}`;
  return `a ${typeName(v)}`;
}

/** A field reader that names the path of what it reads in its errors. */
class At {
  constructor(
    readonly source: string,
    readonly path: string,
  ) {}

  fail(what: string, found: PyValue | undefined): never {
    throw new Tau2ResultsError(
      `${this.source}: ${this.path || 'the file'}: expected ${what}, found ${describe(found)}; is this a τ²-bench v0.2.0 results file?`,
    );
  }
  key(k: string): At {
    return new At(this.source, this.path ? `${this.path}.${k}` : k);
  }
  index(i: number): At {
    return new At(this.source, `${this.path}[${i}]`);
  }
  dict(v: PyValue | undefined): PyDict {
    if (!isDict(v)) this.fail('an object', v);
    return v;
  }
  list(v: PyValue | undefined): PyValue[] {
    if (!Array.isArray(v)) this.fail('a list', v);
    return v;
  }
}

type Kind = 'str' | 'float' | 'int' | 'bool';
const KIND_TEXT: Record<Kind, string> = {
  str: 'a string',
  float: 'a number',
  int: 'an integer',
  bool: 'true or false',
};

function scalar(at: At, v: PyValue | undefined, kind: Kind): string | number | boolean {
  switch (kind) {
    case 'str':
      if (typeof v === 'string') return v;
      break;
    case 'bool':
      if (typeof v === 'boolean') return v;
      break;
    case 'float':
      if (typeof v === 'number' || typeof v === 'bigint') return Number(v);
      break;
    case 'int':
      if (typeof v === 'bigint') return Number(v);
      if (typeof v === 'number' && Number.isInteger(v)) return v;
      break;
  }
  return at.fail(KIND_TEXT[kind], v);
}

/** A required field. */
function req(d: PyDict, at: At, k: string, kind: 'str'): string;
function req(d: PyDict, at: At, k: string, kind: 'float' | 'int'): number;
function req(d: PyDict, at: At, k: string, kind: 'bool'): boolean;
function req(d: PyDict, at: At, k: string, kind: Kind): string | number | boolean {
  if (!d.has(k)) throw new Tau2ResultsError(`${at.source}: ${at.key(k).path}: missing (it is required)`);
  return scalar(at.key(k), d.get(k), kind);
}

/** A field that may be missing or null (null then). */
function opt(d: PyDict, at: At, k: string, kind: 'str'): string | null;
function opt(d: PyDict, at: At, k: string, kind: 'float' | 'int'): number | null;
function opt(d: PyDict, at: At, k: string, kind: 'bool'): boolean | null;
function opt(d: PyDict, at: At, k: string, kind: Kind): string | number | boolean | null {
  const v = d.get(k);
  if (v === undefined || v === null) return null;
  return scalar(at.key(k), v, kind);
}

function optDict(d: PyDict, at: At, k: string): PyDict | null {
  const v = d.get(k);
  return v === undefined || v === null ? null : at.key(k).dict(v);
}

function requestor(d: PyDict, at: At, k: string): Requestor {
  const v = d.get(k);
  if (v === undefined) return 'assistant';
  if (v !== 'assistant' && v !== 'user') return at.key(k).fail('"assistant" or "user"', v);
  return v;
}

/** A Python value as plain JSON-like JS, for the free-form dicts (usage, raw data, notes). */
function plain(v: PyValue): InfoValue {
  if (v === null || typeof v === 'string' || typeof v === 'boolean' || typeof v === 'number') return v;
  if (typeof v === 'bigint') return Number(v);
  if (Array.isArray(v)) return v.map(plain);
  if (isDict(v)) {
    const out: Record<string, InfoValue> = {};
    for (const [k, x] of v) out[String(k)] = plain(x);
    return out;
  }
  return String(v);
}

function toolCall(v: PyValue, at: At): Tau2ToolCall {
  const d = at.dict(v);
  const args = d.get('arguments');
  if (!d.has('arguments'))
    throw new Tau2ResultsError(`${at.source}: ${at.key('arguments').path}: missing (it is required)`);
  return {
    id: opt(d, at, 'id', 'str') ?? '',
    name: req(d, at, 'name', 'str'),
    arguments: at.key('arguments').dict(args),
    requestor: requestor(d, at, 'requestor'),
  };
}

/** One message of a conversation (`Message`), in the shapes of `types.ts`. */
function readMessage(v: PyValue, at: At): Tau2Message {
  const d = at.dict(v);
  const role = d.get('role');
  const common = {
    turn_idx: opt(d, at, 'turn_idx', 'int'),
    timestamp: opt(d, at, 'timestamp', 'str'),
  };
  switch (role) {
    case 'system':
      return { role, content: opt(d, at, 'content', 'str'), ...common };
    case 'assistant':
    case 'user': {
      const calls = d.get('tool_calls');
      const usage = optDict(d, at, 'usage');
      const raw = optDict(d, at, 'raw_data');
      return {
        role,
        content: opt(d, at, 'content', 'str'),
        tool_calls:
          calls === undefined || calls === null
            ? null
            : at
                .key('tool_calls')
                .list(calls)
                .map((c, i) => toolCall(c, at.key('tool_calls').index(i))),
        ...common,
        cost: opt(d, at, 'cost', 'float'),
        usage: usage && (plain(usage) as Record<string, unknown>),
        raw_data: raw && (plain(raw) as Record<string, unknown>),
      };
    }
    case 'tool':
      if (d.has('tool_messages'))
        throw new Tau2ResultsError(
          `${at.source}: ${at.path}: a grouped tool message (MultiToolMessage); v0.2.0 writes each tool result as its own message, and its evaluator cannot replay a grouped one`,
        );
      return {
        role,
        id: req(d, at, 'id', 'str'),
        content: opt(d, at, 'content', 'str'),
        requestor: requestor(d, at, 'requestor'),
        error: opt(d, at, 'error', 'bool') ?? false,
        ...common,
      };
    default:
      return at.key('role').fail('"system", "assistant", "user" or "tool"', role);
  }
}

function envFunctionCall(d: PyDict, at: At): EnvFunctionCall {
  const side = d.get('env_type');
  if (side !== 'assistant' && side !== 'user') return at.key('env_type').fail('"assistant" or "user"', side);
  return {
    env_type: side,
    func_name: req(d, at, 'func_name', 'str'),
    arguments: at.key('arguments').dict(d.get('arguments')),
  };
}

function envAssertion(v: PyValue, at: At): EnvAssertion {
  const d = at.dict(v);
  return {
    ...envFunctionCall(d, at),
    assert_value: opt(d, at, 'assert_value', 'bool') ?? true,
    message: opt(d, at, 'message', 'str'),
  };
}

function action(v: PyValue, at: At): Tau2Action {
  const d = at.dict(v);
  const compare = d.get('compare_args');
  return {
    action_id: req(d, at, 'action_id', 'str'),
    requestor: requestor(d, at, 'requestor'),
    name: req(d, at, 'name', 'str'),
    arguments: at.key('arguments').dict(d.get('arguments')),
    info: opt(d, at, 'info', 'str'),
    compare_args:
      compare === undefined || compare === null
        ? null
        : at
            .key('compare_args')
            .list(compare)
            .map((x, i) => scalar(at.key('compare_args').index(i), x, 'str') as string),
  };
}

const REWARD_TYPES: readonly RewardType[] = ['DB', 'ENV_ASSERTION', 'NL_ASSERTION', 'ACTION', 'COMMUNICATE'];

function rewardType(v: PyValue, at: At): RewardType {
  if (typeof v === 'string' && (REWARD_TYPES as readonly string[]).includes(v)) return v as RewardType;
  return at.fail(`one of ${REWARD_TYPES.join(', ')}`, v);
}

function listOf<T>(d: PyDict, at: At, k: string, item: (v: PyValue, at: At) => T): T[] | null {
  const v = d.get(k);
  if (v === undefined || v === null) return null;
  const a = at.key(k);
  return a.list(v).map((x, i) => item(x, a.index(i)));
}

function check<T>(v: PyValue, at: At, read: (d: PyDict, at: At) => T): T {
  return read(at.dict(v), at);
}

function readRewardInfo(v: PyValue, at: At): RewardInfo {
  const d = at.dict(v);
  const breakdown = optDict(d, at, 'reward_breakdown');
  let reward_breakdown: RewardBreakdown | null = null;
  if (breakdown) {
    const out: Record<string, number> = {};
    for (const [k, x] of breakdown) {
      const kat = at.key('reward_breakdown').key(String(k));
      out[rewardType(k as PyValue, kat)] = scalar(kat, x, 'float') as number;
    }
    reward_breakdown = out;
  }
  const db = optDict(d, at, 'db_check');
  const info = optDict(d, at, 'info');
  return {
    reward: req(d, at, 'reward', 'float'),
    db_check: db && {
      db_match: req(db, at.key('db_check'), 'db_match', 'bool'),
      db_reward: req(db, at.key('db_check'), 'db_reward', 'float'),
    },
    env_assertions: listOf(d, at, 'env_assertions', (x, a) =>
      check(
        x,
        a,
        (c, ca): EnvAssertionCheck => ({
          env_assertion: envAssertion(c.get('env_assertion') ?? null, ca.key('env_assertion')),
          met: req(c, ca, 'met', 'bool'),
          reward: req(c, ca, 'reward', 'float'),
        }),
      ),
    ),
    action_checks: listOf(d, at, 'action_checks', (x, a) =>
      check(
        x,
        a,
        (c, ca): ActionCheck => ({
          action: action(c.get('action') ?? null, ca.key('action')),
          action_match: req(c, ca, 'action_match', 'bool'),
          action_reward: req(c, ca, 'action_reward', 'float'),
        }),
      ),
    ),
    nl_assertions: listOf(d, at, 'nl_assertions', (x, a) =>
      check(
        x,
        a,
        (c, ca): NlAssertionCheck => ({
          nl_assertion: req(c, ca, 'nl_assertion', 'str'),
          met: req(c, ca, 'met', 'bool'),
          justification: req(c, ca, 'justification', 'str'),
        }),
      ),
    ),
    communicate_checks: listOf(d, at, 'communicate_checks', (x, a) =>
      check(
        x,
        a,
        (c, ca): CommunicateCheck => ({
          info: req(c, ca, 'info', 'str'),
          met: req(c, ca, 'met', 'bool'),
          justification: req(c, ca, 'justification', 'str'),
        }),
      ),
    ),
    reward_basis: d.has('reward_basis') ? listOf(d, at, 'reward_basis', rewardType) : ['DB'],
    reward_breakdown,
    info: info && (plain(info) as InfoDict),
  };
}

function terminationReason(d: PyDict, at: At): TerminationReason {
  const v = d.get('termination_reason');
  if (typeof v === 'string' && (TERMINATION_REASONS as readonly string[]).includes(v))
    return v as TerminationReason;
  if (!d.has('termination_reason'))
    throw new Tau2ResultsError(
      `${at.source}: ${at.key('termination_reason').path}: missing (it is required)`,
    );
  return at
    .key('termination_reason')
    .fail(
      `one of v0.2.0's termination reasons (${TERMINATION_REASONS.filter((r) => r !== 'agent_error').join(', ')}) or seal's agent_error`,
      v,
    );
}

function readSimulation(v: PyValue, at: At): Tau2SimulationRun {
  const d = at.dict(v);
  const reward = d.get('reward_info');
  const messages = d.get('messages');
  if (!d.has('messages'))
    throw new Tau2ResultsError(`${at.source}: ${at.key('messages').path}: missing (it is required)`);
  return {
    id: req(d, at, 'id', 'str'),
    task_id: req(d, at, 'task_id', 'str'),
    timestamp: opt(d, at, 'timestamp', 'str'),
    start_time: req(d, at, 'start_time', 'str'),
    end_time: req(d, at, 'end_time', 'str'),
    duration: req(d, at, 'duration', 'float'),
    termination_reason: terminationReason(d, at),
    agent_cost: opt(d, at, 'agent_cost', 'float'),
    user_cost: opt(d, at, 'user_cost', 'float'),
    reward_info:
      reward === undefined || reward === null ? null : readRewardInfo(reward, at.key('reward_info')),
    messages: at
      .key('messages')
      .list(messages)
      .map((m, i) => readMessage(m, at.key('messages').index(i))),
    trial: opt(d, at, 'trial', 'int'),
    seed: opt(d, at, 'seed', 'int'),
  };
}

function readAgentInfo(v: PyValue | undefined, at: At): Tau2AgentInfo {
  const d = at.dict(v);
  return {
    implementation: req(d, at, 'implementation', 'str'),
    llm: opt(d, at, 'llm', 'str'),
    llm_args: optDict(d, at, 'llm_args'),
  };
}

function readInfo(v: PyValue | undefined, at: At): Tau2RunInfo {
  const d = at.dict(v);
  const user = at.key('user_info');
  const env = at.key('environment_info');
  const envDict = env.dict(d.get('environment_info'));
  return {
    git_commit: req(d, at, 'git_commit', 'str'),
    num_trials: req(d, at, 'num_trials', 'int'),
    max_steps: req(d, at, 'max_steps', 'int'),
    max_errors: req(d, at, 'max_errors', 'int'),
    user_info: {
      ...readAgentInfo(d.get('user_info'), user),
      global_simulation_guidelines: opt(
        user.dict(d.get('user_info')),
        user,
        'global_simulation_guidelines',
        'str',
      ),
    },
    agent_info: readAgentInfo(d.get('agent_info'), at.key('agent_info')),
    environment_info: {
      domain_name: req(envDict, env, 'domain_name', 'str'),
      policy: req(envDict, env, 'policy', 'str'),
      tool_defs: envDict.get('tool_defs') ?? null,
    },
    seed: opt(d, at, 'seed', 'int'),
  };
}

function readTasks(v: PyValue | undefined, at: At): Tau2Task[] {
  const list = at.key('tasks').list(v);
  const tasks = parseTau2Tasks(jsonDumps(list), `${at.source}: tasks`);
  // A task's message history holds messages: read them as the conversations' messages are read.
  return tasks.map((task, i) => {
    const raw = list[i] as PyDict;
    const state = raw.get('initial_state');
    const history = isDict(state) ? state.get('message_history') : undefined;
    if (!Array.isArray(history) || !task.initial_state) return task;
    const hat = at.key('tasks').index(i).key('initial_state').key('message_history');
    return {
      ...task,
      initial_state: {
        ...task.initial_state,
        message_history: history.map((m, j) => readMessage(m, hat.index(j))),
      },
    };
  });
}

/** Read a results file's text (`Results.load`). */
export function parseResults(text: string, source = 'results file'): Tau2Results {
  let parsed: PyValue;
  try {
    parsed = parsePyJson(text);
  } catch (e) {
    throw new Tau2ResultsError(`${source} is not valid JSON (${(e as Error).message})`);
  }
  const at = new At(source, '');
  const d = at.dict(parsed);
  for (const k of ['info', 'tasks', 'simulations'])
    if (!d.has(k))
      throw new Tau2ResultsError(
        `${source}: no "${k}"; a τ²-bench results file holds "info", "tasks" and "simulations"`,
      );
  return {
    timestamp: opt(d, at, 'timestamp', 'str'),
    info: readInfo(d.get('info'), at.key('info')),
    tasks: readTasks(d.get('tasks'), at),
    simulations: at
      .key('simulations')
      .list(d.get('simulations'))
      .map((s, i) => readSimulation(s, at.key('simulations').index(i))),
  };
}

/**
 * One simulation as the results file writes it, and back: seal's run folder keeps each finished
 * conversation in this form, so that resuming a run loses no Python type (`10.0` stays a float).
 */
export function simulationText(s: Tau2SimulationRun): string {
  return jsonDumps(dumpSimulation(s));
}
export function parseSimulation(text: string, source = 'simulation'): Tau2SimulationRun {
  let parsed: PyValue;
  try {
    parsed = parsePyJson(text);
  } catch (e) {
    throw new Tau2ResultsError(`${source} is not valid JSON (${(e as Error).message})`);
  }
  return readSimulation(parsed, new At(source, ''));
}

// ---------------------------------------------------------------------------------------------
// Writing: Python values in the reference's field order, floats where its models hold floats.

type Obj = Record<string, PyValue>;
const dict = (o: Obj): PyDict => new Map(Object.entries(o));
const int = (n: number | null | undefined): PyValue => (n === null || n === undefined ? null : BigInt(n));
const float = (n: number | null | undefined): PyValue => (n === null || n === undefined ? null : n);
const orNull = <T>(v: T | null | undefined, f: (x: T) => PyValue): PyValue =>
  v === null || v === undefined ? null : f(v);

/** A free-form value: integral numbers as ints (what JSON with no fraction reads back as). */
function fromPlain(v: unknown): PyValue {
  if (v === null || v === undefined) return null;
  if (typeof v === 'number') return Number.isInteger(v) ? BigInt(v) : v;
  if (typeof v === 'string' || typeof v === 'boolean' || typeof v === 'bigint') return v;
  if (v instanceof Map) return v as PyDict;
  if (Array.isArray(v)) return v.map(fromPlain);
  const out: PyDict = new Map();
  for (const [k, x] of Object.entries(v as Record<string, unknown>)) out.set(k, fromPlain(x));
  return out;
}

function dumpToolCall(c: Tau2ToolCall): PyValue {
  return dict({ id: c.id, name: c.name, arguments: c.arguments, requestor: c.requestor });
}

export function dumpMessage(m: Tau2Message): PyValue {
  const turn = int(m.turn_idx);
  const timestamp = m.timestamp ?? null;
  switch (m.role) {
    case 'system':
      return dict({ role: m.role, content: m.content, turn_idx: turn, timestamp });
    case 'tool':
      return dict({
        id: m.id,
        role: m.role,
        content: m.content,
        requestor: m.requestor,
        error: m.error,
        turn_idx: turn,
        timestamp,
      });
    default:
      return dict({
        role: m.role,
        content: m.content,
        tool_calls: orNull(m.tool_calls, (calls) => calls.map(dumpToolCall)),
        turn_idx: turn,
        timestamp,
        cost: float(m.cost),
        usage: fromPlain(m.usage),
        raw_data: fromPlain(m.raw_data),
      });
  }
}

function dumpFunctionCall(c: EnvFunctionCall): Obj {
  return { env_type: c.env_type, func_name: c.func_name, arguments: c.arguments };
}
function dumpAssertion(a: EnvAssertion): PyValue {
  return dict({ ...dumpFunctionCall(a), assert_value: a.assert_value ?? true, message: a.message ?? null });
}
function dumpAction(a: Tau2Action): PyValue {
  return dict({
    action_id: a.action_id,
    requestor: a.requestor ?? 'assistant',
    name: a.name,
    arguments: a.arguments,
    info: a.info ?? null,
    compare_args: orNull(a.compare_args, (x) => [...x]),
  });
}

export function dumpTask(t: Tau2Task): PyValue {
  const instructions = t.user_scenario.instructions;
  const state = t.initial_state;
  const criteria = t.evaluation_criteria;
  return dict({
    id: t.id,
    description: orNull(t.description, (d) =>
      dict({
        purpose: d.purpose ?? null,
        relevant_policies: d.relevant_policies ?? null,
        notes: d.notes ?? null,
      }),
    ),
    user_scenario: dict({
      persona: t.user_scenario.persona ?? null,
      instructions:
        typeof instructions === 'string'
          ? instructions
          : dict({
              domain: instructions.domain,
              reason_for_call: instructions.reason_for_call,
              known_info: instructions.known_info ?? null,
              unknown_info: instructions.unknown_info ?? null,
              task_instructions: instructions.task_instructions,
            }),
    }),
    ticket: t.ticket ?? null,
    initial_state: orNull(state, (s) =>
      dict({
        initialization_data: orNull(s.initialization_data, (d) =>
          dict({ agent_data: d.agent_data ?? null, user_data: d.user_data ?? null }),
        ),
        initialization_actions: orNull(s.initialization_actions, (a) =>
          a.map((c) => dict(dumpFunctionCall(c))),
        ),
        message_history: orNull(s.message_history, (h) => h.map(dumpMessage)),
      }),
    ),
    evaluation_criteria: orNull(criteria, (c) =>
      dict({
        actions: orNull(c.actions, (a) => a.map(dumpAction)),
        env_assertions: orNull(c.env_assertions, (a) => a.map(dumpAssertion)),
        communicate_info: orNull(c.communicate_info, (x) => [...x]),
        nl_assertions: orNull(c.nl_assertions, (x) => [...x]),
        reward_basis: [...c.reward_basis],
      }),
    ),
  });
}

export function dumpRewardInfo(r: RewardInfo): PyValue {
  return dict({
    reward: float(r.reward),
    db_check: orNull(r.db_check, (d: DbCheck) =>
      dict({ db_match: d.db_match, db_reward: float(d.db_reward) }),
    ),
    env_assertions: orNull(r.env_assertions, (a) =>
      a.map((c) =>
        dict({ env_assertion: dumpAssertion(c.env_assertion), met: c.met, reward: float(c.reward) }),
      ),
    ),
    action_checks: orNull(r.action_checks, (a) =>
      a.map((c) =>
        dict({
          action: dumpAction(c.action),
          action_match: c.action_match,
          action_reward: float(c.action_reward),
        }),
      ),
    ),
    nl_assertions: orNull(r.nl_assertions, (a) =>
      a.map((c) => dict({ nl_assertion: c.nl_assertion, met: c.met, justification: c.justification })),
    ),
    communicate_checks: orNull(r.communicate_checks, (a) =>
      a.map((c) => dict({ info: c.info, met: c.met, justification: c.justification })),
    ),
    reward_basis: orNull(r.reward_basis, (b) => [...b]),
    reward_breakdown: orNull(
      r.reward_breakdown,
      (b) => new Map(Object.entries(b).map(([k, v]) => [k, float(v)])),
    ),
    info: fromPlain(r.info),
  });
}

export function dumpSimulation(s: Tau2SimulationRun): PyValue {
  return dict({
    id: s.id,
    task_id: s.task_id,
    timestamp: s.timestamp,
    start_time: s.start_time,
    end_time: s.end_time,
    duration: float(s.duration),
    termination_reason: s.termination_reason,
    agent_cost: float(s.agent_cost),
    user_cost: float(s.user_cost),
    reward_info: orNull(s.reward_info, dumpRewardInfo),
    messages: s.messages.map(dumpMessage),
    trial: int(s.trial),
    seed: int(s.seed),
  });
}

function dumpAgentInfo(a: Tau2AgentInfo): Obj {
  return { implementation: a.implementation, llm: a.llm, llm_args: a.llm_args };
}

/** The results file's text, as the reference's run writes it (`json.dump(..., indent=2)`). */
export function dumpResults(r: Tau2Results): string {
  const info = r.info;
  return jsonDumps(
    dict({
      timestamp: r.timestamp,
      info: dict({
        git_commit: info.git_commit,
        num_trials: int(info.num_trials),
        max_steps: int(info.max_steps),
        max_errors: int(info.max_errors),
        user_info: dict({
          ...dumpAgentInfo(info.user_info),
          global_simulation_guidelines: info.user_info.global_simulation_guidelines,
        }),
        agent_info: dict(dumpAgentInfo(info.agent_info)),
        environment_info: dict({
          domain_name: info.environment_info.domain_name,
          policy: info.environment_info.policy,
          tool_defs: info.environment_info.tool_defs,
        }),
        seed: int(info.seed),
      }),
      tasks: r.tasks.map(dumpTask),
      simulations: r.simulations.map(dumpSimulation),
    }),
    { indent: 2 },
  );
}

// ---------------------------------------------------------------------------------------------
// Verifying

/** One conversation scored again. */
export interface VerifiedSimulation {
  readonly id: string;
  readonly task_id: string;
  readonly trial: number | null;
  readonly termination_reason: TerminationReason;
  readonly reward: number;
  /** the full breakdown, as the reference's `RewardInfo` */
  readonly reward_info: RewardInfo;
  /** the reward the file recorded, null when it had none */
  readonly recorded_reward: number | null;
}

export interface VerifiedResults {
  /** the domain as the file names it (`info.environment_info.domain_name`) */
  readonly domain: string;
  readonly simulations: readonly VerifiedSimulation[];
  readonly metrics: Tau2Metrics;
  /** the file's results with every reward replaced by seal's, ready for `dumpResults` */
  readonly results: Tau2Results;
}

/** The domain a results file's domain name is scored with: telecom-workflow differs from telecom only in the policy. */
function domainFor(
  name: string,
  domains: Readonly<Partial<Record<string, Tau2Domain>>>,
): Tau2Domain | undefined {
  return domains[name] ?? (name === 'telecom-workflow' ? domains.telecom : undefined);
}

/**
 * Score every conversation of a results file with seal's evaluator (what the reference's
 * `evaluate_trajectories` does) and compute the metrics. Like the reference, a conversation the
 * evaluator cannot replay (a recorded tool result the environment does not give again, a tool
 * message out of place) fails the whole file, with an error naming the conversation.
 */
export function verifyResults(
  resultsJson: string,
  domainsByName: Readonly<Partial<Record<string, Tau2Domain>>>,
  source = 'results file',
): VerifiedResults {
  const results = parseResults(resultsJson, source);
  const name = results.info.environment_info.domain_name;
  const domain = domainFor(name, domainsByName);
  if (!domain) {
    const known = Object.keys(domainsByName).filter((k) => domainsByName[k]);
    throw new Tau2ResultsError(
      `${source}: its conversations are of the domain "${name}", which seal cannot score here (domains loaded: ${known.join(', ') || 'none'}); τ² v0.2.0 has retail, airline and telecom (pull the data with \`seal data pull tau2\`)`,
    );
  }
  if (
    results.info.agent_info.implementation === 'llm_agent_solo' &&
    results.info.user_info.implementation === 'dummy_user'
  )
    throw new Tau2ResultsError(
      `${source}: a solo-mode run (the agent used the user's tools itself); seal scores conversations with a user, not solo ones`,
    );
  const tasks = new Map(results.tasks.map((t) => [t.id, t]));
  const simulations: VerifiedSimulation[] = [];
  const rescored: Tau2SimulationRun[] = [];
  for (const sim of results.simulations) {
    const task = tasks.get(sim.task_id);
    if (!task)
      throw new Tau2ResultsError(
        `${source}: conversation ${sim.id} is of task ${JSON.stringify(sim.task_id)}, which the file's "tasks" do not hold`,
      );
    let reward: RewardInfo;
    try {
      reward = evaluateSimulation(domain, task, sim);
    } catch (e) {
      if (e instanceof Tau2ReplayError)
        throw new Tau2ReplayError(
          `${source}: conversation ${sim.id} (task ${JSON.stringify(sim.task_id)}, trial ${sim.trial ?? '?'}) cannot be replayed: ${e.message}`,
        );
      throw new Error(
        `${source}: conversation ${sim.id} (task ${JSON.stringify(sim.task_id)}): ${(e as Error).message}`,
        {
          cause: e,
        },
      );
    }
    simulations.push({
      id: sim.id,
      task_id: sim.task_id,
      trial: sim.trial,
      termination_reason: sim.termination_reason,
      reward: reward.reward,
      reward_info: reward,
      recorded_reward: sim.reward_info?.reward ?? null,
    });
    rescored.push({ ...sim, reward_info: reward });
  }
  const metrics = computeMetrics(
    rescored.map((s) => ({ task_id: s.task_id, reward: s.reward_info!.reward, agent_cost: s.agent_cost })),
    results.info.num_trials,
    results.tasks,
  );
  return { domain: name, simulations, metrics, results: { ...results, simulations: rescored } };
}
