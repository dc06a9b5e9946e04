/**
 * Telecom as a τ² domain: the carrier's toolkit for the agent, the phone's toolkit for the user,
 * and `sync_tools`, which after every call carries the state of the user's line (active, roaming
 * allowed, data allowance used up, a payment request sent or paid) across to the phone.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { UserError } from '../../../../util/errors.js';
import { add, compare, truthy } from '../../../py/ops.js';
import type { PyValue } from '../../../py/values.js';
import { any, deepClone, type FieldSpec, float, int, type Model, str } from '../../pydantic.js';
import { domainDir, loadTau2Tasks, parseTau2Tasks } from '../../tasks.js';
import { type Args, type FunctionSpec, Toolkit, ToolkitEnvironment, type ToolSpec } from '../../toolkit.js';
import type { Tau2Domain, Tau2DomainLoader, Tau2Task, ToolDocs } from '../../types.js';
import { TelecomTools, type TelecomToolsOptions } from './agent-tools.js';
import {
  apnParam,
  LINE_STATUS,
  modeParam,
  parseTomlPy,
  type TelecomDb,
  TelecomDbSpec,
  type TelecomUserDb,
  TelecomUserDbSpec,
} from './model.js';
import { AGENT_FUNCTIONS, type FunctionSig, type ParamType, USER_FUNCTIONS } from './signatures.js';
import { TelecomUserTools } from './user-tools.js';

const PARAM_TYPES: Readonly<Record<ParamType, FieldSpec['type']>> = {
  string: str,
  integer: int,
  number: float,
  mode: modeParam,
  apn: apnParam,
  any,
};

type Kit<Db> = Toolkit<Model<Db>>;

/** The toolkit's specs for a signature table, each running the method of that name on `impl()`. */
function specs<Db>(
  table: readonly FunctionSig[],
  impl: () => object,
): { tools: ToolSpec<Kit<Db>>[]; helpers: FunctionSpec<Kit<Db>>[] } {
  const tools: ToolSpec<Kit<Db>>[] = [];
  const helpers: FunctionSpec<Kit<Db>>[] = [];
  for (const sig of table) {
    const params: FieldSpec[] = sig.params.map((p) =>
      'default' in p
        ? { name: p.name, type: PARAM_TYPES[p.type], default: { value: p.default! } }
        : { name: p.name, type: PARAM_TYPES[p.type] },
    );
    const run = (_kit: Kit<Db>, args: Args): PyValue => {
      const method = (impl() as Record<string, (...a: PyValue[]) => PyValue>)[sig.name]!;
      return method.apply(
        impl(),
        sig.params.map((p) => args.get(p.name)!),
      );
    };
    if (sig.kind) tools.push({ name: sig.name, params, kind: sig.kind, run });
    else helpers.push({ name: sig.name, params, run });
  }
  return { tools, helpers };
}

export interface TelecomEnvironmentOptions extends TelecomToolsOptions {
  readonly policy: string;
  readonly db: Model<TelecomDb>;
  readonly userDb: Model<TelecomUserDb>;
  readonly docs: ToolDocs;
}

/** A telecom environment on the given databases (`get_environment` of the reference). */
export function makeTelecomEnvironment(o: TelecomEnvironmentOptions): ToolkitEnvironment {
  let agent: TelecomTools | undefined;
  let user: TelecomUserTools | undefined;
  const agentSpecs = specs<TelecomDb>(AGENT_FUNCTIONS, () => agent!);
  const userSpecs = specs<TelecomUserDb>(USER_FUNCTIONS, () => user!);
  const agentKit: Kit<TelecomDb> = new Toolkit({
    className: 'TelecomTools',
    dbModel: TelecomDbSpec,
    db: o.db,
    ...agentSpecs,
    docs: o.docs,
  });
  const userKit: Kit<TelecomUserDb> = new Toolkit({
    className: 'TelecomUserTools',
    dbModel: TelecomUserDbSpec,
    db: o.userDb,
    ...userSpecs,
    docs: o.docs,
  });
  agent = new TelecomTools(() => agentKit.db, o);
  user = new TelecomUserTools(() => userKit.db);
  const a = agent;
  const u = user;
  return new ToolkitEnvironment({
    domain: 'telecom',
    policy: o.policy,
    tools: agentKit,
    userTools: userKit,
    sync: () => syncTelecom(a, u),
  });
}

/** `TelecomEnvironment.sync_tools` */
export function syncTelecom(agent: TelecomTools, user: TelecomUserTools): void {
  const around = user.surroundings;
  const phone = around.phone_number;
  if (phone === null) return;
  const line = agent._get_line_by_phone(phone);
  around.line_active = line.status === LINE_STATUS.ACTIVE;
  around.roaming_allowed = truthy(line.roaming_enabled);
  const plan = agent._get_plan_by_id(line.plan_id);
  around.mobile_data_usage_exceeded = compare(
    '>=',
    line.data_used_gb,
    add(plan.data_limit_gb, line.data_refueling_gb),
  );
  const request = around.payment_request;
  if (request !== null && truthy(request.paid)) {
    agent._set_bill_to_paid(request.bill_id);
    around.payment_request = null;
  }
  if (around.payment_request === null) {
    const customer = agent.get_customer_by_phone(phone);
    const bill = agent._get_bills_awaiting_payment(customer)[0];
    if (bill) user.placePaymentRequest(bill.bill_id, bill.total_due);
  }
}

/** The agent's policy as the reference assembles it: the main policy, then the tech support manual. */
export function telecomPolicy(mainPolicy: string, techSupport: string): string {
  return `<main_policy>\n${mainPolicy}\n</main_policy>\n<tech_support_policy>\n${techSupport}\n</tech_support_policy>`;
}

const FILES = ['db.toml', 'user_db.toml', 'main_policy.md', 'tech_support_manual.md', 'tasks.json'] as const;

function readDomainFile(dir: string, name: string): string {
  const path = join(dir, name);
  if (!existsSync(path))
    throw new UserError(
      `telecom's ${name} is missing at ${path}; run \`seal data pull tau2\` or pass the folder that holds data/tau2`,
    );
  // Python reads text files with universal newlines
  return readFileSync(path, 'utf8').replace(/\r\n?/g, '\n');
}

/** telecom's smaller task set (`tasks_small.json`), which the reference ships beside the full one. */
export function loadTelecomSmallTasks(root: string): Tau2Task[] {
  const dir = domainDir(root, 'telecom');
  return parseTau2Tasks(readDomainFile(dir, 'tasks_small.json'), join(dir, 'tasks_small.json'));
}

export interface TelecomLoadOptions extends TelecomToolsOptions {}

/** The telecom domain of a data root; each environment starts from the files' databases. */
export function loadTelecom(root: string, docs: ToolDocs, options: TelecomLoadOptions = {}): Tau2Domain {
  const dir = domainDir(root, 'telecom');
  const [db, userDb, main, manual] = FILES.slice(0, 4).map((f) => readDomainFile(dir, f)) as [
    string,
    string,
    string,
    string,
  ];
  const template = TelecomDbSpec.parse(parseTomlPy(db));
  const userTemplate = TelecomUserDbSpec.parse(parseTomlPy(userDb));
  const policy = telecomPolicy(main, manual);
  const tasks = loadTau2Tasks(root, 'telecom');
  return {
    name: 'telecom',
    tasks,
    makeEnvironment: () =>
      makeTelecomEnvironment({
        ...options,
        policy,
        db: deepClone(template),
        userDb: deepClone(userTemplate),
        docs,
      }),
  };
}

export const loadTelecomDomain: Tau2DomainLoader = (root, docs) => loadTelecom(root, docs);
