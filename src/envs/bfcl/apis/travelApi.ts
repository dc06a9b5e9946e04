/**
 * TravelAPI: the flight booking, credit card and budget class of the BFCL multi-turn
 * environment (reference: `travel_booking.py`, SPEC 8.7).
 *
 * State fields are plain `PyValue`s because scenarios and calls may hand the reference any
 * Python value; every operation that the reference performs on them goes through the `py/ops`
 * helpers so that odd types fail with CPython's exact error text.
 */

import { DATE_FORMAT, strptime } from '../../py/datetime.js';
import { AttributeError_, PyException, TypeError_, ValueError_ } from '../../py/errors.js';
import { str } from '../../py/format.js';
import {
  add,
  contains,
  delItem,
  getItem,
  lt,
  mul,
  pyRound,
  requireHashable,
  setItem,
  strFor,
  sub,
  toFloat,
  truediv,
} from '../../py/ops.js';
import { PyRandom, randomFromScenarioSeed } from '../../py/random.js';
import { intOfDigits, pyIsDigit } from '../../py/text.js';
import {
  deepCopy,
  dictOf,
  type PyDict,
  PySet,
  PyTuple,
  type PyValue,
  pyEquals,
  typeName,
} from '../../py/values.js';
import { type ApiClass, type BfclApi, longContextConstant, opt, req, type ScenarioContext } from './api.js';

const DEFAULT_RANDOM_SEED = 141053n;

/** Keys `_load_scenario` reads, with their defaults (DEFAULT_STATE, `random_seed` aside). */
const STATE_KEYS = [
  'credit_card_list',
  'booking_record',
  'access_token',
  'token_type',
  'token_expires_in',
  'token_scope',
  'user_first_name',
  'user_last_name',
  'budget_limit',
] as const;
type StateKey = (typeof STATE_KEYS)[number];

function defaultState(key: StateKey): PyValue {
  return key === 'credit_card_list' || key === 'booking_record' ? new Map() : null;
}

/**
 * Base fares of `get_flight_cost`, per departure airport in the reference's insertion order
 * (long-context mode lists a cost for every route in this order; OKD occurs twice).
 */
const ROUTE_GROUPS: readonly (readonly [string, string])[] = [
  ['SFO', 'LAX 200 JFK 500 ORD 400 BOS 450 RMS 300 SBK 350 MPC 370 SVP 320 SHD 330 SSV 340 OKD 360 WLB 310'],
  ['SFO', 'CRH 380 ATV 390 PHV 420 GFD 430 CIA 700'],
  ['LAX', 'SFO 100 JFK 600 ORD 500 BOS 550 RMS 310 SBK 320 MPC 330 SVP 340 SHD 350 SSV 360 OKD 370 WLB 380'],
  ['LAX', 'CRH 390 ATV 400 PHV 410 GFD 420 HND 430'],
  ['JFK', 'ORD 300 BOS 250 RMS 450 SBK 460 MPC 470 SVP 480 SHD 490 SSV 500 OKD 510 WLB 520 CRH 530'],
  ['JFK', 'ATV 540 PHV 550 GFD 560 LAX 570 HND 800 PVG 950 PEK 1000'],
  ['ORD', 'LAX 180 BOS 200 RMS 350 SBK 360 MPC 370 SVP 380 SHD 390 SSV 400 OKD 410 WLB 420 CRH 430'],
  ['ORD', 'ATV 440 PHV 450 GFD 460'],
  ['BOS', 'RMS 400 SBK 410 MPC 420 SVP 430 SHD 440 SSV 450 OKD 460 WLB 470 CRH 480 ATV 490 PHV 500 GFD 510'],
  ['RMS', 'BOS 200 JFK 210 SBK 220 MPC 230 SVP 240 SHD 250 SSV 260 OKD 270 WLB 280 CRH 290 ATV 300'],
  ['RMS', 'PHV 310 GFD 320 LAX 330'],
  ['SBK', 'MPC 200 SVP 210 SHD 220 SSV 230 OKD 240 WLB 250 CRH 260 ATV 270 PHV 280 GFD 290'],
  ['MPC', 'SVP 210 SHD 220 SSV 230 OKD 240 WLB 250 CRH 260 ATV 270 PHV 280 GFD 290'],
  ['SVP', 'SHD 230 SSV 240 OKD 250 WLB 260 CRH 270 ATV 280 PHV 290 GFD 300'],
  ['SHD', 'SSV 220 OKD 230 WLB 240 CRH 250 ATV 260 PHV 270 GFD 280'],
  ['SSV', 'OKD 240 WLB 250 CRH 260 ATV 270 PHV 280 GFD 290'],
  ['OKD', 'WLB 230 CRH 240 ATV 250 PHV 260 GFD 270'],
  ['WLB', 'CRH 250 ATV 260 PHV 270 GFD 280'],
  ['CRH', 'ATV 240 PHV 250 GFD 260 SFO 270 RMS 280 HKG 290 JFK 300'],
  ['ATV', 'PHV 230 GFD 240'],
  ['PHV', 'GFD 220'],
  ['LHR', 'CDG 100'],
  ['OKD', 'LAX 220'],
];

/** `"FROM|TO"` -> base fare, in table order. */
const BASE_COSTS: ReadonlyMap<string, number> = (() => {
  const m = new Map<string, number>();
  for (const [from, rest] of ROUTE_GROUPS) {
    const parts = rest.split(' ');
    for (let i = 0; i < parts.length; i += 2) m.set(`${from}|${parts[i]}`, Number(parts[i + 1]));
  }
  return m;
})();

const CLASS_FACTORS: ReadonlyMap<string, number> = new Map([
  ['economy', 1],
  ['business', 2],
  ['first', 5],
]);

/**
 * USD -> currency rates in table order. Integer rates are Python ints (so `10 * 7` stays an
 * int until `float()`), the others floats.
 */
const EXCHANGE_RATES: readonly (readonly [string, bigint | number])[] = [
  ['RMB', 7n],
  ['EUR', 0.8],
  ['JPY', 110n],
  ['GBP', 0.7],
  ['CAD', 1.3],
  ['AUD', 1.4],
  ['INR', 70n],
  ['RUB', 60n],
  ['BRL', 3.8],
  ['MXN', 20n],
];

const AIRPORTS: readonly string[] = [
  'RMS',
  'SBK',
  'MPC',
  'SVP',
  'SHD',
  'CDG',
  'LHR',
  'SSV',
  'OKD',
  'WLB',
  'PEK',
  'HND',
  'HKG',
  'CIA',
  'CRH',
  'ATV',
  'PHV',
  'GFD',
  'SFO',
  'LAX',
  'JFK',
  'ORD',
  'BOS',
];

const AIRPORT_BY_CITY: ReadonlyMap<string, string> = new Map([
  ['Rivermist', 'RMS'],
  ['Stonebrook', 'SBK'],
  ['Maplecrest', 'MPC'],
  ['Silverpine', 'SVP'],
  ['Shadowridge', 'SHD'],
  ['London', 'LHR'],
  ['Paris', 'CDG'],
  ['Sunset Valley', 'SSV'],
  ['Oakendale', 'OKD'],
  ['Willowbend', 'WLB'],
  ['Crescent Hollow', 'CRH'],
  ['Autumnville', 'ATV'],
  ['Pinehaven', 'PHV'],
  ['Greenfield', 'GFD'],
  ['San Francisco', 'SFO'],
  ['Los Angeles', 'LAX'],
  ['New York', 'JFK'],
  ['Chicago', 'ORD'],
  ['Boston', 'BOS'],
  ['Beijing', 'PEK'],
  ['Hong Kong', 'HKG'],
  ['Rome', 'CIA'],
  ['Tokyo', 'HND'],
]);

const VALID_CLASSES = new PySet(['economy', 'business', 'first']);
/**
 * Quirk: book_flight prints the Python set `{"economy", "business", "first"}`, whose iteration
 * order depends on PYTHONHASHSEED. This is the order under hash seed 0 (error case travel-016).
 */
const VALID_CLASSES_REPR = "{'first', 'business', 'economy'}";

const SUPPORT_MESSAGE =
  'Thank you for contacting customer support. Your message has been received and we will get back to you shortly.';

// ---------------------------------------------------------------------------------------------

/** `datetime.strptime(s, '%Y-%m-%d')` as the date fields the class uses. */
function strptimeYmd(s: PyValue): { year: number; month: number; day: number } {
  const [year, month, day] = strptime(s, DATE_FORMAT);
  return { year, month, day };
}

/** `scenario.get(key, default)` */
function scenarioValue(config: PyDict, key: string, fallback: PyValue): PyValue {
  const v = config.get(key);
  return v === undefined ? fallback : v;
}

// ---------------------------------------------------------------------------------------------

export class TravelApi implements BfclApi {
  readonly className = 'TravelAPI' as const;

  credit_card_list: PyValue = new Map();
  booking_record: PyValue = new Map();
  access_token: PyValue = null;
  token_type: PyValue = null;
  token_expires_in: PyValue = null;
  token_scope: PyValue = null;
  user_first_name: PyValue = null;
  user_last_name: PyValue = null;
  budget_limit: PyValue = null;
  long_context = false;

  private random = new PyRandom(DEFAULT_RANDOM_SEED);

  loadScenario(config: PyDict, ctx: ScenarioContext): void {
    this.random = randomFromScenarioSeed(
      scenarioValue(config, 'random_seed', DEFAULT_RANDOM_SEED),
      'TravelAPI',
    );
    for (const key of STATE_KEYS) {
      const v = config.get(key);
      this[key] = v === undefined ? defaultState(key) : v;
    }
    this.long_context = ctx.longContext;
    if (this.long_context) {
      // The reference shares the module-level records by reference (SPEC 3.4 quirk); a
      // booking or cancellation must not leak into the constants, so each record is copied.
      this.mergeExtension('credit_card_list', longContextConstant(ctx, 'CREDIT_CARD_EXTENSION'));
      this.mergeExtension('booking_record', longContextConstant(ctx, 'BOOKING_RECORD_EXTENSION'));
    }
  }

  /** Add the extension records whose ids are not present yet. */
  private mergeExtension(field: 'credit_card_list' | 'booking_record', extension: PyValue): void {
    if (!(extension instanceof Map)) throw new Error(`long-context ${field} extension is not a dict`);
    for (const [id, record] of extension) {
      if (!contains(this[field], id)) setItem(this[field], id, deepCopy(record));
    }
  }

  publicState(): ReadonlyMap<string, PyValue> {
    const state = new Map<string, PyValue>();
    for (const key of STATE_KEYS) state.set(key, this[key]);
    state.set('long_context', this.long_context);
    return state;
  }

  /** The shared token check: `None` passes it when the token is also `None`. */
  tokenError(accessToken: PyValue): string | undefined {
    if (pyEquals(this.token_expires_in, 0n)) return 'Token expired';
    if (!pyEquals(accessToken, this.access_token)) return 'Invalid access token';
    return undefined;
  }

  authenticate_travel(grantType: PyValue, firstName: PyValue, lastName: PyValue): PyDict {
    this.token_expires_in = 2n;
    this.access_token = this.random.randint(100000, 999999).toString();
    this.token_type = 'Bearer';
    this.token_scope = grantType;
    this.user_first_name = firstName;
    this.user_last_name = lastName;
    return dictOf({
      expires_in: 2n,
      access_token: this.access_token,
      token_type: 'Bearer',
      scope: grantType,
    });
  }

  travel_get_login_status(): PyDict {
    const loggedOut = this.token_expires_in === null || pyEquals(this.token_expires_in, 0n);
    return dictOf({ status: !loggedOut });
  }

  register_credit_card(
    accessToken: PyValue,
    cardNumber: PyValue,
    expirationDate: PyValue,
    cardholderName: PyValue,
    cvn: PyValue,
  ): PyDict {
    // Only this method distinguishes an uninitialised token.
    if (this.token_expires_in === null) return dictOf({ error: 'Token not initialized' });
    const tokenError = this.tokenError(accessToken);
    if (tokenError) return dictOf({ error: tokenError });
    // Quirk: the card *number* is looked up among the card *ids*.
    if (contains(this.credit_card_list, cardNumber)) return dictOf({ error: 'Card already registered' });
    const cardId = this.random.randint(100000000000n, 999999999999n).toString();
    const record = dictOf({
      card_number: cardNumber,
      expiration_date: expirationDate,
      cardholder_name: cardholderName,
      card_verification_number: cvn,
    });
    // The balance is drawn after the id and after the record's other fields are evaluated.
    record.set('balance', this.random.randint(10000, 99999));
    setItem(this.credit_card_list, cardId, record);
    return dictOf({ card_id: cardId });
  }

  /**
   * `get_flight_cost`: the base fare of the (directional) route times the class factor, doubled
   * when the digits of the date sum to an even number. `reported` is what the method returns:
   * that one cost, or in long-context mode the cost of every route with the same factors.
   */
  flightCost(
    from: PyValue,
    to: PyValue,
    date: PyValue,
    travelClass: PyValue,
  ): { cost: number; reported: number[] } {
    // `(from, to) in base_costs` hashes the tuple first.
    requireHashable(from);
    requireHashable(to);
    const base =
      typeof from === 'string' && typeof to === 'string' ? BASE_COSTS.get(`${from}|${to}`) : undefined;
    if (base === undefined) throw ValueError_('No available route for the given airports.');
    const factor = typeof travelClass === 'string' ? CLASS_FACTORS.get(travelClass) : undefined;
    if (factor === undefined)
      throw ValueError_('Invalid travel class. Options are: economy, business, first.');
    // `sum(int(c) for c in travel_date if c.isdigit())`: any iterable of strings works.
    let digitSum = 0n;
    for (const ch of iterateForDigits(date)) {
      if (pyIsDigit(strFor(ch, 'isdigit'))) digitSum += intOfDigits(ch as string);
    }
    const dateFactor = digitSum % 2n === 0n ? 2 : 1;
    const cost = base * factor * dateFactor;
    if (!this.long_context) return { cost, reported: [cost] };
    return { cost, reported: [...BASE_COSTS.values()].map((b) => b * factor * dateFactor) };
  }

  get_credit_card_balance(accessToken: PyValue, cardId: PyValue): PyDict {
    const tokenError = this.tokenError(accessToken);
    if (tokenError) return dictOf({ error: tokenError });
    if (!contains(this.credit_card_list, cardId)) {
      const ids = listKeys(this.credit_card_list);
      return dictOf({ error: "Card not registered. Here are a list of card_id's: " + str(ids) });
    }
    return dictOf({ card_balance: getItem(getItem(this.credit_card_list, cardId), 'balance') });
  }

  book_flight(
    accessToken: PyValue,
    cardId: PyValue,
    date: PyValue,
    from: PyValue,
    to: PyValue,
    travelClass: PyValue,
  ): PyDict {
    const fail = (error: string) => dictOf({ booking_status: false, error });
    const tokenError = this.tokenError(accessToken);
    if (tokenError) return fail(tokenError);
    if (!contains(this.credit_card_list, cardId)) return fail('Card not registered');
    const card = getItem(this.credit_card_list, cardId);
    if (!contains(card, 'balance')) return fail('Balance not found');
    if (!AIRPORTS.some((a) => pyEquals(a, from))) return fail(`Invalid departure airport code: ${str(from)}`);
    if (!AIRPORTS.some((a) => pyEquals(a, to))) return fail(`Invalid destination airport code: ${str(to)}`);
    try {
      strptimeYmd(date);
    } catch (e) {
      if (e instanceof PyException && e.pyType === 'ValueError')
        return fail('Invalid date format. Use YYYY-MM-DD.');
      throw e;
    }
    if (!contains(VALID_CLASSES, travelClass))
      return fail(`Invalid travel class. Must be one of ${VALID_CLASSES_REPR}`);
    let cost: number;
    try {
      // The reference reads the cost back from a cache keyed by the same four values that
      // get_flight_cost just stored, so its "No available route for the given parameters"
      // branch cannot be reached.
      cost = this.flightCost(from, to, date, travelClass).cost;
    } catch (e) {
      if (e instanceof PyException && e.pyType === 'ValueError') return fail(e.message);
      throw e;
    }
    const balance = getItem(card, 'balance');
    if (lt(balance, cost)) return fail('Insufficient funds');
    // Quirk: the balance, not the cost, is compared against the budget limit.
    if (this.budget_limit !== null && lt(balance, this.budget_limit))
      return fail('Balance is less than budget limit');
    setItem(card, 'balance', sub(balance, cost));
    const bookingId = this.random.randint(1000000, 9999999).toString();
    const transactionId = this.random.randint(10000000, 99999999).toString();
    setItem(
      this.booking_record,
      bookingId,
      dictOf({
        card_id: cardId,
        travel_date: date,
        travel_from: from,
        travel_to: to,
        travel_class: travelClass,
        travel_cost: cost,
        transaction_id: transactionId,
      }),
    );
    return dictOf({
      booking_id: bookingId,
      transaction_id: transactionId,
      booking_status: true,
      booking_history: this.long_context ? this.booking_record : new Map(),
    });
  }

  retrieve_invoice(accessToken: PyValue, bookingId: PyValue): PyDict {
    const tokenError = this.tokenError(accessToken);
    if (tokenError) return dictOf({ error: tokenError });
    if (!contains(this.booking_record, bookingId)) return dictOf({ error: 'Booking not found' });
    const booking = getItem(this.booking_record, bookingId);
    const invoice = dictOf({ booking_id: bookingId });
    for (const field of [
      'travel_date',
      'travel_from',
      'travel_to',
      'travel_class',
      'travel_cost',
      'transaction_id',
    ]) {
      invoice.set(field, getItem(booking, field));
    }
    return dictOf({ invoice });
  }

  get_booking_history(accessToken: PyValue): PyDict {
    const tokenError = this.tokenError(accessToken);
    if (tokenError) return dictOf({ error: tokenError });
    return dictOf({ booking_history: deepCopy(this.booking_record) });
  }

  cancel_booking(accessToken: PyValue, bookingId: PyValue): PyDict {
    const fail = (error: string) => dictOf({ cancel_status: false, error });
    const tokenError = this.tokenError(accessToken);
    if (tokenError) return fail(tokenError);
    if (!contains(this.booking_record, bookingId)) return fail('Booking not found');
    const booking = getItem(this.booking_record, bookingId);
    const cardId = getItem(booking, 'card_id');
    const cost = getItem(booking, 'travel_cost');
    const card = getItem(this.credit_card_list, cardId);
    setItem(card, 'balance', add(getItem(card, 'balance'), cost));
    delItem(this.booking_record, bookingId);
    return dictOf({ cancel_status: true });
  }

  compute_exchange_rate(base: PyValue, target: PyValue, value: PyValue): PyDict {
    for (const [currency, rate] of EXCHANGE_RATES) {
      if (pyEquals(base, 'USD') && pyEquals(target, currency)) {
        return dictOf({ exchanged_value: toFloat(mul(value, rate)) });
      }
      if (pyEquals(base, currency) && pyEquals(target, 'USD')) {
        return dictOf({ exchanged_value: pyRound(truediv(value, rate), 2n) });
      }
    }
    throw ValueError_('No available exchange rate for the given currencies.');
  }

  verify_traveler_information(
    firstName: PyValue,
    lastName: PyValue,
    dateOfBirth: PyValue,
    passportNumber: PyValue,
  ): PyDict {
    const fail = (reason: string) => dictOf({ verification_status: false, verification_failure: reason });
    if (!pyEquals(this.user_first_name, firstName) || !pyEquals(this.user_last_name, lastName)) {
      // Quirk: no space between the two sentences.
      return fail(
        'Cannot book flight information for another user.' +
          `Expected ${str(this.user_first_name)} ${str(this.user_last_name)}, got ${str(firstName)} ${str(lastName)}`,
      );
    }
    let age: number;
    try {
      const birth = strptimeYmd(dateOfBirth);
      // `datetime.today()` is local time.
      const today = new Date();
      const month = today.getMonth() + 1;
      const day = today.getDate();
      const beforeBirthday = month < birth.month || (month === birth.month && day < birth.day);
      age = today.getFullYear() - birth.year - (beforeBirthday ? 1 : 0);
    } catch (e) {
      if (e instanceof PyException && e.pyType === 'ValueError') {
        return fail('Invalid date of birth format. Please use YYYY-MM-DD.');
      }
      throw e;
    }
    if (age < 18) return fail('Traveler must be at least 18 years old.');
    if (!strFor(passportNumber, 'startswith').startsWith('US')) {
      return fail('Passport must be issued by the United States.');
    }
    return dictOf({ verification_status: true });
  }

  set_budget_limit(accessToken: PyValue, budgetLimit: PyValue): PyDict {
    const tokenError = this.tokenError(accessToken);
    if (tokenError) return dictOf({ error: tokenError });
    const limit = toFloat(budgetLimit);
    this.budget_limit = limit;
    return dictOf({ budget_limit: limit });
  }

  purchase_insurance(accessToken: PyValue, bookingId: PyValue, cost: PyValue, cardId: PyValue): PyDict {
    const fail = (error: string) => dictOf({ insurance_status: false, error });
    const tokenError = this.tokenError(accessToken);
    if (tokenError) return fail(tokenError);
    if (this.budget_limit !== null && lt(this.budget_limit, cost)) return fail('Exceeded budget limit');
    if (!contains(this.booking_record, bookingId)) return fail('Booking not found');
    if (!contains(this.credit_card_list, cardId)) return fail('Credit card not registered');
    // No funds check, and nothing but the balance is recorded.
    const card = getItem(this.credit_card_list, cardId);
    setItem(card, 'balance', sub(getItem(card, 'balance'), cost));
    return dictOf({
      insurance_id: this.random.randint(100000000, 999999999).toString(),
      insurance_status: true,
    });
  }
}

/** The items `for ch in travel_date` visits (`iterate` without converting errors). */
function iterateForDigits(v: PyValue): PyValue[] {
  if (typeof v === 'string') return [...v];
  if (Array.isArray(v)) return v;
  if (v instanceof PyTuple) return [...v.items];
  if (v instanceof Map) return [...v.keys()];
  if (v instanceof PySet) return [...v.items];
  throw TypeError_(`'${typeName(v)}' object is not iterable`);
}

/** `list(d.keys())` */
function listKeys(d: PyValue): PyValue[] {
  if (d instanceof Map) return [...d.keys()];
  throw AttributeError_(d, 'keys');
}

export const travelApi: ApiClass<TravelApi> = {
  className: 'TravelAPI',
  stateless: false,
  create: () => new TravelApi(),
  methods: {
    authenticate_travel: {
      params: [
        req('client_id'),
        req('client_secret'),
        req('refresh_token'),
        req('grant_type'),
        req('user_first_name'),
        req('user_last_name'),
      ],
      run: (self, a) => self.authenticate_travel(a[3]!, a[4]!, a[5]!),
    },
    travel_get_login_status: { params: [], run: (self) => self.travel_get_login_status() },
    get_budget_fiscal_year: {
      params: [opt('lastModifiedAfter'), opt('includeRemoved')],
      run: () => dictOf({ budget_fiscal_year: '2018' }),
    },
    register_credit_card: {
      params: [
        req('access_token'),
        req('card_number'),
        req('expiration_date'),
        req('cardholder_name'),
        req('card_verification_number'),
      ],
      run: (self, a) => self.register_credit_card(a[0]!, a[1]!, a[2]!, a[3]!, a[4]!),
    },
    get_flight_cost: {
      params: [req('travel_from'), req('travel_to'), req('travel_date'), req('travel_class')],
      run: (self, a) => dictOf({ travel_cost_list: self.flightCost(a[0]!, a[1]!, a[2]!, a[3]!).reported }),
    },
    get_credit_card_balance: {
      params: [req('access_token'), req('card_id')],
      run: (self, a) => self.get_credit_card_balance(a[0]!, a[1]!),
    },
    book_flight: {
      params: [
        req('access_token'),
        req('card_id'),
        req('travel_date'),
        req('travel_from'),
        req('travel_to'),
        req('travel_class'),
      ],
      run: (self, a) => self.book_flight(a[0]!, a[1]!, a[2]!, a[3]!, a[4]!, a[5]!),
    },
    retrieve_invoice: {
      params: [req('access_token'), opt('booking_id'), opt('insurance_id')],
      // Both optional parameters default to None; insurance_id is never read.
      run: (self, a) => self.retrieve_invoice(a[0]!, a[1] === undefined ? null : a[1]),
    },
    get_booking_history: {
      params: [req('access_token')],
      run: (self, a) => self.get_booking_history(a[0]!),
    },
    list_all_airports: { params: [], run: () => [...AIRPORTS] },
    cancel_booking: {
      params: [req('access_token'), req('booking_id')],
      run: (self, a) => self.cancel_booking(a[0]!, a[1]!),
    },
    compute_exchange_rate: {
      params: [req('base_currency'), req('target_currency'), req('value')],
      run: (self, a) => self.compute_exchange_rate(a[0]!, a[1]!, a[2]!),
    },
    verify_traveler_information: {
      params: [req('first_name'), req('last_name'), req('date_of_birth'), req('passport_number')],
      run: (self, a) => self.verify_traveler_information(a[0]!, a[1]!, a[2]!, a[3]!),
    },
    set_budget_limit: {
      params: [req('access_token'), req('budget_limit')],
      run: (self, a) => self.set_budget_limit(a[0]!, a[1]!),
    },
    get_nearest_airport_by_city: {
      params: [req('location')],
      run: (_self, a) => {
        const location = a[0]!;
        requireHashable(location); // dict.get hashes its key
        const airport = typeof location === 'string' ? AIRPORT_BY_CITY.get(location) : undefined;
        return dictOf({ nearest_airport: airport ?? 'Unknown' });
      },
    },
    purchase_insurance: {
      // Python order (the function doc lists insurance_cost before booking_id).
      params: [
        req('access_token'),
        req('insurance_type'),
        req('booking_id'),
        req('insurance_cost'),
        req('card_id'),
      ],
      run: (self, a) => self.purchase_insurance(a[0]!, a[2]!, a[3]!, a[4]!),
    },
    contact_customer_support: {
      params: [req('booking_id'), req('message')],
      run: (self, a) =>
        contains(self.booking_record, a[0]!)
          ? dictOf({ customer_support_message: SUPPORT_MESSAGE })
          : dictOf({ error: 'Booking not found' }),
    },
    get_all_credit_cards: {
      params: [],
      run: (self) => dictOf({ credit_card_list: self.credit_card_list }),
    },
  },
};
