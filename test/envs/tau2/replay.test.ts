/**
 * Every task's gold actions replayed through a fresh environment after the task's initial state:
 * each call returns without error, and the database text changes exactly when a write tool ran.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadAirlineDomain } from '../../../src/envs/tau2/domains/airline/index.js';
import { loadRetailDomain } from '../../../src/envs/tau2/domains/retail/index.js';
import { NO_TOOL_DOCS } from '../../../src/envs/tau2/tool-docs.js';
import type { Tau2Domain, Tau2Environment, Tau2Task } from '../../../src/envs/tau2/types.js';
import { HAS_TAU2, noteMissingTau2, TAU2_ROOT } from '../../support/tau2-data.js';

noteMissingTau2('tau2 replay');

function applyInitialState(env: Tau2Environment, task: Tau2Task): void {
  const init = task.initial_state;
  if (!init) return;
  if (init.initialization_data?.agent_data) env.updateDb('assistant', init.initialization_data.agent_data);
  if (init.initialization_data?.user_data) env.updateDb('user', init.initialization_data.user_data);
  for (const action of init.initialization_actions ?? []) env.runFunction(action);
}

/**
 * The gold calls that fail in the reference too, each checked against db.json by hand: a product
 * id from the docstring's example, e-mails, names and order ids the user misremembers, a refund to
 * a payment method that is neither the original nor a gift card, an exchange of a pending order,
 * a gift card of 17.0 short of the difference.
 */
const EXPECTED_ERRORS: Record<string, Record<string, string[]>> = {
  retail: {
    '2': ['get_product_details: Error: Product not found'],
    '3': ['get_product_details: Error: Product not found'],
    '4': ['get_product_details: Error: Product not found'],
    '12': ['return_delivered_order_items: Error: Payment method should be the original payment method'],
    '13': ['return_delivered_order_items: Error: Payment method should be the original payment method'],
    '21': Array(3).fill('get_product_details: Error: Product not found'),
    '35': ['find_user_id_by_email: Error: User not found'],
    '37': ['find_user_id_by_email: Error: User not found'],
    '38': ['find_user_id_by_email: Error: User not found'],
    '39': ['find_user_id_by_name_zip: Error: User not found'],
    '46': Array(2).fill('get_order_details: Error: Order not found'),
    '47': Array(2).fill('get_order_details: Error: Order not found'),
    '54': ['find_user_id_by_email: Error: User not found'],
    '55': ['find_user_id_by_email: Error: User not found'],
    '64': ['exchange_delivered_order_items: Error: Non-delivered order cannot be exchanged'],
    '67': Array(2).fill('find_user_id_by_name_zip: Error: User not found'),
    '68': ['find_user_id_by_name_zip: Error: User not found'],
    '105': [
      'exchange_delivered_order_items: Error: Insufficient gift card balance to pay for the price difference',
    ],
  },
  airline: {},
};

function replay(domain: Tau2Domain, task: Tau2Task, fresh: string | null) {
  const env = domain.makeEnvironment();
  applyInitialState(env, task);
  // the databases are megabytes: a task without an initial state starts from the fresh text
  const before = task.initial_state ? env.dbText('assistant') : fresh;
  const errors: string[] = [];
  let wrote = false;
  for (const a of task.evaluation_criteria?.actions ?? []) {
    if (a.requestor !== 'assistant') continue;
    const r = env.respond({ id: a.action_id, name: a.name, arguments: a.arguments, requestor: 'assistant' });
    if (r.error) errors.push(`${a.name}: ${r.content}`);
    else if (env.toolKind('assistant', a.name) === 'write') wrote = true;
  }
  return { errors, wrote, changed: env.dbText('assistant') !== before };
}

describe.skipIf(!HAS_TAU2).each([
  ['retail', loadRetailDomain, 114],
  ['airline', loadAirlineDomain, 50],
] as const)('tau2 %s: gold actions replay', (name, load, count) => {
  it('runs every task with the errors the reference gives and changes the database exactly when a write ran', () => {
    const domain = load(TAU2_ROOT, NO_TOOL_DOCS);
    expect(domain.tasks).toHaveLength(count);
    const first = domain.makeEnvironment();
    expect(first.policy).toBe(
      readFileSync(join(TAU2_ROOT, 'data', 'tau2', 'domains', name, 'policy.md'), 'utf8'),
    );
    const fresh = first.dbText('assistant');
    const problems: string[] = [];
    for (const task of domain.tasks) {
      const r = replay(domain, task, fresh);
      const expected = EXPECTED_ERRORS[name]![task.id] ?? [];
      if (r.errors.join('\n') !== expected.join('\n')) problems.push(`${task.id}: ${r.errors.join('; ')}`);
      if (r.changed !== r.wrote) problems.push(`${task.id}: wrote=${r.wrote} changed=${r.changed}`);
    }
    expect(problems).toEqual([]);
  }, 300_000);
});
