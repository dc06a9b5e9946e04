/**
 * The agent's side of telecom (`TelecomTools`): lookups and changes on the carrier's database,
 * plus the helpers the tasks' initialisation actions and assertions call by name. Arguments
 * arrive as the model wrote them (the reference calls its methods without validating them), so
 * every comparison, sum and f-string here is Python's, on Python values.
 */
import { AttributeError_, TypeError_, ValueError_ } from '../../../py/errors.js';
import { str as pyStr } from '../../../py/format.js';
import { add, compare, contains, formatFixed, mul, sub, toFloat, truthy } from '../../../py/ops.js';
import { type PyDict, type PyKey, type PyValue, pyEquals } from '../../../py/values.js';
import type { Model } from '../../pydantic.js';
import {
  BILL_STATUS,
  type Bill,
  BillSpec,
  type Customer,
  type Device,
  LINE_STATUS,
  type Line,
  LineItemSpec,
  type Plan,
  type TelecomDb,
} from './model.js';

/** The reference's fixed "today" (`get_today`). */
export const TODAY = '2025-02-25';

/** A date text moved by whole days (UTC calendar arithmetic, no time zones). */
export function addDays(isoDate: string, days: number): string {
  const d = new Date(`${isoDate}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + days);
  return d.toISOString().slice(0, 10);
}

function firstOfMonth(isoDate: string): string {
  return `${isoDate.slice(0, 8)}01`;
}

/** `lst[:n]` with Python's slice rules (negative counts from the end; the bound must be an int). */
function sliceTo(items: readonly PyValue[], n: PyValue): PyValue[] {
  if (n === null) return [...items];
  if (typeof n === 'boolean') return items.slice(0, n ? 1 : 0);
  if (typeof n !== 'bigint')
    throw TypeError_('slice indices must be integers or None or have an __index__ method');
  const len = BigInt(items.length);
  const end = n < 0n ? (n + len < 0n ? 0n : n + len) : n > len ? len : n;
  return items.slice(0, Number(end));
}

function strMethod(v: PyValue, method: string): string {
  if (typeof v !== 'string') throw AttributeError_(v, method);
  return v;
}

export interface TelecomToolsOptions {
  /** the id of a new draft bill; the reference draws `B` + 8 hex digits of a random uuid4 */
  readonly newBillId?: () => string;
}

function randomBillId(): string {
  return `B${crypto.randomUUID().replace(/-/g, '').slice(0, 8)}`;
}

/** The methods of `TelecomTools`, on the database the toolkit holds now (`update_db` replaces it). */
export class TelecomTools {
  readonly newBillId: () => string;

  constructor(
    private readonly currentDb: () => Model<TelecomDb>,
    options: TelecomToolsOptions = {},
  ) {
    this.newBillId = options.newBillId ?? randomBillId;
  }

  get db(): Model<TelecomDb> {
    return this.currentDb();
  }

  // ---- lookups ----

  get_customer_by_phone(phone_number: PyValue): Model<Customer> {
    for (const customer of this.db.customers) {
      if (pyEquals(customer.phone_number, phone_number)) return customer;
      for (const lineId of customer.line_ids) {
        const line = this._get_line_by_id(lineId);
        if (pyEquals(line.phone_number, phone_number)) return customer;
      }
    }
    throw ValueError_(`Customer with phone number ${pyStr(phone_number)} not found`);
  }

  get_customer_by_id(customer_id: PyValue): Model<Customer> {
    for (const customer of this.db.customers)
      if (pyEquals(customer.customer_id, customer_id)) return customer;
    throw ValueError_(`Customer with ID ${pyStr(customer_id)} not found`);
  }

  get_customer_by_name(full_name: PyValue, dob: PyValue): Model<Customer>[] {
    const out: Model<Customer>[] = [];
    for (const customer of this.db.customers) {
      const mine = customer.full_name.toLowerCase();
      if (mine === strMethod(full_name, 'lower').toLowerCase() && pyEquals(customer.date_of_birth, dob))
        out.push(customer);
    }
    return out;
  }

  _get_line_by_phone(phone_number: PyValue): Model<Line> {
    for (const line of this.db.lines) if (pyEquals(line.phone_number, phone_number)) return line;
    throw ValueError_(`Line with phone number ${pyStr(phone_number)} not found`);
  }

  _get_line_by_id(line_id: PyValue): Model<Line> {
    for (const line of this.db.lines) if (pyEquals(line.line_id, line_id)) return line;
    throw ValueError_(`Line with ID ${pyStr(line_id)} not found`);
  }

  _get_plan_by_id(plan_id: PyValue): Model<Plan> {
    for (const plan of this.db.plans) if (pyEquals(plan.plan_id, plan_id)) return plan;
    throw ValueError_(`Plan with ID ${pyStr(plan_id)} not found`);
  }

  _get_device_by_id(device_id: PyValue): Model<Device> {
    for (const device of this.db.devices) if (pyEquals(device.device_id, device_id)) return device;
    throw ValueError_(`Device with ID ${pyStr(device_id)} not found`);
  }

  _get_bill_by_id(bill_id: PyValue): Model<Bill> {
    for (const bill of this.db.bills) if (pyEquals(bill.bill_id, bill_id)) return bill;
    throw ValueError_(`Bill with ID ${pyStr(bill_id)} not found`);
  }

  _get_target_line(customer_id: PyValue, line_id: PyValue): Model<Line> {
    const customer = this.get_customer_by_id(customer_id);
    if (!contains(customer.line_ids, line_id))
      throw ValueError_(`Line ${pyStr(line_id)} not found for customer ${pyStr(customer_id)}`);
    return this._get_line_by_id(line_id);
  }

  get_available_plan_ids(): PyValue[] {
    return this.db.plans.map((p) => p.plan_id);
  }

  get_details_by_id(id: PyValue): PyValue {
    const s = strMethod(id, 'startswith');
    if (s.startsWith('L')) return this._get_line_by_id(id);
    if (s.startsWith('D')) return this._get_device_by_id(id);
    if (s.startsWith('B')) return this._get_bill_by_id(id);
    if (s.startsWith('C')) return this.get_customer_by_id(id);
    if (s.startsWith('P')) return this._get_plan_by_id(id);
    throw ValueError_(`Unknown ID format or type: ${s}`);
  }

  // ---- line changes ----

  suspend_line(customer_id: PyValue, line_id: PyValue, _reason: PyValue): PyDict {
    const line = this._get_target_line(customer_id, line_id);
    if (line.status !== LINE_STATUS.ACTIVE) throw ValueError_('Line must be active to suspend');
    line.status = LINE_STATUS.SUSPENDED;
    line.suspension_start_date = TODAY;
    return new Map<PyKey, PyValue>([
      ['message', 'Line suspended successfully. $5/month holding fee will apply.'],
      ['line', line],
    ]);
  }

  resume_line(customer_id: PyValue, line_id: PyValue): PyDict {
    const line = this._get_target_line(customer_id, line_id);
    const status = line.status;
    if (status !== LINE_STATUS.SUSPENDED && status !== LINE_STATUS.PENDING)
      throw ValueError_('Line must be suspended to resume');
    line.status = LINE_STATUS.ACTIVE;
    line.suspension_start_date = null;
    return new Map<PyKey, PyValue>([
      ['message', 'Line resumed successfully'],
      ['line', line],
    ]);
  }

  // ---- bills ----

  get_bills_for_customer(customer_id: PyValue, limit: PyValue = 12n): PyValue[] {
    const customer = this.get_customer_by_id(customer_id);
    const bills = customer.bill_ids.map((id) => this._get_bill_by_id(id));
    // sorted(..., reverse=True) keeps equal keys in their original order, as a stable descending sort does
    const sorted = [...bills].sort((a, b) =>
      compare('<', b.issue_date, a.issue_date) ? -1 : compare('<', a.issue_date, b.issue_date) ? 1 : 0,
    );
    return sliceTo(sorted, limit);
  }

  send_payment_request(customer_id: PyValue, bill_id: PyValue): string {
    const customer = this.get_customer_by_id(customer_id);
    if (this._get_bills_awaiting_payment(customer).length !== 0)
      throw ValueError_('A bill is already awaiting payment for this customer');
    if (!contains(customer.bill_ids, bill_id))
      throw ValueError_(`Bill ${pyStr(bill_id)} not found for customer ${pyStr(customer_id)}`);
    const bill = this._get_bill_by_id(bill_id);
    bill.status = BILL_STATUS.AWAITING_PAYMENT;
    return `Payment request sent to the customer for bill ${pyStr(bill.bill_id)}`;
  }

  _get_bills_awaiting_payment(customer: Model<Customer>): Model<Bill>[] {
    return customer.bill_ids
      .map((id) => this._get_bill_by_id(id))
      .filter((bill) => bill.status === BILL_STATUS.AWAITING_PAYMENT);
  }

  _set_bill_to_paid(bill_id: PyValue): string {
    this._get_bill_by_id(bill_id).status = BILL_STATUS.PAID;
    return `Bill ${pyStr(bill_id)} set to paid`;
  }

  _apply_one_time_charge(customer_id: PyValue, amount: PyValue, description: PyValue): void {
    const customer = this.get_customer_by_id(customer_id);
    let draft: Model<Bill> | undefined;
    for (const id of customer.bill_ids) {
      const bill = this._get_bill_by_id(id);
      if (bill.status === BILL_STATUS.DRAFT) {
        draft = bill;
        break;
      }
    }
    if (!draft) {
      const nextMonth = firstOfMonth(addDays(firstOfMonth(TODAY), 32));
      const monthAfter = firstOfMonth(addDays(nextMonth, 32));
      const id = this.newBillId();
      draft = BillSpec.parse(
        new Map<PyKey, PyValue>([
          ['bill_id', id],
          ['customer_id', customer_id],
          ['period_start', nextMonth],
          ['period_end', addDays(monthAfter, -1)],
          ['issue_date', nextMonth],
          ['total_due', 0n],
          ['due_date', addDays(nextMonth, 14)],
          ['status', BILL_STATUS.DRAFT],
        ]),
      );
      this.db.bills.push(draft);
      customer.bill_ids.push(id);
    }
    const item = LineItemSpec.parse(
      new Map<PyKey, PyValue>([
        ['description', description],
        ['amount', amount],
        ['date', TODAY],
        ['item_type', compare('<', amount, 0n) ? 'Credit' : 'Charge'],
      ]),
    );
    draft.line_items.push(item);
    draft.total_due = add(draft.total_due, amount);
  }

  // ---- usage and roaming ----

  get_data_usage(customer_id: PyValue, line_id: PyValue): PyDict {
    const line = this._get_target_line(customer_id, line_id);
    const plan = this._get_plan_by_id(line.plan_id);
    const cycleEnd = addDays(firstOfMonth(addDays(firstOfMonth(TODAY), 32)), -1);
    return new Map<PyKey, PyValue>([
      ['line_id', line_id],
      ['data_used_gb', line.data_used_gb],
      ['data_limit_gb', plan.data_limit_gb],
      ['data_refueling_gb', line.data_refueling_gb],
      ['cycle_end_date', cycleEnd],
    ]);
  }

  set_data_usage(customer_id: PyValue, line_id: PyValue, data_used_gb: PyValue): string {
    const line = this._get_target_line(customer_id, line_id);
    line.data_used_gb = data_used_gb;
    return `Data usage set to ${pyStr(data_used_gb)} GB for line ${pyStr(line_id)}`;
  }

  enable_roaming(customer_id: PyValue, line_id: PyValue): string {
    const line = this._get_target_line(customer_id, line_id);
    if (truthy(line.roaming_enabled)) return 'Roaming was already enabled';
    line.roaming_enabled = true;
    return 'Roaming enabled successfully';
  }

  disable_roaming(customer_id: PyValue, line_id: PyValue): string {
    const line = this._get_target_line(customer_id, line_id);
    if (!truthy(line.roaming_enabled)) return 'Roaming was already disabled';
    line.roaming_enabled = false;
    return 'Roaming disabled successfully';
  }

  transfer_to_human_agents(_summary: PyValue): string {
    return 'Transfer successful';
  }

  refuel_data(customer_id: PyValue, line_id: PyValue, gb_amount: PyValue): PyDict {
    const line = this._get_target_line(customer_id, line_id);
    if (compare('<=', gb_amount, 0n)) throw ValueError_('Refuel amount must be positive');
    const plan = this._get_plan_by_id(line.plan_id);
    const price = plan.data_refueling_price_per_gb;
    const charge = mul(gb_amount, price);
    line.data_refueling_gb = add(line.data_refueling_gb, gb_amount);
    this._apply_one_time_charge(
      customer_id,
      charge,
      `Data refueling: ${pyStr(gb_amount)} GB at $${pyStr(price)}/GB`,
    );
    return new Map<PyKey, PyValue>([
      [
        'message',
        `Successfully added ${pyStr(gb_amount)} GB of data for line ${pyStr(line_id)} for $${formatFixed(toFloat(charge), 2)}`,
      ],
      ['new_data_refueling_gb', line.data_refueling_gb],
      ['charge', charge],
    ]);
  }

  // ---- the tasks' scenario helpers ----

  suspend_line_for_overdue_bill(
    customer_id: PyValue,
    line_id: PyValue,
    new_bill_id: PyValue,
    contract_ended: PyValue,
  ): string {
    const line = this._get_line_by_id(line_id);
    if (line.status !== LINE_STATUS.ACTIVE)
      throw ValueError_('Line must be active to suspend for unpaid bill');
    const plan = this._get_plan_by_id(line.plan_id);
    const amount = plan.price_per_month;
    const description = `Charge for line ${pyStr(line.line_id)}`;
    if (compare('<=', amount, 0n)) throw ValueError_('Amount must be positive for overdue bill');
    const customer = this.get_customer_by_id(customer_id);
    for (const id of customer.bill_ids)
      if (this._get_bill_by_id(id).status === BILL_STATUS.OVERDUE)
        throw ValueError_('Customer already has an overdue bill');
    const lastOfLastMonth = addDays(firstOfMonth(TODAY), -1);
    const firstOfLastMonth = firstOfMonth(lastOfLastMonth);
    const bill = BillSpec.parse(
      new Map<PyKey, PyValue>([
        ['bill_id', new_bill_id],
        ['customer_id', customer_id],
        ['period_start', firstOfLastMonth],
        ['period_end', lastOfLastMonth],
        ['issue_date', firstOfLastMonth],
        ['total_due', 0n],
        ['due_date', addDays(firstOfLastMonth, 14)],
        ['status', BILL_STATUS.OVERDUE],
      ]),
    );
    const item = LineItemSpec.parse(
      new Map<PyKey, PyValue>([
        ['description', description],
        ['amount', amount],
        ['date', TODAY],
        ['item_type', compare('>', amount, 0n) ? 'Charge' : 'Credit'],
      ]),
    );
    bill.line_items.push(item);
    bill.total_due = add(bill.total_due, amount);
    this.db.bills.push(bill);
    customer.bill_ids.push(new_bill_id);
    line.status = LINE_STATUS.SUSPENDED;
    line.suspension_start_date = TODAY;
    if (truthy(contract_ended)) line.contract_end_date = lastOfLastMonth;
    return `Line ${pyStr(line_id)} suspended for unpaid bill ${pyStr(new_bill_id)}. Contract ended: ${pyStr(contract_ended)}`;
  }

  assert_data_refueling_amount(customer_id: PyValue, line_id: PyValue, expected_amount: PyValue): boolean {
    const line = this._get_target_line(customer_id, line_id);
    return Math.abs(toFloat(sub(line.data_refueling_gb, expected_amount))) < 1e-6;
  }

  assert_line_status(customer_id: PyValue, line_id: PyValue, expected_status: PyValue): boolean {
    return pyEquals(this._get_target_line(customer_id, line_id).status, expected_status);
  }

  assert_overdue_bill_exists(customer_id: PyValue, overdue_bill_id: PyValue): boolean {
    const customer = this.get_customer_by_id(customer_id);
    if (!contains(customer.bill_ids, overdue_bill_id))
      throw ValueError_(`Overdue bill ${pyStr(overdue_bill_id)} not found`);
    if (this._get_bill_by_id(overdue_bill_id).status !== BILL_STATUS.OVERDUE)
      throw ValueError_(`Overdue bill ${pyStr(overdue_bill_id)} is not overdue`);
    return true;
  }

  assert_no_overdue_bill(overdue_bill_id: PyValue): boolean {
    for (const bill of this.db.bills)
      if (pyEquals(bill.bill_id, overdue_bill_id)) return bill.status === BILL_STATUS.PAID;
    return true;
  }
}
