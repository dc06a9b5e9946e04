/**
 * The user's side of telecom (`TelecomUserTools`): a simulated phone the user operates when the
 * agent asks (airplane mode, SIM, mobile data, roaming, APN, Wi-Fi, VPN, app permissions, MMS,
 * reboots, speed tests), the place the user is in (abroad or not, signal per network type), and
 * the helpers that break the phone for a task or assert its state afterwards.
 *
 * Every result text is the reference's, character for character (status bar emoji included).
 */
import { AttributeError_, PyException, ValueError_ } from '../../../py/errors.js';
import { str as pyStr, repr } from '../../../py/format.js';
import { compare, formatFixed, pyRound, requireHashable, truthy } from '../../../py/ops.js';
import { dictGet, type PyDict, type PyKey, PyTuple, type PyValue, pyEquals } from '../../../py/values.js';
import { type Model, modelDump, PyModel } from '../../pydantic.js';
import {
  APNSettingsSpec,
  type AppStatus,
  MODE_PREFERENCES,
  newApnSettings,
  PaymentRequestSpec,
  type Phone,
  type Surroundings,
  type TelecomUserDb,
  type VpnDetails,
  VpnDetailsSpec,
} from './model.js';

const AssertionError_ = () => new PyException('AssertionError', '');

const SIGNAL_ICONS: Readonly<Record<string, string>> = {
  none: '\u{1f4f5} No Signal',
  poor: '\u{1f4f6}\u00b9 Poor',
  fair: '\u{1f4f6}\u00b2 Fair',
  good: '\u{1f4f6}\u00b3 Good',
  excellent: '\u{1f4f6}\u2074 Excellent',
};

/** Mbps range per network technology and the share of it each signal level gets. */
const TECH_SPEED: Readonly<Record<string, readonly [number, number]>> = {
  '2G': [0.1, 0.4],
  '3G': [1.0, 5.0],
  '4G': [10.0, 100.0],
  '5G': [50.0, 500.0],
  none: [0.0, 0.0],
};
const SIGNAL_FACTOR: Readonly<Record<string, number>> = {
  poor: 0.2,
  fair: 0.5,
  good: 0.8,
  excellent: 1.0,
  none: 0.0,
};
const SPEED_ADVICE: Readonly<Record<string, string>> = {
  'Very Poor': 'Connection is very slow. Basic web browsing might be difficult.',
  Poor: 'Connection is slow. Web browsing may be sluggish, streaming difficult.',
  Fair: 'Connection is okay for web browsing and some standard definition streaming.',
  Good: 'Connection is good for most activities, including HD streaming.',
  Excellent: 'Connection is very fast.',
};

const PERMISSION_NAMES = ['sms', 'storage', 'phone', 'network'] as const;

function onOff(v: PyValue): string {
  return truthy(v) ? 'ON' : 'OFF';
}
function yesNo(v: PyValue): string {
  return truthy(v) ? 'Yes' : 'No';
}

function strMethod(v: PyValue, method: string): string {
  if (typeof v !== 'string') throw AttributeError_(v, method);
  return v;
}

function newVpnDetails(): Model<VpnDetails> {
  return VpnDetailsSpec.make({
    server_address: '192.168.1.1',
    protocol: 'OpenVPN',
    server_performance: 'excellent',
  });
}

export class TelecomUserTools {
  /**
   * The VPN profile `connect_vpn` attaches. The reference attaches one shared object, so once
   * `break_vpn` has degraded it every later connection is poor too; here it is shared within
   * one environment (the reference shares it across its whole process).
   */
  private readonly defaultVpnDetails: Model<VpnDetails> = newVpnDetails();

  /** `currentDb`: the database the toolkit holds now (`update_db` replaces it). */
  constructor(private readonly currentDb: () => Model<TelecomUserDb>) {}

  get device(): Model<Phone> {
    return this.currentDb().device;
  }
  get surroundings(): Model<Surroundings> {
    return this.currentDb().surroundings;
  }
  private d(name: keyof Phone): PyValue {
    return this.device[name] as PyValue;
  }
  private set(name: keyof Phone, v: PyValue): void {
    (this.device as unknown as Record<string, PyValue>)[name as string] = v;
  }
  private s(name: keyof Surroundings): PyValue {
    return this.surroundings[name] as PyValue;
  }
  /** The APN settings, which a bad `set_apn_settings` may have replaced by a non-model. */
  private apnModel(attr: string): Record<string, PyValue> {
    const settings = this.d('active_apn_settings');
    if (!(settings instanceof PyModel)) throw AttributeError_(settings, attr);
    return settings as unknown as Record<string, PyValue>;
  }
  private apn(attr: string): PyValue {
    return this.apnModel(attr)[attr]!;
  }

  // ---- user info ----

  set_user_info(name: PyValue, phone_number: PyValue): null {
    this.surroundings.name = name;
    this.surroundings.phone_number = phone_number;
    return null;
  }

  set_user_location(abroad: PyValue): null {
    this.surroundings.is_abroad = abroad;
    return null;
  }

  // ---- status bar and network ----

  check_status_bar(): string {
    return `Status Bar: ${this._check_status_bar()}`;
  }

  _check_status_bar(): string {
    const out: string[] = [];
    if (truthy(this.d('airplane_mode'))) out.push('\u2708\ufe0f Airplane Mode');
    else {
      out.push(SIGNAL_ICONS[this.d('network_signal_strength') as string] ?? SIGNAL_ICONS.none!);
      const tech = this.d('network_technology_connected');
      if (tech !== 'none') out.push(pyStr(tech));
      if (truthy(this.d('data_enabled')) && tech !== 'none') {
        out.push('\u{1f4f1} Data Enabled');
        if (truthy(this.d('data_saver_mode'))) out.push('\u{1f53d} Data Saver');
      } else out.push('\u{1f4f5} Data Disabled');
    }
    if (truthy(this.d('wifi_enabled')) && truthy(this.d('wifi_connected'))) {
      const ssid = this.d('wifi_ssid');
      out.push(truthy(ssid) ? `\u{1f4e1} Connected to ${pyStr(ssid)}` : '\u{1f4e1} Enabled');
    }
    if (truthy(this.d('vpn_connected'))) out.push('\u{1f512} VPN Connected');
    out.push(`\u{1f50b} ${pyStr(this.d('battery_level'))}%`);
    return out.join(' | ');
  }

  private statusBarLine(): string {
    return `\nStatus Bar: ${this._check_status_bar()}`;
  }

  check_network_status(): string {
    const lines = [
      `Airplane Mode: ${onOff(this.d('airplane_mode'))}`,
      `SIM Card Status: ${this._check_sim_status()}`,
      `Cellular Connection: ${pyStr(this.d('network_connection_status'))}`,
      `Cellular Signal: ${pyStr(this.d('network_signal_strength'))}`,
      `Cellular Network Type: ${pyStr(this.d('network_technology_connected'))}`,
      `Mobile Data Enabled: ${yesNo(this.d('data_enabled'))}`,
      `Data Roaming Enabled: ${yesNo(this.d('roaming_enabled'))}`,
      `Wi-Fi Radio: ${onOff(this.d('wifi_enabled'))}`,
      `Wi-Fi Connected: ${yesNo(this.d('wifi_connected'))}`,
    ];
    if (truthy(this.d('wifi_connected')))
      lines.push(`Connected Wi-Fi Network: ${pyStr(this.d('wifi_ssid'))}`);
    return lines.join('\n');
  }

  check_network_mode_preference(): string {
    const mode = this.d('network_mode_preference');
    // `.value` of the stored enum; a non-text mode was stored as given and has none
    if (typeof mode !== 'string') throw AttributeError_(mode, 'value');
    return `Network Mode Preference: ${mode}`;
  }

  set_network_mode_preference(mode: PyValue): string {
    // Only a text is checked against the modes; anything else is stored as given, as the reference does.
    if (typeof mode === 'string' && !(MODE_PREFERENCES as readonly string[]).includes(mode)) {
      return `Failed to set network mode: '${mode}' is not a valid option. Please use one of: ${MODE_PREFERENCES.join(', ')}${this.statusBarLine()}`;
    }
    this.set('network_mode_preference', mode);
    this.simulate_network_search();
    if (mode === null)
      return `Failed to set network mode: 'None' is not a valid option. Please use one of: ${MODE_PREFERENCES.join(', ')}${this.statusBarLine()}`;
    if (typeof mode !== 'string') throw AttributeError_(mode, 'value');
    return `Preferred Network Mode set to: ${mode}${this.statusBarLine()}`;
  }

  _get_mobile_data_working(): boolean {
    if (truthy(this.d('airplane_mode')) || this.d('network_signal_strength') === 'none') return false;
    if (this.d('network_connection_status') === 'no_service') return false;
    if (
      truthy(this.s('is_abroad')) &&
      (!truthy(this.d('roaming_enabled')) || !truthy(this.s('roaming_allowed')))
    )
      return false;
    if (!truthy(this.d('data_enabled'))) return false;
    if (truthy(this.s('mobile_data_usage_exceeded'))) return false;
    return true;
  }

  run_speed_test(): string {
    const [speed, description] = this._run_speed_test();
    if (speed === null) return `Speed test failed: ${description || 'Could not determine speed'}.`;
    return `Speed Test Result: ${formatFixed(speed, 2)} Mbps (${description}). ${SPEED_ADVICE[description] ?? ''}`;
  }

  /** The simulated download speed (Mbps, rounded to 2 places) and its grade, or null with `No Connection`. */
  _run_speed_test(): [number | null, string] {
    if (!this._get_mobile_data_working()) return [null, 'No Connection'];
    const vpn = this.d('vpn_details');
    let factor = 1.0;
    if (
      truthy(this.d('vpn_connected')) &&
      vpn instanceof PyModel &&
      (vpn as Model<VpnDetails>).server_performance === 'poor'
    )
      factor = 0.1;
    if (truthy(this.d('data_saver_mode'))) factor *= 0.2;
    const [min, max] = TECH_SPEED[this.d('network_technology_connected') as string] ?? [0.0, 0.0];
    const signal = SIGNAL_FACTOR[this.d('network_signal_strength') as string] ?? 0.0;
    const speed = pyRound(((min + max) / 2.0) * signal * factor, 2n) as number;
    const desc =
      speed < 1 ? 'Very Poor' : speed < 5 ? 'Poor' : speed < 25 ? 'Fair' : speed < 100 ? 'Good' : 'Excellent';
    return [speed, desc];
  }

  // ---- airplane mode ----

  toggle_airplane_mode(): string {
    const on = this._toggle_airplane_mode();
    return `Airplane Mode is now ${onOff(on)}.${this.statusBarLine()}`;
  }

  _toggle_airplane_mode(): boolean {
    const wasOn = truthy(this.d('airplane_mode'));
    this.set('airplane_mode', !wasOn);
    if (wasOn) {
      this.set('network_connection_status', 'searching');
      if (truthy(this.d('wifi_enabled'))) this.dropWifi();
    } else {
      this.dropWifi();
      if (truthy(this.d('vpn_connected'))) this._disconnect_vpn();
    }
    this.simulate_network_search();
    return !wasOn;
  }

  private dropWifi(): void {
    this.set('wifi_connected', false);
    this.set('wifi_ssid', null);
    this.set('wifi_signal_strength', 'none');
  }

  turn_airplane_mode_on(): string {
    if (!this._toggle_airplane_mode()) this._toggle_airplane_mode();
    return 'Airplane Mode is now ON.';
  }

  turn_airplane_mode_off(): string {
    if (this._toggle_airplane_mode()) this._toggle_airplane_mode();
    return 'Airplane Mode is now OFF.';
  }

  // ---- SIM ----

  check_sim_status(): string {
    switch (this._check_sim_status()) {
      case 'active':
        return 'Your SIM card is active and working.';
      case 'missing':
        return 'No SIM card detected in the phone.';
      case 'locked_pin':
        return 'The SIM card is locked with a PIN code.';
      case 'locked_puk':
        return 'The SIM card is locked with a PUK code.';
      default:
        return `Unknown SIM status: ${this._check_sim_status()}`;
    }
  }

  _check_sim_status(): string {
    if (truthy(this.d('sim_card_missing'))) return 'missing';
    return this.d('sim_card_status') as string;
  }

  reseat_sim_card(): string {
    this.set('sim_card_missing', false);
    this.simulate_network_search();
    return `SIM card re-seated successfully.${this.statusBarLine()}`;
  }

  unseat_sim_card(): string {
    this.set('sim_card_missing', true);
    this.simulate_network_search();
    return 'SIM card un-seated successfully.';
  }

  lock_sim_card(mode: PyValue): string {
    if (pyEquals(mode, 'pin')) this.set('sim_card_status', 'locked_pin');
    else if (pyEquals(mode, 'puk')) this.set('sim_card_status', 'locked_puk');
    this.simulate_network_search();
    return `SIM card locked successfully in ${pyStr(mode)} mode.`;
  }

  // ---- mobile data and roaming ----

  toggle_data(): string {
    return `Mobile Data is now ${onOff(this._toggle_data())}.${this.statusBarLine()}`;
  }

  _toggle_data(): boolean {
    const next = !truthy(this.d('data_enabled'));
    this.set('data_enabled', next);
    this.simulate_network_search();
    return next;
  }

  turn_data_on(): string {
    this.set('data_enabled', true);
    return 'Data connection restored.';
  }

  turn_data_off(): string {
    if (this._toggle_data()) this._toggle_data();
    return 'Data connection broken.';
  }

  toggle_roaming(): string {
    return `Data Roaming is now ${onOff(this._toggle_roaming())}.${this.statusBarLine()}`;
  }

  _toggle_roaming(): boolean {
    const next = !truthy(this.d('roaming_enabled'));
    this.set('roaming_enabled', next);
    this.simulate_network_search();
    return next;
  }

  turn_roaming_on(): string {
    if (!this._toggle_roaming()) this._toggle_roaming();
    return 'Data Roaming is now ON.';
  }

  turn_roaming_off(): string {
    if (this._toggle_roaming()) this._toggle_roaming();
    return 'Data Roaming is now OFF.';
  }

  check_data_restriction_status(): string {
    return truthy(this.d('data_saver_mode'))
      ? 'Data Saver mode is ON (limits data usage).'
      : 'Data Saver mode is OFF.';
  }

  toggle_data_saver_mode(): string {
    return `Data Saver Mode is now ${onOff(this._toggle_data_saver_mode())}.${this.statusBarLine()}`;
  }

  _toggle_data_saver_mode(): boolean {
    const next = !truthy(this.d('data_saver_mode'));
    this.set('data_saver_mode', next);
    return next;
  }

  turn_data_saver_mode_on(): string {
    if (!this._toggle_data_saver_mode()) this._toggle_data_saver_mode();
    return 'Data Saver Mode is now ON.';
  }

  turn_data_saver_mode_off(): string {
    if (this._toggle_data_saver_mode()) this._toggle_data_saver_mode();
    return 'Data Saver Mode is now OFF.';
  }

  // ---- APN ----

  check_apn_settings(): string {
    this.apnModel('model_copy');
    const name = this.apn('apn_name');
    const mmsc = this.apn('mmsc_url');
    return `Current APN Name: ${truthy(name) ? pyStr(name) : 'Not Set'}\nMMSC URL (for picture messages): ${truthy(mmsc) ? pyStr(mmsc) : 'Not Set'}\n(These are technical settings, usually best left unchanged.)`;
  }

  set_apn_settings(apn_settings: PyValue): string {
    const settings = apn_settings instanceof Map ? APNSettingsSpec.parse(apn_settings) : apn_settings;
    this.set('active_apn_settings', settings);
    const name = this.apn('apn_name');
    this.simulate_network_search();
    return `APN settings set to: ${pyStr(name)}${this.statusBarLine()}`;
  }

  reset_apn_settings(): string {
    this.apnModel('reset_at_reboot').reset_at_reboot = true;
    this.simulate_network_search();
    return `APN settings will reset at reboot.${this.statusBarLine()}`;
  }

  break_apn_settings(): string {
    this.apnModel('apn_name').apn_name = 'broken';
    this.simulate_network_search();
    if (this.d('network_connection_status') !== 'no_service') throw AssertionError_();
    return 'APN settings broken. Please call reset_apn_settings() to fix.';
  }

  break_apn_mms_setting(): string {
    this.apnModel('mmsc_url').mmsc_url = null;
    if (this._can_send_mms()) throw AssertionError_();
    return 'APN MMS setting broken. Please call reset_apn_settings() to fix.';
  }

  // ---- Wi-Fi and Wi-Fi calling ----

  check_wifi_status(): string {
    if (!truthy(this.d('wifi_enabled'))) return 'Wi-Fi is turned OFF.';
    if (truthy(this.d('wifi_connected')))
      return `Wi-Fi is ON and connected to '${pyStr(this.d('wifi_ssid'))}'. Signal strength: ${pyStr(this.d('wifi_signal_strength'))}.`;
    return 'Wi-Fi is ON but not connected to any network.';
  }

  toggle_wifi(): string {
    if (truthy(this.d('airplane_mode')))
      return `Cannot change Wi-Fi settings while Airplane Mode is ON.${this.statusBarLine()}`;
    const next = !truthy(this.d('wifi_enabled'));
    this.set('wifi_enabled', next);
    if (!next) this.dropWifi();
    return `Wi-Fi is now ${onOff(next)}.${this.statusBarLine()}`;
  }

  check_wifi_calling_status(): string {
    return `Wi-Fi Calling is currently turned ${onOff(this.d('wifi_calling_enabled'))}.`;
  }

  toggle_wifi_calling(): string {
    return `Wi-Fi Calling is now ${onOff(this._toggle_wifi_calling())}.${this.statusBarLine()}`;
  }

  _toggle_wifi_calling(): boolean {
    const next = !truthy(this.d('wifi_calling_enabled'));
    this.set('wifi_calling_enabled', next);
    return next;
  }

  set_wifi_calling(enabled: PyValue, mms_over_wifi: PyValue = null): string {
    if (!pyEquals(this.d('wifi_calling_enabled'), enabled)) this._toggle_wifi_calling();
    let msg = `Wi-Fi Calling is now ${onOff(enabled)}.`;
    if (mms_over_wifi !== null) {
      this.set('wifi_calling_mms_over_wifi', mms_over_wifi);
      msg += `\nMMS over Wi-Fi is now ${onOff(mms_over_wifi)}.`;
    }
    return msg;
  }

  // ---- VPN ----

  check_vpn_status(): string {
    const details = this.d('vpn_details');
    if (truthy(this.d('vpn_connected'))) {
      if (details instanceof PyModel)
        return `VPN is ON and connected. Details: ${vpnDetailsRepr(modelDump(details))}`;
      return 'VPN is ON and connected (no specific details available).';
    }
    if (truthy(this.d('vpn_enabled_setting')))
      return 'VPN is turned ON in settings, but currently not connected.';
    return 'VPN is turned OFF.';
  }

  connect_vpn(): string {
    if (truthy(this.d('vpn_connected'))) return 'VPN already connected.';
    this.set('vpn_connected', true);
    this.set('vpn_details', this.defaultVpnDetails);
    return `VPN connected successfully.${this.statusBarLine()}`;
  }

  disconnect_vpn(): string {
    const done = this._disconnect_vpn();
    return `${done ? 'VPN disconnected successfully.' : 'No active VPN connection to disconnect.'}${this.statusBarLine()}`;
  }

  _disconnect_vpn(): boolean {
    if (!truthy(this.d('vpn_connected'))) return false;
    this.set('vpn_connected', false);
    this.set('vpn_details', null);
    return true;
  }

  break_vpn(): string {
    this.connect_vpn();
    const details = this.d('vpn_details');
    if (!(details instanceof PyModel)) throw AttributeError_(details, 'server_performance');
    (details as Model<VpnDetails>).server_performance = 'poor';
    return 'VPN connection broken.';
  }

  // ---- apps ----

  private app(app_name: PyValue): Model<AppStatus> | undefined {
    const found = dictGet(this.device.app_statuses as unknown as PyDict, requireHashable(app_name));
    return found instanceof PyModel ? (found as Model<AppStatus>) : undefined;
  }

  private granted(app: Model<AppStatus>): string[] {
    return [...modelDump(app.permissions)]
      .filter(([, allowed]) => truthy(allowed))
      .map(([name]) => String(name).replaceAll('_', ' ').toLowerCase());
  }

  check_installed_apps(): string {
    const names = [...this.device.app_statuses.keys()].map((k) => pyStr(k));
    return `The following apps are installed on the phone: ${names.join(', ')}`;
  }

  check_app_status(app_name: PyValue): string {
    const app = this.app(app_name);
    if (!app) return `App '${pyStr(app_name)}' not found on this phone.`;
    const lines = [`Status for App: ${pyStr(app_name)}`];
    const granted = this.granted(app);
    if (granted.length === 0) lines.push(' - Permissions: None granted.');
    else {
      lines.push(' - Permissions Granted:');
      for (const p of granted) lines.push(`   - ${p}`);
    }
    return lines.join('\n');
  }

  check_app_permissions(app_name: PyValue): string {
    const app = this.app(app_name);
    if (!app) return `App '${pyStr(app_name)}' not found on this phone.`;
    const granted = this.granted(app);
    if (granted.length === 0) return `App '${pyStr(app_name)}' currently has no permissions granted.`;
    return `App '${pyStr(app_name)}' has permission for: ${granted.join(', ')}.`;
  }

  grant_app_permission(app_name: PyValue, permission: PyValue): string {
    const [ok, message] = this._grant_app_permission(app_name, permission);
    return `${ok ? 'Success. ' : 'Error. '}${message}${this.statusBarLine()}`;
  }

  _grant_app_permission(app_name: PyValue, permission: PyValue): [boolean, string] {
    const app = this.app(app_name);
    const perm = strMethod(permission, 'lower').toLowerCase();
    if (!app) return [false, `App '${pyStr(app_name)}' not found. Cannot grant permission.`];
    const perms = app.permissions as unknown as Record<string, PyValue>;
    const available: string[] = [...PERMISSION_NAMES];
    if (!available.includes(perm))
      return [
        false,
        `Permission '${perm}' not tracked for app '${pyStr(app_name)}', available permissions: ${repr(available)}`,
      ];
    perms[perm] = true;
    return [true, `Permission '${perm}' granted to app '${pyStr(app_name)}'.`];
  }

  remove_app_permission(app_name: PyValue, permission: PyValue): PyTuple {
    const app = this.app(app_name);
    const perm = strMethod(permission, 'lower').toLowerCase();
    if (!app) return new PyTuple([false, `App '${pyStr(app_name)}' not found. Cannot remove permission.`]);
    if (!(PERMISSION_NAMES as readonly string[]).includes(perm))
      return new PyTuple([false, `Permission '${perm}' not tracked for app '${pyStr(app_name)}'.`]);
    (app.permissions as unknown as Record<string, PyValue>)[perm] = false;
    return new PyTuple([true, `Permission '${perm}' removed from app '${pyStr(app_name)}'.`]);
  }

  // ---- MMS ----

  can_send_mms(): string {
    return this._can_send_mms()
      ? 'Your messaging app can send MMS messages.'
      : 'Your messaging app cannot send MMS messages.';
  }

  _can_send_mms(): boolean {
    if (!this._get_mobile_data_working()) return false;
    if (this.d('network_technology_connected') === '2G') return false;
    if (truthy(this.d('wifi_calling_enabled')) && truthy(this.d('wifi_calling_mms_over_wifi'))) return false;
    if (this.apn('mmsc_url') === null) return false;
    const messaging = this.app('messaging');
    if (!messaging) return false;
    return truthy(messaging.permissions.storage) && truthy(messaging.permissions.sms);
  }

  // ---- device ----

  reboot_device(): string {
    return `${this._reboot_device()}${this.statusBarLine()}`;
  }

  _reboot_device(): string {
    const lines: string[] = [];
    if (truthy(this.apn('reset_at_reboot'))) {
      lines.push('Resetting APN settings...');
      this.set('active_apn_settings', newApnSettings());
    }
    lines.push('Restarting network services...');
    this.set('network_connection_status', 'searching');
    this.simulate_network_search();
    return lines.join('\n');
  }

  /** Connect as the SIM, the mode preference and the local signal allow; then the blockers cut it. */
  simulate_network_search(): null {
    const sim = this._check_sim_status();
    const signalOf = (tech: string): PyValue => dictGet(this.s('signal_strength') as PyDict, tech) ?? 'none';
    const connect = (tech: string, signal: PyValue) => {
      this.set('network_technology_connected', tech);
      this.set('network_signal_strength', signal);
    };
    if (sim === 'active') {
      this.set('network_connection_status', 'connected');
      const pref = this.d('network_mode_preference');
      if (pref === '4g_5g_preferred') {
        const five = signalOf('5G');
        if (five === 'none') connect('4G', signalOf('4G'));
        else connect('5G', five);
      } else if (pref === '3g_only') connect('3G', signalOf('3G'));
      else if (pref === '2g_only') connect('2G', signalOf('2G'));
      else connect('4G', signalOf('4G'));
    } else this.noService();
    if (truthy(this.d('airplane_mode'))) this.noService();
    if (this.apn('apn_name') === 'broken') this.noService();
    if (!truthy(this.s('line_active'))) this.noService();
    return null;
  }

  private noService(): void {
    this.set('network_connection_status', 'no_service');
    this.set('network_technology_connected', 'none');
    this.set('network_signal_strength', 'none');
  }

  // ---- payment ----

  check_payment_request(): string {
    const req = this.surroundings.payment_request;
    if (req === null) return 'No payment request has been made.';
    return `You have a payment request for bill ${pyStr(req.bill_id)} of ${pyStr(req.amount_due)} USD.`;
  }

  make_payment(): string {
    const req = this.surroundings.payment_request;
    if (req === null) return 'You do not have a payment request.';
    req.paid = true;
    return `Payment of ${pyStr(req.amount_due)} USD has been made for bill ${pyStr(req.bill_id)}.`;
  }

  /** The request `sync_tools` places when the agent has sent one (`PaymentRequest(bill_id, amount_due)`). */
  placePaymentRequest(bill_id: PyValue, amount_due: PyValue): void {
    this.surroundings.payment_request = PaymentRequestSpec.parse(
      new Map<PyKey, PyValue>([
        ['bill_id', bill_id],
        ['amount_due', amount_due],
      ]),
    );
  }

  // ---- assertions ----

  assert_airplane_mode_status(expected_status: PyValue): boolean {
    return pyEquals(this.d('airplane_mode'), expected_status);
  }

  assert_service_status(expected_status: PyValue): boolean {
    const valid = ['connected', 'searching', 'no_service', 'emergency_only'];
    if (typeof expected_status !== 'string' || !valid.includes(expected_status))
      throw ValueError_(`${repr(expected_status)} is not a valid NetworkStatus`);
    return this.d('network_connection_status') === expected_status;
  }

  assert_mobile_data_status(expected_status: PyValue): boolean {
    return pyEquals(this._get_mobile_data_working(), expected_status);
  }

  assert_mobile_roaming_status(expected_status: PyValue): boolean {
    return pyEquals(this.d('roaming_enabled'), expected_status);
  }

  assert_mobile_data_saver_mode_status(expected_status: PyValue): boolean {
    return pyEquals(this.d('data_saver_mode'), expected_status);
  }

  assert_internet_speed(expected_speed: PyValue, expected_desc: PyValue = null): boolean {
    const [speed, desc] = this._run_speed_test();
    const measured = speed ?? 0.0;
    const fast = compare('>=', measured, expected_speed);
    if (expected_desc === null) return fast;
    return fast && desc.toLowerCase() === strMethod(expected_desc, 'lower').toLowerCase();
  }

  assert_internet_not_excellent(): boolean {
    return this._run_speed_test()[1].toLowerCase() !== 'excellent';
  }

  assert_can_send_mms(expected_status: PyValue): boolean {
    return pyEquals(this._can_send_mms(), expected_status);
  }

  assert_mobile_data_usage_exceeded(expected_status: PyValue): boolean {
    return pyEquals(this.s('mobile_data_usage_exceeded'), expected_status);
  }
}

/** `repr(vpn_details.model_dump())`: pydantic keeps the enum member, so it prints as `<PerformanceLevel.X: 'x'>`. */
function vpnDetailsRepr(details: PyDict): string {
  const parts: string[] = [];
  for (const [k, v] of details) {
    const shown =
      k === 'server_performance' && typeof v === 'string'
        ? `<PerformanceLevel.${v.toUpperCase()}: ${repr(v)}>`
        : repr(v);
    parts.push(`${repr(k)}: ${shown}`);
  }
  return `{${parts.join(', ')}}`;
}
