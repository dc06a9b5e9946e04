/**
 * Telecom's two databases as τ²-bench v0.2.0 declares them: the carrier's records (plans,
 * customers, lines, bills, devices) and the user's phone with its surroundings. Enums hold their
 * string values; dates and datetimes hold the text `str()` gives them (`2025-02-25`,
 * `2025-01-20 14:30:00`), which is exactly what the reference's `json.dumps(..., default=str)`
 * writes for them, and ISO texts of one kind sort as the dates do.
 */
import { parse as parseToml } from 'smol-toml';
import type { PyDict, PyKey, PyValue } from '../../../py/values.js';
import {
  any,
  anyDict,
  bool,
  date,
  datetime,
  dict,
  enumOf,
  field,
  float,
  int,
  list,
  type Model,
  model,
  optional,
  type PyType,
  str,
  union,
} from '../../pydantic.js';

// ---- the carrier's database (TelecomDB) ----

export const LINE_STATUS = {
  ACTIVE: 'Active',
  SUSPENDED: 'Suspended',
  PENDING: 'Pending Activation',
} as const;
export const BILL_STATUS = {
  DRAFT: 'Draft',
  AWAITING_PAYMENT: 'Awaiting Payment',
  PAID: 'Paid',
  OVERDUE: 'Overdue',
} as const;

/** Fields tools assign without validation hold whatever Python value they were given. */
export interface Plan {
  plan_id: string;
  name: string;
  data_limit_gb: PyValue;
  price_per_month: PyValue;
  data_refueling_price_per_gb: PyValue;
}
export interface Line {
  line_id: string;
  phone_number: string;
  status: string;
  plan_id: string;
  device_id: string | null;
  data_used_gb: PyValue;
  data_refueling_gb: PyValue;
  roaming_enabled: PyValue;
  contract_end_date: string | null;
  last_plan_change_date: string | null;
  last_sim_replacement_date: string | null;
  suspension_start_date: string | null;
}
export interface LineItem {
  description: string;
  amount: PyValue;
  date: string;
  item_type: string;
}
export interface Bill {
  bill_id: string;
  customer_id: string;
  period_start: string;
  period_end: string;
  issue_date: string;
  total_due: PyValue;
  due_date: string;
  line_items: Model<LineItem>[];
  status: string;
}
export interface Customer {
  customer_id: string;
  full_name: string;
  date_of_birth: string;
  email: string;
  phone_number: string;
  line_ids: PyValue[];
  bill_ids: PyValue[];
}
export interface Device {
  device_id: string;
}
export interface TelecomDb {
  plans: Model<Plan>[];
  customers: Model<Customer>[];
  lines: Model<Line>[];
  bills: Model<Bill>[];
  devices: Model<Device>[];
}

const AddressSpec = model(
  'Address',
  [field('street', str), field('city', str), field('state', str), field('zip_code', str)],
  true,
);
const PlanSpec = model<Plan>(
  'Plan',
  [
    field('plan_id', str),
    field('name', str),
    field('data_limit_gb', float),
    field('price_per_month', float),
    field('data_refueling_price_per_gb', float),
  ],
  true,
);
const DeviceSpec = model<Device>(
  'Device',
  [
    field('device_id', str),
    field('device_type', enumOf('DeviceType', ['phone', 'router', 'tablet', 'watch', 'other'])),
    field('model', str),
    field('imei', optional(str), null),
    field('is_esim_capable', bool),
    field('activated', bool, false),
    field('activation_date', optional(datetime), null),
    field('last_esim_transfer_date', optional(datetime), null),
  ],
  true,
);
export const LineSpec = model<Line>(
  'Line',
  [
    field('line_id', str),
    field('phone_number', str),
    field(
      'status',
      enumOf('LineStatus', ['Active', 'Suspended', 'Pending Activation', 'Closed']),
      'Pending Activation',
    ),
    field('plan_id', str),
    field('device_id', optional(str), null),
    field('data_used_gb', float, 0.0),
    field('data_refueling_gb', float, 0.0),
    field('roaming_enabled', bool, false),
    field('contract_end_date', optional(date), null),
    field('last_plan_change_date', optional(date), null),
    field('last_sim_replacement_date', optional(date), null),
    field('suspension_start_date', optional(date), null),
  ],
  true,
);
export const LineItemSpec = model<LineItem>(
  'LineItem',
  [field('description', str), field('amount', float), field('date', date), field('item_type', str)],
  true,
);
export const BillSpec = model<Bill>(
  'Bill',
  [
    field('bill_id', str),
    field('customer_id', str),
    field('period_start', date),
    field('period_end', date),
    field('issue_date', date),
    field('total_due', float),
    field('due_date', date),
    field('line_items', list(LineItemSpec), []),
    field(
      'status',
      enumOf('BillStatus', ['Draft', 'Issued', 'Awaiting Payment', 'Paid', 'Overdue', 'Disputed']),
      'Draft',
    ),
  ],
  true,
);
const PaymentMethodSpec = model(
  'PaymentMethod',
  [
    field('method_type', enumOf('PaymentMethodType', ['Credit Card', 'Debit Card', 'PayPal'])),
    field('account_number_last_4', str),
    field('expiration_date', str),
  ],
  true,
);
const CustomerSpec = model<Customer>(
  'Customer',
  [
    field('customer_id', str),
    field('full_name', str),
    field('date_of_birth', str),
    field('email', str),
    field('phone_number', str),
    field('address', AddressSpec),
    field(
      'account_status',
      enumOf('AccountStatus', ['Active', 'Suspended', 'Pending Verification', 'Closed']),
      'Pending Verification',
    ),
    field('payment_methods', list(PaymentMethodSpec), []),
    field('line_ids', list(str), []),
    field('bill_ids', list(str), []),
    // The reference's default is a date in a datetime field, never validated: it dumps as a date.
    field('created_at', datetime, '2025-01-01'),
    field('last_extension_date', optional(date), null),
    field('goodwill_credit_used_this_year', float, 0.0),
  ],
  true,
);
export const TelecomDbSpec = model<TelecomDb>(
  'TelecomDB',
  [
    field('plans', list(PlanSpec), []),
    field('customers', list(CustomerSpec), []),
    field('lines', list(LineSpec), []),
    field('bills', list(BillSpec), []),
    field('devices', list(DeviceSpec), []),
  ],
  true,
);

// ---- the user's phone and surroundings (TelecomUserDB) ----

export const MODE_PREFERENCES = ['4g_5g_preferred', '4g_only', '3g_only', '2g_only'] as const;
const SignalStrength = enumOf('SignalStrength', ['none', 'poor', 'fair', 'good', 'excellent']);
const NetworkTechnology = enumOf('NetworkTechnology', ['none', '2G', '3G', '4G', '5G']);
export const NetworkModePreference = enumOf('NetworkModePreference', [...MODE_PREFERENCES]);

export interface ApnSettings {
  apn_name: PyValue;
  reset_at_reboot: PyValue;
  mms_apn: PyValue;
  mmsc_url: PyValue;
  mms_proxy: PyValue;
  mms_port: PyValue;
}
export const APNSettingsSpec = model<ApnSettings>(
  'APNSettings',
  [
    field('apn_name', enumOf('APNNames', ['internet', 'broken']), 'internet'),
    field('reset_at_reboot', bool, false),
    field('mms_apn', optional(str), 'mms'),
    field('mmsc_url', optional(str), 'http://mms.carrier.com/mms/wapenc'),
    field('mms_proxy', optional(str), null),
    field('mms_port', optional(int), null),
  ],
  true,
);
export interface VpnDetails {
  server_address: PyValue;
  protocol: PyValue;
  server_performance: PyValue;
}
export const VpnDetailsSpec = model<VpnDetails>(
  'VpnDetails',
  [
    field('server_address', optional(str), null),
    field('protocol', optional(str), null),
    field(
      'server_performance',
      enumOf('PerformanceLevel', ['unknown', 'poor', 'fair', 'good', 'excellent']),
      'unknown',
    ),
  ],
  true,
);
export interface AppPermissions {
  sms: PyValue;
  storage: PyValue;
  phone: PyValue;
  network: PyValue;
}
export const AppPermissionsSpec = model<AppPermissions>(
  'AppPermissions',
  [
    field('sms', bool, false),
    field('storage', bool, false),
    field('phone', bool, false),
    field('network', bool, false),
  ],
  true,
);
export interface AppStatus {
  app_name: string;
  permissions: Model<AppPermissions>;
}
const AppStatusSpec = model<AppStatus>(
  'AppStatus',
  [
    field('app_name', str),
    field('permissions', AppPermissionsSpec, AppPermissionsSpec.make({} as AppPermissions)),
  ],
  true,
);

function app(name: string, granted: readonly (keyof AppPermissions)[]): Model<AppStatus> {
  const permissions = AppPermissionsSpec.make({ sms: false, storage: false, phone: false, network: false });
  for (const p of granted) permissions[p] = true;
  return AppStatusSpec.make({ app_name: name, permissions });
}

export interface Phone {
  sim_card_status: PyValue;
  sim_card_missing: PyValue;
  airplane_mode: PyValue;
  network_signal_strength: PyValue;
  network_technology_connected: PyValue;
  network_connection_status: PyValue;
  battery_level: PyValue;
  data_enabled: PyValue;
  roaming_enabled: PyValue;
  network_mode_preference: PyValue;
  /** a model, unless a bad `set_apn_settings` stored something else */
  active_apn_settings: Model<ApnSettings> | PyValue;
  wifi_enabled: PyValue;
  wifi_connected: PyValue;
  wifi_ssid: PyValue;
  wifi_signal_strength: PyValue;
  wifi_calling_enabled: PyValue;
  wifi_calling_mms_over_wifi: PyValue;
  data_saver_mode: PyValue;
  vpn_enabled_setting: PyValue;
  vpn_connected: PyValue;
  vpn_details: Model<VpnDetails> | PyValue;
  app_statuses: Map<PyKey, Model<AppStatus>>;
}
const PhoneSpec = model<Phone>(
  'MockPhoneAttributes',
  [
    field(
      'sim_card_status',
      enumOf('SimStatus', ['active', 'missing', 'locked_pin', 'locked_puk']),
      'active',
    ),
    field('sim_card_missing', bool, false),
    field('airplane_mode', bool, false),
    field('network_signal_strength', SignalStrength, 'good'),
    field('network_technology_connected', NetworkTechnology, '5G'),
    field(
      'network_connection_status',
      enumOf('NetworkStatus', ['connected', 'searching', 'no_service', 'emergency_only']),
      'connected',
    ),
    field('battery_level', int, 80n),
    field('data_enabled', bool, true),
    field('roaming_enabled', bool, false),
    field('network_mode_preference', NetworkModePreference, '4g_5g_preferred'),
    field('active_apn_settings', APNSettingsSpec, newApnSettings()),
    field('wifi_enabled', bool, false),
    field('wifi_connected', bool, false),
    field('wifi_ssid', optional(str), null),
    field('wifi_signal_strength', SignalStrength, 'none'),
    field('wifi_calling_enabled', bool, false),
    field('wifi_calling_mms_over_wifi', bool, false),
    field('data_saver_mode', bool, false),
    field('vpn_enabled_setting', bool, false),
    field('vpn_connected', bool, false),
    field('vpn_details', optional(VpnDetailsSpec), null),
    field(
      'app_statuses',
      dict(str, AppStatusSpec),
      new Map<PyKey, PyValue>([
        ['messaging', app('messaging', ['sms', 'storage', 'phone'])],
        ['browser', app('browser', ['storage', 'network'])],
      ]),
    ),
  ],
  true,
);

export interface PaymentRequest {
  bill_id: PyValue;
  amount_due: PyValue;
  paid: PyValue;
}
export const PaymentRequestSpec = model<PaymentRequest>(
  'PaymentRequest',
  [field('bill_id', str), field('amount_due', float), field('paid', bool, false)],
  true,
);
export interface Surroundings {
  name: PyValue;
  phone_number: PyValue;
  is_abroad: PyValue;
  roaming_allowed: PyValue;
  signal_strength: PyDict;
  mobile_data_usage_exceeded: PyValue;
  line_active: PyValue;
  payment_request: Model<PaymentRequest> | null;
}
const SurroundingsSpec = model<Surroundings>(
  'UserSurroundings',
  [
    field('name', optional(str), null),
    field('phone_number', optional(str), null),
    field('is_abroad', bool, false),
    field('roaming_allowed', bool, false),
    field(
      'signal_strength',
      dict(NetworkTechnology as PyType<string>, SignalStrength),
      new Map<PyKey, PyValue>([
        ['2G', 'poor'],
        ['3G', 'fair'],
        ['4G', 'good'],
        ['5G', 'excellent'],
      ]),
    ),
    field('mobile_data_usage_exceeded', bool, false),
    field('line_active', bool, true),
    field('payment_request', optional(PaymentRequestSpec), null),
  ],
  true,
);
export interface TelecomUserDb {
  device: Model<Phone>;
  surroundings: Model<Surroundings>;
}
export const TelecomUserDbSpec = model<TelecomUserDb>(
  'TelecomUserDB',
  [
    field('device', PhoneSpec, PhoneSpec.parse(new Map())),
    field('surroundings', SurroundingsSpec, SurroundingsSpec.parse(new Map())),
  ],
  true,
);

/** `APNSettings()`: the carrier's default access point. */
export function newApnSettings(): Model<ApnSettings> {
  return APNSettingsSpec.make({
    apn_name: 'internet',
    reset_at_reboot: false,
    mms_apn: 'mms',
    mmsc_url: 'http://mms.carrier.com/mms/wapenc',
    mms_proxy: null,
    mms_port: null,
  });
}

/** The JSON-schema types of the tools' parameters that are not plain: `Union[NetworkModePreference, str]`, `Union[APNSettings, dict]`. */
export const modeParam: PyType<PyValue> = union<PyValue>(NetworkModePreference, str);
export const apnParam: PyType<PyValue> = union<PyValue>(
  APNSettingsSpec as unknown as PyType<PyValue>,
  anyDict,
);
export { any };

/** A TOML text as Python's `toml.load` gives it: ints as ints, floats as floats, tables as dicts in file order. */
export function parseTomlPy(text: string): PyDict {
  const convert = (v: unknown): PyValue => {
    if (v === null || typeof v === 'boolean' || typeof v === 'bigint' || typeof v === 'string') return v;
    if (typeof v === 'number') return v;
    if (Array.isArray(v)) return v.map(convert);
    if (v instanceof Date) return v.toISOString();
    const out: PyDict = new Map();
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) out.set(k, convert(x));
    return out;
  };
  return convert(parseToml(text, { integersAsBigInt: true })) as PyDict;
}
