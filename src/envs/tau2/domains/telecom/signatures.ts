/**
 * The Python signatures of telecom's two toolkits: which methods are tools (in the reference's
 * order, with their kind), every method the tasks may call by name, and each one's parameters
 * with their defaults and JSON-schema types (the schema pydantic builds from the annotations).
 */
import type { PyValue } from '../../../py/values.js';
import type { ToolKind } from '../../types.js';

export type ParamType = 'string' | 'integer' | 'number' | 'mode' | 'apn' | 'any';

export interface ParamSig {
  readonly name: string;
  readonly type: ParamType;
  /** absent: required */
  readonly default?: PyValue;
}

export interface FunctionSig {
  readonly name: string;
  readonly params: readonly ParamSig[];
  /** set for the methods the model may call */
  readonly kind?: ToolKind;
}

const p = (name: string, type: ParamType = 'string'): ParamSig => ({ name, type });
const o = (name: string, type: ParamType, value: PyValue): ParamSig => ({ name, type, default: value });
const tool = (kind: ToolKind, name: string, ...params: ParamSig[]): FunctionSig => ({ name, params, kind });
const fn = (name: string, ...params: ParamSig[]): FunctionSig => ({ name, params });

const customerLine = [p('customer_id'), p('line_id')];

/** `TelecomTools`, tools first in definition order. */
export const AGENT_FUNCTIONS: readonly FunctionSig[] = [
  tool('read', 'get_customer_by_phone', p('phone_number')),
  tool('read', 'get_customer_by_id', p('customer_id')),
  tool('read', 'get_customer_by_name', p('full_name'), p('dob')),
  tool('read', 'get_details_by_id', p('id')),
  tool('write', 'suspend_line', ...customerLine, p('reason')),
  tool('write', 'resume_line', ...customerLine),
  tool('read', 'get_bills_for_customer', p('customer_id'), o('limit', 'integer', 12n)),
  tool('write', 'send_payment_request', p('customer_id'), p('bill_id')),
  tool('read', 'get_data_usage', ...customerLine),
  tool('write', 'enable_roaming', ...customerLine),
  tool('write', 'disable_roaming', ...customerLine),
  tool('generic', 'transfer_to_human_agents', p('summary')),
  tool('write', 'refuel_data', ...customerLine, p('gb_amount', 'number')),
  fn('get_available_plan_ids'),
  fn('set_data_usage', ...customerLine, p('data_used_gb', 'number')),
  fn('suspend_line_for_overdue_bill', ...customerLine, p('new_bill_id'), p('contract_ended', 'any')),
  fn('assert_data_refueling_amount', ...customerLine, p('expected_amount', 'number')),
  fn('assert_line_status', ...customerLine, p('expected_status', 'any')),
  fn('assert_overdue_bill_exists', p('customer_id'), p('overdue_bill_id')),
  fn('assert_no_overdue_bill', p('overdue_bill_id')),
];

/** `TelecomUserTools`, tools first in definition order. */
export const USER_FUNCTIONS: readonly FunctionSig[] = [
  tool('read', 'check_status_bar'),
  tool('read', 'check_network_status'),
  tool('read', 'check_network_mode_preference'),
  tool('write', 'set_network_mode_preference', p('mode', 'mode')),
  tool('read', 'run_speed_test'),
  tool('write', 'toggle_airplane_mode'),
  tool('read', 'check_sim_status'),
  tool('write', 'reseat_sim_card'),
  tool('write', 'toggle_data'),
  tool('write', 'toggle_roaming'),
  tool('read', 'check_data_restriction_status'),
  tool('write', 'toggle_data_saver_mode'),
  tool('read', 'check_apn_settings'),
  tool('write', 'set_apn_settings', p('apn_settings', 'apn')),
  tool('write', 'reset_apn_settings'),
  tool('read', 'check_wifi_status'),
  tool('write', 'toggle_wifi'),
  tool('read', 'check_wifi_calling_status'),
  tool('write', 'toggle_wifi_calling'),
  tool('read', 'check_vpn_status'),
  tool('write', 'connect_vpn'),
  tool('write', 'disconnect_vpn'),
  tool('read', 'check_installed_apps'),
  tool('read', 'check_app_status', p('app_name')),
  tool('read', 'check_app_permissions', p('app_name')),
  tool('write', 'grant_app_permission', p('app_name'), p('permission')),
  tool('read', 'can_send_mms'),
  tool('write', 'reboot_device'),
  tool('read', 'check_payment_request'),
  tool('write', 'make_payment'),
  fn('set_user_info', p('name'), p('phone_number')),
  fn('set_user_location', p('abroad', 'any')),
  fn('turn_airplane_mode_on'),
  fn('turn_airplane_mode_off'),
  fn('unseat_sim_card'),
  fn('lock_sim_card', p('mode', 'any')),
  fn('turn_data_on'),
  fn('turn_data_off'),
  fn('turn_roaming_on'),
  fn('turn_roaming_off'),
  fn('turn_data_saver_mode_on'),
  fn('turn_data_saver_mode_off'),
  fn('break_apn_settings'),
  fn('break_apn_mms_setting'),
  fn('set_wifi_calling', p('enabled', 'any'), o('mms_over_wifi', 'any', null)),
  fn('break_vpn'),
  fn('remove_app_permission', p('app_name'), p('permission')),
  fn('simulate_network_search'),
  fn('assert_airplane_mode_status', p('expected_status', 'any')),
  fn('assert_service_status', p('expected_status')),
  fn('assert_mobile_data_status', p('expected_status', 'any')),
  fn('assert_mobile_roaming_status', p('expected_status', 'any')),
  fn('assert_mobile_data_saver_mode_status', p('expected_status', 'any')),
  fn('assert_internet_speed', p('expected_speed', 'number'), o('expected_desc', 'any', null)),
  fn('assert_internet_not_excellent'),
  fn('assert_can_send_mms', p('expected_status', 'any')),
  fn('assert_mobile_data_usage_exceeded', p('expected_status', 'any')),
];
