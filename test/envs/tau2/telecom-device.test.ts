/**
 * Telecom's tools one by one, on a small carrier database written here and the phone's defaults:
 * each result text as the reference writes it (status bar emoji, speed figures, Python reprs),
 * and the state changes behind them (airplane mode, mobile data, roaming abroad, APN, VPN, MMS,
 * payments, data refuels, and sync_tools carrying the line's state to the phone).
 */
import { describe, expect, it } from 'vitest';
import { parsePyJson } from '../../../src/envs/py/json.js';
import type { PyDict, PyValue } from '../../../src/envs/py/values.js';
import { makeTelecomEnvironment } from '../../../src/envs/tau2/domains/telecom/environment.js';
import {
  parseTomlPy,
  TelecomDbSpec,
  TelecomUserDbSpec,
} from '../../../src/envs/tau2/domains/telecom/model.js';
import { NO_TOOL_DOCS } from '../../../src/envs/tau2/tool-docs.js';
import type { ToolkitEnvironment } from '../../../src/envs/tau2/toolkit.js';
import type { Requestor } from '../../../src/envs/tau2/types.js';

const CARRIER = `
[[plans]]
plan_id = "P1"
name = "Basic"
data_limit_gb = 15.0
price_per_month = 40.0
data_refueling_price_per_gb = 2.0

[[lines]]
line_id = "L1"
phone_number = "555-0001"
status = "Active"
plan_id = "P1"
data_used_gb = 3.5
roaming_enabled = false

[[bills]]
bill_id = "B1"
customer_id = "C1"
period_start = "2025-01-01"
period_end = "2025-01-31"
issue_date = "2025-02-01"
total_due = 150.0
due_date = "2025-02-15"
status = "Issued"

[[customers]]
customer_id = "C1"
full_name = "Ada Example"
date_of_birth = "1990-01-02"
email = "ada@example.com"
phone_number = "555-0001"
line_ids = ["L1"]
bill_ids = ["B1"]

[customers.address]
street = "1 Road"
city = "Town"
state = "CA"
zip_code = "00001"
`;

const BAR = '\nStatus Bar: \u{1f4f6}\u2074 Excellent | 5G | \u{1f4f1} Data Enabled | \u{1f50b} 80%';
const NO_SIGNAL_BAR = '\nStatus Bar: \u{1f4f5} No Signal | \u{1f4f5} Data Disabled | \u{1f50b} 80%';

function phone(withLine = true): { env: ToolkitEnvironment; bills: string[] } {
  const bills: string[] = [];
  const env = makeTelecomEnvironment({
    policy: '',
    db: TelecomDbSpec.parse(parseTomlPy(CARRIER)),
    userDb: TelecomUserDbSpec.parse(new Map()),
    docs: NO_TOOL_DOCS,
    newBillId: () => {
      bills.push(`B${bills.length + 2}`);
      return bills.at(-1)!;
    },
  });
  if (withLine) run(env, 'user', 'set_user_info', '{"name": "Ada Example", "phone_number": "555-0001"}');
  run(env, 'user', 'simulate_network_search');
  return { env, bills };
}

function run(env: ToolkitEnvironment, side: Requestor, name: string, args = '{}'): PyValue {
  return env.runFunction({ env_type: side, func_name: name, arguments: parsePyJson(args) as PyDict });
}

function call(env: ToolkitEnvironment, side: Requestor, name: string, args = '{}'): string {
  const r = env.respond({ id: 'c', name, arguments: parsePyJson(args) as PyDict, requestor: side });
  return r.content;
}
const user = (env: ToolkitEnvironment, name: string, args?: string) => call(env, 'user', name, args);
const agent = (env: ToolkitEnvironment, name: string, args?: string) => call(env, 'assistant', name, args);

describe('telecom: the phone', () => {
  it('lists the reference tools in its order, with their kinds', () => {
    const { env } = phone();
    expect(env.agentTools().map((t) => t.function.name)).toEqual([
      'get_customer_by_phone',
      'get_customer_by_id',
      'get_customer_by_name',
      'get_details_by_id',
      'suspend_line',
      'resume_line',
      'get_bills_for_customer',
      'send_payment_request',
      'get_data_usage',
      'enable_roaming',
      'disable_roaming',
      'transfer_to_human_agents',
      'refuel_data',
    ]);
    expect(env.userTools()).toHaveLength(30);
    expect(env.userTools()[0]!.function.name).toBe('check_status_bar');
    expect(env.userTools().at(-1)!.function.name).toBe('make_payment');
    expect(env.toolKind('user', 'toggle_airplane_mode')).toBe('write');
    expect(env.toolKind('user', 'run_speed_test')).toBe('read');
    expect(env.toolKind('assistant', 'transfer_to_human_agents')).toBe('generic');
    expect(env.toolKind('user', 'break_vpn')).toBeUndefined();
  });

  it('airplane mode on: no service, no data, no Wi-Fi change; off again: connected', () => {
    const { env } = phone();
    expect(user(env, 'toggle_airplane_mode')).toBe(
      'Airplane Mode is now ON.\nStatus Bar: \u2708\ufe0f Airplane Mode | \u{1f50b} 80%',
    );
    expect(user(env, 'check_network_status')).toBe(
      'Airplane Mode: ON\nSIM Card Status: active\nCellular Connection: no_service\nCellular Signal: none\nCellular Network Type: none\nMobile Data Enabled: Yes\nData Roaming Enabled: No\nWi-Fi Radio: OFF\nWi-Fi Connected: No',
    );
    expect(user(env, 'run_speed_test')).toBe('Speed test failed: No Connection.');
    expect(user(env, 'toggle_wifi')).toBe(
      'Cannot change Wi-Fi settings while Airplane Mode is ON.\nStatus Bar: \u2708\ufe0f Airplane Mode | \u{1f50b} 80%',
    );
    expect(run(env, 'user', 'assert_service_status', '{"expected_status": "no_service"}')).toBe(true);
    expect(user(env, 'toggle_airplane_mode')).toBe(`Airplane Mode is now OFF.${BAR}`);
    expect(run(env, 'user', 'assert_service_status', '{"expected_status": "connected"}')).toBe(true);
  });

  it('mobile data off: the status bar says so and the speed test fails', () => {
    const { env } = phone();
    expect(user(env, 'toggle_data')).toBe(
      'Mobile Data is now OFF.\nStatus Bar: \u{1f4f6}\u2074 Excellent | 5G | \u{1f4f5} Data Disabled | \u{1f50b} 80%',
    );
    expect(user(env, 'run_speed_test')).toBe('Speed test failed: No Connection.');
    expect(run(env, 'user', 'assert_mobile_data_status', '{"expected_status": false}')).toBe(true);
    expect(user(env, 'toggle_data')).toBe(`Mobile Data is now ON.${BAR}`);
    expect(user(env, 'run_speed_test')).toBe(
      'Speed Test Result: 275.00 Mbps (Excellent). Connection is very fast.',
    );
  });

  it('speed test: network mode, data saver and signal set the figure and its grade', () => {
    const { env } = phone();
    expect(user(env, 'toggle_data_saver_mode')).toBe(
      'Data Saver Mode is now ON.\nStatus Bar: \u{1f4f6}\u2074 Excellent | 5G | \u{1f4f1} Data Enabled | \u{1f53d} Data Saver | \u{1f50b} 80%',
    );
    expect(user(env, 'run_speed_test')).toBe(
      'Speed Test Result: 55.00 Mbps (Good). Connection is good for most activities, including HD streaming.',
    );
    user(env, 'toggle_data_saver_mode');
    expect(user(env, 'set_network_mode_preference', '{"mode": "3g_only"}')).toBe(
      'Preferred Network Mode set to: 3g_only\nStatus Bar: \u{1f4f6}\u00b2 Fair | 3G | \u{1f4f1} Data Enabled | \u{1f50b} 80%',
    );
    expect(user(env, 'run_speed_test')).toBe(
      'Speed Test Result: 1.50 Mbps (Poor). Connection is slow. Web browsing may be sluggish, streaming difficult.',
    );
    user(env, 'set_network_mode_preference', '{"mode": "2g_only"}');
    expect(user(env, 'run_speed_test')).toBe(
      'Speed Test Result: 0.05 Mbps (Very Poor). Connection is very slow. Basic web browsing might be difficult.',
    );
    expect(user(env, 'can_send_mms')).toBe('Your messaging app cannot send MMS messages.');
    user(env, 'set_network_mode_preference', '{"mode": "4g_only"}');
    expect(user(env, 'run_speed_test')).toBe(
      'Speed Test Result: 44.00 Mbps (Good). Connection is good for most activities, including HD streaming.',
    );
    expect(user(env, 'set_network_mode_preference', '{"mode": "5g"}')).toBe(
      "Failed to set network mode: '5g' is not a valid option. Please use one of: 4g_5g_preferred, 4g_only, 3g_only, 2g_only\nStatus Bar: \u{1f4f6}\u00b3 Good | 4G | \u{1f4f1} Data Enabled | \u{1f50b} 80%",
    );
    // a non-text mode is stored as given, then its `.value` fails, now and later
    expect(user(env, 'set_network_mode_preference', '{"mode": 4}')).toBe(
      "Error: 'int' object has no attribute 'value'",
    );
    expect(user(env, 'check_network_mode_preference')).toBe("Error: 'int' object has no attribute 'value'");
    expect(run(env, 'user', 'assert_internet_speed', '{"expected_speed": 40, "expected_desc": "good"}')).toBe(
      true,
    );
  });

  it('abroad: data needs the phone roaming setting and the line roaming the agent enables', () => {
    const { env } = phone();
    run(env, 'user', 'set_user_location', '{"abroad": true}');
    expect(user(env, 'run_speed_test')).toBe('Speed test failed: No Connection.');
    expect(user(env, 'toggle_roaming')).toBe(`Data Roaming is now ON.${BAR}`);
    expect(user(env, 'run_speed_test')).toBe('Speed test failed: No Connection.');
    expect(agent(env, 'enable_roaming', '{"customer_id": "C1", "line_id": "L1"}')).toBe(
      'Roaming enabled successfully',
    );
    expect(agent(env, 'enable_roaming', '{"customer_id": "C1", "line_id": "L1"}')).toBe(
      'Roaming was already enabled',
    );
    expect(user(env, 'run_speed_test')).toBe(
      'Speed Test Result: 275.00 Mbps (Excellent). Connection is very fast.',
    );
    expect(agent(env, 'disable_roaming', '{"customer_id": "C1", "line_id": "L1"}')).toBe(
      'Roaming disabled successfully',
    );
    expect(run(env, 'user', 'assert_mobile_data_status', '{"expected_status": false}')).toBe(true);
  });

  it('APN: broken means no service; a reset applies at the next reboot', () => {
    const { env } = phone();
    run(env, 'user', 'break_apn_settings');
    expect(user(env, 'check_status_bar')).toBe(`Status Bar: ${NO_SIGNAL_BAR.slice('\nStatus Bar: '.length)}`);
    expect(user(env, 'reset_apn_settings')).toBe(`APN settings will reset at reboot.${NO_SIGNAL_BAR}`);
    expect(user(env, 'check_apn_settings')).toBe(
      'Current APN Name: broken\nMMSC URL (for picture messages): http://mms.carrier.com/mms/wapenc\n(These are technical settings, usually best left unchanged.)',
    );
    expect(user(env, 'reboot_device')).toBe(
      `Resetting APN settings...\nRestarting network services...${BAR}`,
    );
    expect(user(env, 'reboot_device')).toBe(`Restarting network services...${BAR}`);
    expect(user(env, 'set_apn_settings', '{"apn_settings": {"apn_name": "broken"}}')).toBe(
      `APN settings set to: broken${NO_SIGNAL_BAR}`,
    );
    const bad = user(
      env,
      'set_apn_settings',
      '{"apn_settings": {"apn_name": "wrong", "extra": 1, "mms_port": "x"}}',
    );
    expect(bad).toMatch(
      /^Error: 3 validation errors for APNSettings\napn_name\n {2}Input should be 'internet' or 'broken' \[type=enum, input_value='wrong', input_type=str\]\n {4}For further information visit https:\/\/errors\.pydantic\.dev\/[\d.]+\/v\/enum\nmms_port\n {2}Input should be a valid integer, unable to parse string as an integer \[type=int_parsing, input_value='x', input_type=str\]\n.*\nextra\n {2}Extra inputs are not permitted \[type=extra_forbidden, input_value=1, input_type=int\]\n/,
    );
    // a non-dict is stored as it is, and every later look at the APN fails on it
    expect(user(env, 'set_apn_settings', '{"apn_settings": "internet"}')).toBe(
      "Error: 'str' object has no attribute 'apn_name'",
    );
    expect(user(env, 'reboot_device')).toBe("Error: 'str' object has no attribute 'reset_at_reboot'");
  });

  it('MMS: needs mobile data, 3G or better, an MMSC URL, no MMS over Wi-Fi calling and the messaging permissions', () => {
    const { env } = phone();
    expect(user(env, 'can_send_mms')).toBe('Your messaging app can send MMS messages.');
    run(env, 'user', 'break_apn_mms_setting');
    expect(user(env, 'check_apn_settings')).toBe(
      'Current APN Name: internet\nMMSC URL (for picture messages): Not Set\n(These are technical settings, usually best left unchanged.)',
    );
    user(env, 'reset_apn_settings');
    user(env, 'reboot_device');
    expect(user(env, 'can_send_mms')).toBe('Your messaging app can send MMS messages.');
    run(env, 'user', 'set_wifi_calling', '{"enabled": true, "mms_over_wifi": true}');
    expect(user(env, 'can_send_mms')).toBe('Your messaging app cannot send MMS messages.');
    expect(user(env, 'toggle_wifi_calling')).toBe(`Wi-Fi Calling is now OFF.${BAR}`);
    expect(
      run(env, 'user', 'remove_app_permission', '{"app_name": "messaging", "permission": "storage"}'),
    ).toBeTruthy();
    expect(user(env, 'check_app_status', '{"app_name": "messaging"}')).toBe(
      'Status for App: messaging\n - Permissions Granted:\n   - sms\n   - phone',
    );
    expect(user(env, 'can_send_mms')).toBe('Your messaging app cannot send MMS messages.');
    expect(user(env, 'grant_app_permission', '{"app_name": "messaging", "permission": "STORAGE"}')).toBe(
      `Success. Permission 'storage' granted to app 'messaging'.${BAR}`,
    );
    expect(user(env, 'grant_app_permission', '{"app_name": "browser", "permission": "camera"}')).toBe(
      `Error. Permission 'camera' not tracked for app 'browser', available permissions: ['sms', 'storage', 'phone', 'network']${BAR}`,
    );
    expect(user(env, 'check_app_permissions', '{"app_name": "browser"}')).toBe(
      "App 'browser' has permission for: storage, network.",
    );
    expect(user(env, 'check_installed_apps')).toBe(
      'The following apps are installed on the phone: messaging, browser',
    );
    expect(run(env, 'user', 'assert_can_send_mms', '{"expected_status": true}')).toBe(true);
  });

  it('VPN: a broken VPN is slow, and the shared profile stays broken when reconnected', () => {
    const { env } = phone();
    expect(user(env, 'check_vpn_status')).toBe('VPN is turned OFF.');
    run(env, 'user', 'break_vpn');
    expect(user(env, 'check_vpn_status')).toBe(
      "VPN is ON and connected. Details: {'server_address': '192.168.1.1', 'protocol': 'OpenVPN', 'server_performance': <PerformanceLevel.POOR: 'poor'>}",
    );
    expect(user(env, 'run_speed_test')).toBe(
      'Speed Test Result: 27.50 Mbps (Good). Connection is good for most activities, including HD streaming.',
    );
    expect(user(env, 'connect_vpn')).toBe('VPN already connected.');
    expect(user(env, 'disconnect_vpn')).toBe(`VPN disconnected successfully.${BAR}`);
    expect(user(env, 'disconnect_vpn')).toBe(`No active VPN connection to disconnect.${BAR}`);
    expect(user(env, 'run_speed_test')).toBe(
      'Speed Test Result: 275.00 Mbps (Excellent). Connection is very fast.',
    );
    expect(user(env, 'connect_vpn')).toBe(
      'VPN connected successfully.\nStatus Bar: \u{1f4f6}\u2074 Excellent | 5G | \u{1f4f1} Data Enabled | \u{1f512} VPN Connected | \u{1f50b} 80%',
    );
    expect(run(env, 'user', 'assert_internet_not_excellent')).toBe(true);
  });
});

describe('telecom: the carrier and sync_tools', () => {
  it('a payment request reaches the phone; paying marks the bill paid', () => {
    const { env } = phone();
    expect(user(env, 'check_payment_request')).toBe('No payment request has been made.');
    expect(agent(env, 'send_payment_request', '{"customer_id": "C1", "bill_id": "B1"}')).toBe(
      'Payment request sent to the customer for bill B1',
    );
    expect(agent(env, 'send_payment_request', '{"customer_id": "C1", "bill_id": "B1"}')).toBe(
      'Error: A bill is already awaiting payment for this customer',
    );
    expect(user(env, 'check_payment_request')).toBe('You have a payment request for bill B1 of 150.0 USD.');
    expect(user(env, 'make_payment')).toBe('Payment of 150.0 USD has been made for bill B1.');
    expect(user(env, 'check_payment_request')).toBe('No payment request has been made.');
    expect(user(env, 'make_payment')).toBe('You do not have a payment request.');
    expect(agent(env, 'get_details_by_id', '{"id": "B1"}')).toBe(
      '{"bill_id": "B1", "customer_id": "C1", "period_start": "2025-01-01", "period_end": "2025-01-31", "issue_date": "2025-02-01", "total_due": 150.0, "due_date": "2025-02-15", "line_items": [], "status": "Paid"}',
    );
    expect(run(env, 'assistant', 'assert_no_overdue_bill', '{"overdue_bill_id": "B1"}')).toBe(true);
  });

  it('makeToolCall runs a tool without sync_tools: the phone sees the request only after a sync', () => {
    const { env } = phone();
    expect(
      env.makeToolCall({
        id: 'g',
        name: 'send_payment_request',
        arguments: parsePyJson('{"customer_id": "C1", "bill_id": "B1"}') as PyDict,
        requestor: 'assistant',
      }),
    ).toBe('Payment request sent to the customer for bill B1');
    expect(run(env, 'user', 'check_payment_request')).toBe('No payment request has been made.');
    env.syncTools();
    expect(run(env, 'user', 'check_payment_request')).toBe(
      'You have a payment request for bill B1 of 150.0 USD.',
    );
  });

  it('data used up: no mobile data until a refuel, charged on a new draft bill', () => {
    const { env, bills } = phone();
    run(env, 'assistant', 'set_data_usage', '{"customer_id": "C1", "line_id": "L1", "data_used_gb": 15.1}');
    expect(user(env, 'run_speed_test')).toBe('Speed test failed: No Connection.');
    expect(run(env, 'user', 'assert_mobile_data_usage_exceeded', '{"expected_status": true}')).toBe(true);
    expect(agent(env, 'get_data_usage', '{"customer_id": "C1", "line_id": "L1"}')).toBe(
      '{"line_id": "L1", "data_used_gb": "15.1", "data_limit_gb": "15.0", "data_refueling_gb": "0.0", "cycle_end_date": "2025-02-28"}',
    );
    expect(agent(env, 'refuel_data', '{"customer_id": "C1", "line_id": "L1", "gb_amount": 2.0}')).toBe(
      '{"message": "Successfully added 2.0 GB of data for line L1 for $4.00", "new_data_refueling_gb": "2.0", "charge": "4.0"}',
    );
    expect(agent(env, 'refuel_data', '{"customer_id": "C1", "line_id": "L1", "gb_amount": 3}')).toBe(
      '{"message": "Successfully added 3 GB of data for line L1 for $6.00", "new_data_refueling_gb": "5.0", "charge": "6.0"}',
    );
    expect(agent(env, 'refuel_data', '{"customer_id": "C1", "line_id": "L1", "gb_amount": "2"}')).toBe(
      "Error: '<=' not supported between instances of 'str' and 'int'",
    );
    expect(agent(env, 'refuel_data', '{"customer_id": "C1", "line_id": "L1", "gb_amount": 0}')).toBe(
      'Error: Refuel amount must be positive',
    );
    expect(bills).toEqual(['B2']);
    expect(agent(env, 'get_bills_for_customer', '{"customer_id": "C1", "limit": 1}')).toBe(
      '[{"bill_id": "B2", "customer_id": "C1", "period_start": "2025-03-01", "period_end": "2025-03-31", "issue_date": "2025-03-01", "total_due": 10.0, "due_date": "2025-03-15", "line_items": [{"description": "Data refueling: 2.0 GB at $2.0/GB", "amount": 4.0, "date": "2025-02-25", "item_type": "Charge"}, {"description": "Data refueling: 3 GB at $2.0/GB", "amount": 6.0, "date": "2025-02-25", "item_type": "Charge"}], "status": "Draft"}]',
    );
    expect(agent(env, 'get_bills_for_customer', '{"customer_id": "C1", "limit": 1.5}')).toBe(
      'Error: slice indices must be integers or None or have an __index__ method',
    );
    expect(user(env, 'run_speed_test')).toBe(
      'Speed Test Result: 275.00 Mbps (Excellent). Connection is very fast.',
    );
    expect(
      run(
        env,
        'assistant',
        'assert_data_refueling_amount',
        '{"customer_id": "C1", "line_id": "L1", "expected_amount": 5.0}',
      ),
    ).toBe(true);
  });

  it('an overdue bill suspends the line, and the phone loses service until the line resumes', () => {
    const { env } = phone();
    expect(
      run(
        env,
        'assistant',
        'suspend_line_for_overdue_bill',
        '{"customer_id": "C1", "line_id": "L1", "new_bill_id": "B9", "contract_ended": false}',
      ),
    ).toBe('Line L1 suspended for unpaid bill B9. Contract ended: False');
    run(env, 'user', 'simulate_network_search');
    expect(user(env, 'check_status_bar')).toBe(`Status Bar: ${NO_SIGNAL_BAR.slice('\nStatus Bar: '.length)}`);
    expect(
      run(env, 'assistant', 'assert_overdue_bill_exists', '{"customer_id": "C1", "overdue_bill_id": "B9"}'),
    ).toBe(true);
    expect(agent(env, 'suspend_line', '{"customer_id": "C1", "line_id": "L1", "reason": "x"}')).toBe(
      'Error: Line must be active to suspend',
    );
    const resumed = agent(env, 'resume_line', '{"customer_id": "C1", "line_id": "L1"}');
    expect(resumed).toBe(
      '{"message": "Line resumed successfully", "line": {"line_id": "L1", "phone_number": "555-0001", "status": "Active", "plan_id": "P1", "device_id": null, "data_used_gb": 3.5, "data_refueling_gb": 0.0, "roaming_enabled": false, "contract_end_date": null, "last_plan_change_date": null, "last_sim_replacement_date": null, "suspension_start_date": null}}',
    );
    expect(user(env, 'reboot_device')).toBe(`Restarting network services...${BAR}`);
  });

  it('lookups and their errors, as the reference words them', () => {
    const { env } = phone();
    expect(agent(env, 'get_customer_by_phone', '{"phone_number": "555-9999"}')).toBe(
      'Error: Customer with phone number 555-9999 not found',
    );
    expect(agent(env, 'get_customer_by_name', '{"full_name": "ADA example", "dob": "1990-01-02"}')).toMatch(
      /^\[\{"customer_id": "C1", .*"created_at": "2025-01-01", "last_extension_date": null, "goodwill_credit_used_this_year": 0\.0\}\]$/,
    );
    expect(agent(env, 'get_customer_by_name', '{"full_name": 5, "dob": "x"}')).toBe(
      "Error: 'int' object has no attribute 'lower'",
    );
    expect(agent(env, 'get_details_by_id', '{"id": "X1"}')).toBe('Error: Unknown ID format or type: X1');
    expect(agent(env, 'get_details_by_id', '{"id": "P1"}')).toBe(
      '{"plan_id": "P1", "name": "Basic", "data_limit_gb": 15.0, "price_per_month": 40.0, "data_refueling_price_per_gb": 2.0}',
    );
    expect(agent(env, 'get_data_usage', '{"customer_id": "C1", "line_id": 1}')).toBe(
      'Error: Line 1 not found for customer C1',
    );
    expect(agent(env, 'refuel_data', '{"customer_id": "C1"}')).toBe(
      "Error: TelecomTools.refuel_data() missing 2 required positional arguments: 'line_id' and 'gb_amount'",
    );
    expect(user(env, 'check_status_bar', '{"x": 1}')).toBe(
      "Error: TelecomUserTools.check_status_bar() got an unexpected keyword argument 'x'",
    );
    expect(user(env, 'set_wifi_calling', '{"enabled": true}')).toBe(
      "Error: Tool 'set_wifi_calling' not found.",
    );
  });

  it('initialisation data merges into the phone and the records as pydantic validates them', () => {
    const { env } = phone();
    env.updateDb('user', parsePyJson('{"device": {"airplane_mode": true, "battery_level": 55.0}}') as PyDict);
    expect(user(env, 'check_status_bar')).toBe('Status Bar: \u2708\ufe0f Airplane Mode | \u{1f50b} 55%');
    env.updateDb(
      'assistant',
      parsePyJson(
        '{"plans": [{"plan_id": "P1", "name": "Big", "data_limit_gb": 30, "price_per_month": 1, "data_refueling_price_per_gb": 1}]}',
      ) as PyDict,
    );
    expect(agent(env, 'get_details_by_id', '{"id": "P1"}')).toBe(
      '{"plan_id": "P1", "name": "Big", "data_limit_gb": 30.0, "price_per_month": 1.0, "data_refueling_price_per_gb": 1.0}',
    );
    expect(() =>
      env.updateDb('user', parsePyJson('{"device": {"airplane_mode": "maybe"}}') as PyDict),
    ).toThrow(
      /1 validation error for TelecomUserDB\ndevice\.airplane_mode\n {2}Input should be a valid boolean, unable to interpret input/,
    );
  });

  it('the databases dump in field order and hash as sorted JSON, dates as str() gives them', () => {
    const { env } = phone(false);
    const text = env.dbText('assistant')!;
    expect(text).toContain('"created_at": "2025-01-01"');
    expect(
      text.startsWith('{"bills": [{"bill_id": "B1", "customer_id": "C1", "due_date": "2025-02-15", '),
    ).toBe(true);
    expect(env.dbText('user')).toContain(
      '"signal_strength": {"2G": "poor", "3G": "fair", "4G": "good", "5G": "excellent"}',
    );
  });
});
