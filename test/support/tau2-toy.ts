/**
 * A tiny τ² domain that keeps the `Tau2Domain` contract, for the evaluator's tests: a bank of
 * accounts (agent: one read tool, one write tool) and a phone (user: one write tool), helper
 * functions for initialisation and assertions, and an optional sync that copies a fact of the agent's
 * database into the user's (as telecom's sync does). Conversations are recorded by running their
 * calls on a live environment, so the recorded results are the ones a replay gives.
 */
import { jsonDumps } from '../../src/envs/py/format.js';
import { parsePyJson } from '../../src/envs/py/json.js';
import { deepCopy, isDict, type PyDict, type PyValue } from '../../src/envs/py/values.js';
import { parseTau2Tasks } from '../../src/envs/tau2/tasks.js';
import type {
  EnvFunctionCall,
  Requestor,
  Tau2Domain,
  Tau2Environment,
  Tau2Message,
  Tau2Task,
  Tau2ToolCall,
  Tau2ToolSchema,
  ToolKind,
  ToolResponse,
} from '../../src/envs/tau2/types.js';

/** A Python dict from JSON text (json.loads semantics: `10.0` is a float). */
export const py = (json: string): PyDict => parsePyJson(json) as PyDict;

function merge(into: PyDict, data: PyDict): void {
  for (const [k, v] of data) {
    const old = into.get(k);
    if (isDict(old) && isDict(v)) merge(old, v);
    else into.set(k, deepCopy(v));
  }
}

const schema = (name: string): Tau2ToolSchema => ({
  type: 'function',
  function: { name, description: name, parameters: { type: 'object', properties: {} } },
});

class ToyEnvironment implements Tau2Environment {
  readonly domain = 'retail' as const;
  readonly policy = 'Be a good bank.';
  readonly bank = py('{"accounts": {"A": {"balance": 100}, "B": {"balance": 5}}}');
  readonly phone = py('{"on": false, "rich": false}');

  constructor(readonly syncs: boolean) {}

  agentTools(): readonly Tau2ToolSchema[] {
    return [schema('get_balance'), schema('deposit')];
  }
  userTools(): readonly Tau2ToolSchema[] {
    return [schema('toggle_phone')];
  }
  toolKind(requestor: Requestor, name: string): ToolKind | undefined {
    if (requestor === 'assistant')
      return name === 'get_balance' ? 'read' : name === 'deposit' ? 'write' : undefined;
    return name === 'toggle_phone' ? 'write' : undefined;
  }

  private account(id: PyValue | undefined): PyDict {
    const a = (this.bank.get('accounts') as PyDict).get(id as string);
    if (!isDict(a)) throw new Error(`Account ${String(id)} not found`);
    return a;
  }

  makeToolCall(call: Tau2ToolCall): PyValue {
    const args = call.arguments;
    const key = `${call.requestor}:${call.name}`;
    switch (key) {
      case 'assistant:get_balance':
        return new Map([
          ['account_id', args.get('account_id') ?? null],
          ['balance', this.account(args.get('account_id')).get('balance')!],
        ]);
      case 'assistant:deposit': {
        const a = this.account(args.get('account_id'));
        const amount = args.get('amount');
        if (typeof amount !== 'bigint' && typeof amount !== 'number')
          throw new Error('amount must be a number');
        const before = a.get('balance') as bigint | number;
        const after =
          typeof before === 'bigint' && typeof amount === 'bigint'
            ? before + amount
            : Number(before) + Number(amount);
        a.set('balance', after);
        return new Map<string, PyValue>([
          ['account_id', args.get('account_id')!],
          ['balance', after],
        ]);
      }
      case 'user:toggle_phone':
        this.phone.set('on', !this.phone.get('on'));
        return this.phone.get('on') ? 'The phone is on.' : 'The phone is off.';
      default:
        throw new Error(`Tool '${call.name}' not found.`);
    }
  }

  respond(call: Tau2ToolCall): ToolResponse {
    try {
      const result = this.makeToolCall(call);
      this.syncTools();
      return { content: typeof result === 'string' ? result : jsonDumps(result), error: false };
    } catch (e) {
      return { content: `Error: ${(e as Error).message}`, error: true };
    }
  }

  updateDb(side: Requestor, data: PyDict): void {
    merge(side === 'assistant' ? this.bank : this.phone, data);
  }

  runFunction(call: EnvFunctionCall): PyValue {
    const args = call.arguments;
    let result: PyValue;
    switch (`${call.env_type}:${call.func_name}`) {
      case 'assistant:set_balance':
        this.account(args.get('account_id')).set('balance', args.get('balance')!);
        result = null;
        break;
      case 'assistant:assert_balance':
        // biome-ignore lint/suspicious/noDoubleEquals: Python == between int and float
        result = this.account(args.get('account_id')).get('balance') == args.get('expected');
        break;
      case 'user:assert_phone_on':
        result = this.phone.get('on') === true;
        break;
      case 'user:phone_count':
        result = 1n;
        break;
      default:
        throw new Error(`'${call.env_type}' toolkit has no function ${call.func_name}`);
    }
    this.syncTools();
    return result;
  }

  syncTools(): void {
    if (!this.syncs) return;
    const balance = Number(this.account('A').get('balance'));
    this.phone.set('rich', balance >= 1150);
  }

  dbText(side: Requestor): string | null {
    return jsonDumps(side === 'assistant' ? this.bank : this.phone, { sortKeys: true });
  }
}

export function toyDomain(options: { syncs?: boolean; tasks?: Tau2Task[] } = {}): Tau2Domain {
  return {
    name: 'retail',
    tasks: options.tasks ?? [],
    makeEnvironment: () => new ToyEnvironment(options.syncs ?? false),
  };
}

/** One turn of a scripted conversation: a text, or tool calls (each `[name, argsJson, requestor?]`). */
export type Turn =
  | { readonly say: string; readonly role?: 'assistant' | 'user' }
  | {
      readonly calls: readonly (readonly [string, string, Requestor?])[];
      readonly role?: 'assistant' | 'user';
    };

/**
 * Play the turns on a live environment set up from the task's initial state, recording every
 * result as the orchestrator would.
 */
export function record(domain: Tau2Domain, task: Tau2Task, turns: readonly Turn[]): Tau2Message[] {
  const env = domain.makeEnvironment();
  const init = task.initial_state;
  if (init?.initialization_data?.agent_data) env.updateDb('assistant', init.initialization_data.agent_data);
  if (init?.initialization_data?.user_data) env.updateDb('user', init.initialization_data.user_data);
  for (const a of init?.initialization_actions ?? []) env.runFunction(a);
  const messages: Tau2Message[] = [
    { role: 'user', content: 'Hi, I need help with my account.', tool_calls: null },
  ];
  let n = 0;
  for (const turn of turns) {
    const role = turn.role ?? 'assistant';
    if ('say' in turn) {
      messages.push({ role, content: turn.say, tool_calls: null });
      continue;
    }
    const calls: Tau2ToolCall[] = turn.calls.map(([name, args, requestor]) => ({
      id: `call_${n++}`,
      name,
      arguments: py(args),
      requestor: requestor ?? role,
    }));
    messages.push({ role, content: null, tool_calls: calls });
    for (const call of calls) {
      const r = env.respond(call);
      messages.push({
        role: 'tool',
        id: call.id,
        content: r.content,
        requestor: call.requestor,
        error: r.error,
      });
    }
  }
  return messages;
}

/** A toy task read as tasks.json is read: criteria and initial state as JSON text. */
export function toyTask(id: string, criteria: string, initialState = 'null'): Tau2Task {
  const text = `[{"id": ${JSON.stringify(id)}, "user_scenario": {"instructions": "You want to deposit money."}, "initial_state": ${initialState}, "evaluation_criteria": ${criteria}}]`;
  return parseTau2Tasks(text, `task ${id}`)[0]!;
}
