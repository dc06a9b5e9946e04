import { describe, expect, it } from 'vitest';
import type { ScenarioContext } from '../../src/envs/bfcl/apis/api.js';
import { type TravelApi, travelApi } from '../../src/envs/bfcl/apis/travelApi.js';
import { parsePyJson } from '../../src/envs/py/json.js';
import type { PyDict, PyValue } from '../../src/envs/py/values.js';
import { dictOf, PyTuple, toStateJson } from '../../src/envs/py/values.js';
import { callMethod } from '../support/api.js';

const plain: ScenarioContext = { longContext: false, constants: undefined };

/** Tiny stand-ins for the long-context tables (the real ones come from the data directory). */
function longCtx(): ScenarioContext {
  return {
    longContext: true,
    constants: new Map<string, PyValue>([
      [
        'CREDIT_CARD_EXTENSION',
        dictOf({
          '144756014165': dictOf({ balance: 1.0 }),
          ext_card: dictOf({ card_number: 'ext_card', balance: 5000.0 }),
        }),
      ],
      [
        'BOOKING_RECORD_EXTENSION',
        dictOf({
          booking_901: dictOf({
            card_id: 'ext_card',
            travel_date: '2024-05-21',
            travel_from: 'SFO',
            travel_to: 'JFK',
            travel_class: 'economy',
            travel_cost: 400.0,
            transaction_id: 'trans_001',
          }),
        }),
      ],
    ]),
  };
}

// The scenario of multi_turn_base_152.
const SCENARIO = `{"credit_card_list": {"144756014165": {"card_number": "9356074812347623",
  "cardholder_name": "Michael Thompson", "expiry_date": "12/26", "cvv": 123, "balance": 10000.0}},
  "booking_record": {}, "access_token": "secureAccessToken12345", "token_type": "Bearer",
  "token_expires_in": 3600, "token_scope": "booking", "user_first_name": "Michael",
  "user_last_name": "Thompson", "budget_limit": 10000.0}`;
const TOKEN = 'secureAccessToken12345';
const CARD = '144756014165';

function make(configJson = SCENARIO, ctx = plain): TravelApi {
  const inst = travelApi.create();
  inst.loadScenario(parsePyJson(configJson) as PyDict, ctx);
  return inst;
}

function call(inst: TravelApi, name: string, ...args: (PyValue | undefined)[]): string {
  return callMethod(travelApi, inst, name, ...args);
}

const book = (
  inst: TravelApi,
  date: PyValue = '2026-01-01',
  from: PyValue = 'SFO',
  to: PyValue = 'LAX',
  cls: PyValue = 'economy',
) => call(inst, 'book_flight', TOKEN, CARD, date, from, to, cls);

describe('TravelAPI', () => {
  it('publishes its attributes in vars() order, defaults filled in', () => {
    const inst = make('{}');
    expect([...inst.publicState().keys()]).toEqual([
      'credit_card_list',
      'booking_record',
      'access_token',
      'token_type',
      'token_expires_in',
      'token_scope',
      'user_first_name',
      'user_last_name',
      'budget_limit',
      'long_context',
    ]);
    expect(call(inst, 'travel_get_login_status')).toBe('{"status": false}');
    // A None token matches a None argument.
    expect(call(inst, 'get_booking_history', null)).toBe('{"booking_history": {}}');
    expect(call(inst, 'register_credit_card', null, '1', '12/30', 'A B', 1n)).toBe(
      '{"error": "Token not initialized"}',
    );
  });

  it('draws ids from the seeded generator in the reference order', () => {
    const inst = make('{}');
    expect(call(inst, 'authenticate_travel', 'c', 's', 'r', 'read_write', 'A', 'B')).toBe(
      '{"expires_in": 2, "access_token": "251675", "token_type": "Bearer", "scope": "read_write"}',
    );
    expect(call(inst, 'register_credit_card', '251675', '4111', '12/30', 'A B', 1n)).toBe(
      '{"card_id": "391310425148"}',
    );
    expect(toStateJson(inst.publicState().get('credit_card_list')!)).toEqual({
      '391310425148': {
        card_number: '4111',
        expiration_date: '12/30',
        cardholder_name: 'A B',
        card_verification_number: 1,
        balance: 58617,
      },
    });
    // The balance is a Python int.
    expect(call(inst, 'get_credit_card_balance', '251675', '391310425148')).toBe('{"card_balance": 58617}');
  });

  it('books, invoices, insures and cancels', () => {
    const inst = make();
    expect(book(inst)).toBe(
      '{"booking_id": "3426812", "transaction_id": "45451592", "booking_status": true, "booking_history": {}}',
    );
    expect(call(inst, 'retrieve_invoice', TOKEN, '3426812')).toBe(
      '{"invoice": {"booking_id": "3426812", "travel_date": "2026-01-01", "travel_from": "SFO", "travel_to": "LAX", ' +
        '"travel_class": "economy", "travel_cost": 400.0, "transaction_id": "45451592"}}',
    );
    expect(call(inst, 'retrieve_invoice', TOKEN)).toBe('{"error": "Booking not found"}');
    expect(call(inst, 'get_credit_card_balance', TOKEN, CARD)).toBe('{"card_balance": 9600.0}');
    // The Python parameter order: insurance_type, booking_id, insurance_cost, card_id.
    expect(call(inst, 'purchase_insurance', TOKEN, 'travel', '3426812', 50n, CARD)).toMatch(
      /^\{"insurance_id": "\d{9}", "insurance_status": true\}$/,
    );
    expect(call(inst, 'get_credit_card_balance', TOKEN, CARD)).toBe('{"card_balance": 9550.0}');
    expect(call(inst, 'cancel_booking', TOKEN, '3426812')).toBe('{"cancel_status": true}');
    expect(call(inst, 'get_credit_card_balance', TOKEN, CARD)).toBe('{"card_balance": 9950.0}');
    expect(call(inst, 'contact_customer_support', '3426812', 'hi')).toBe('{"error": "Booking not found"}');
  });

  it('checks booking preconditions in the reference order', () => {
    const inst = make();
    expect(call(inst, 'book_flight', 'bad', 'nope', 1n, 'x', 'y', 'z')).toBe(
      '{"booking_status": false, "error": "Invalid access token"}',
    );
    expect(book(inst, 20260101n)).toBe('Error during execution: strptime() argument 1 must be str, not int');
    expect(book(inst, '2026-01-01', 'SFO', 'XXX')).toBe(
      '{"booking_status": false, "error": "Invalid destination airport code: XXX"}',
    );
    // The Python set is printed in its hash-seed-0 order.
    expect(book(inst, '2026-01-01', 'SFO', 'LAX', 'premium')).toBe(
      `{"booking_status": false, "error": "Invalid travel class. Must be one of {'first', 'business', 'economy'}"}`,
    );
    expect(book(inst, '2026-01-01', 'SFO', 'LAX', ['economy'])).toBe(
      "Error during execution: unhashable type: 'list'",
    );
    expect(book(inst, '2026-01-01', 'SFO', 'PEK')).toBe(
      '{"booking_status": false, "error": "No available route for the given airports."}',
    );
    // Balance 10000.0 is not below the 10000.0 limit; after one booking it is.
    expect(book(inst)).toContain('"booking_status": true');
    expect(book(inst)).toBe('{"booking_status": false, "error": "Balance is less than budget limit"}');
  });

  it('parses dates like strptime(%Y-%m-%d)', () => {
    const bad = '{"booking_status": false, "error": "Invalid date format. Use YYYY-MM-DD."}';
    for (const date of [
      '01/01/2026',
      '2026-02-30',
      '2023-02-29',
      '0000-01-01',
      '2026-01-05 ',
      ' 2026-01-05',
      '2026-13-01',
      '2026-01-310',
      '2026-001-01',
    ]) {
      expect(book(make(), date), date).toBe(bad);
    }
    for (const date of ['2024-02-29', '2026-1-5', '2026-01- 5', '２０２６-01-01', '9999-12-31']) {
      expect(book(make(), date), date).toContain('"booking_status": true');
    }
  });

  it('prices flights by route, class and the parity of the date digits', () => {
    const inst = make();
    const cost = (from: PyValue, to: PyValue, date: PyValue, cls: PyValue) =>
      call(inst, 'get_flight_cost', from, to, date, cls);
    expect(cost('SFO', 'LAX', '2026-01-02', 'first')).toBe('{"travel_cost_list": [1000.0]}');
    expect(cost('LAX', 'SFO', '2026-01-01', 'business')).toBe('{"travel_cost_list": [400.0]}');
    expect(cost('LAX', 'SFO', 'tomorrow', 'economy')).toBe('{"travel_cost_list": [200.0]}');
    expect(cost('LAX', 'SFO', ['2026', '01'], 'economy')).toBe('{"travel_cost_list": [100.0]}');
    expect(cost('LAX', 'SFO', '١', 'economy')).toBe('{"travel_cost_list": [100.0]}');
    expect(cost('LAX', 'SFO', '2²', 'economy')).toBe(
      "Error during execution: invalid literal for int() with base 10: '²'",
    );
    expect(cost('LAX', 'SFO', 2026n, 'economy')).toBe("Error during execution: 'int' object is not iterable");
    expect(cost('LAX', 'SFO', [1n], 'economy')).toBe(
      "Error during execution: 'int' object has no attribute 'isdigit'",
    );
    expect(cost('SFO', 'XYZ', '2026-01-01', 'economy')).toBe(
      'Error during execution: No available route for the given airports.',
    );
    expect(cost(new PyTuple([[]]), 'LAX', '', 'economy')).toBe(
      "Error during execution: unhashable type: 'list'",
    );
    expect(cost('SFO', 'LAX', '', 'Economy')).toBe(
      'Error during execution: Invalid travel class. Options are: economy, business, first.',
    );
  });

  it('converts currencies with Python arithmetic', () => {
    const inst = make();
    const rate = (b: PyValue, t: PyValue, v: PyValue) => call(inst, 'compute_exchange_rate', b, t, v);
    expect(rate('USD', 'EUR', 10n)).toBe('{"exchanged_value": 8.0}');
    expect(rate('EUR', 'USD', 10n)).toBe('{"exchanged_value": 12.5}');
    expect(rate('RMB', 'USD', 100n)).toBe('{"exchanged_value": 14.29}');
    expect(rate('USD', 'RMB', 'ab')).toBe(
      "Error during execution: could not convert string to float: 'ababababababab'",
    );
    expect(rate('USD', 'EUR', 'ab')).toBe(
      "Error during execution: can't multiply sequence by non-int of type 'float'",
    );
    expect(rate('USD', 'XYZ', 10n)).toBe(
      'Error during execution: No available exchange rate for the given currencies.',
    );
  });

  it('verifies travelers', () => {
    const inst = make();
    const verify = (f: PyValue, l: PyValue, d: PyValue, p: PyValue) =>
      call(inst, 'verify_traveler_information', f, l, d, p);
    expect(verify('John', null, '1990-01-01', 'US1')).toBe(
      '{"verification_status": false, "verification_failure": "Cannot book flight information for another user.' +
        'Expected Michael Thompson, got John None"}',
    );
    expect(verify('Michael', 'Thompson', '1990-01-01', 'US1')).toBe('{"verification_status": true}');
    expect(verify('Michael', 'Thompson', '1990-02-29', 'US1')).toContain('Invalid date of birth format');
    expect(verify('Michael', 'Thompson', `${new Date().getFullYear() - 1}-01-01`, 'US1')).toContain(
      'at least 18',
    );
    expect(verify('Michael', 'Thompson', '1990-01-01', 'GB1')).toContain('United States');
    expect(verify('Michael', 'Thompson', '1990-01-01', 5n)).toBe(
      "Error during execution: 'int' object has no attribute 'startswith'",
    );
  });

  it('sets the budget limit through float()', () => {
    const inst = make();
    expect(call(inst, 'set_budget_limit', TOKEN, '100')).toBe('{"budget_limit": 100.0}');
    expect(call(inst, 'set_budget_limit', TOKEN, ' 1_000 ')).toBe('{"budget_limit": 1000.0}');
    expect(call(inst, 'set_budget_limit', TOKEN, '１２')).toBe('{"budget_limit": 12.0}');
    expect(call(inst, 'set_budget_limit', TOKEN, '_1')).toBe(
      "Error during execution: could not convert string to float: '_1'",
    );
    expect(call(inst, 'set_budget_limit', TOKEN, 'abc')).toBe(
      "Error during execution: could not convert string to float: 'abc'",
    );
    expect(call(inst, 'set_budget_limit', TOKEN, 10n ** 400n)).toBe(
      'Error during execution: int too large to convert to float',
    );
    expect(call(inst, 'set_budget_limit', TOKEN, null)).toBe(
      "Error during execution: float() argument must be a string or a real number, not 'NoneType'",
    );
  });

  it('merges private copies of the long-context records', () => {
    const ctx = longCtx();
    const inst = make(SCENARIO, ctx);
    // Existing ids win; new ones are appended.
    expect(Object.keys(toStateJson(inst.publicState().get('credit_card_list')!) as object)).toEqual([
      CARD,
      'ext_card',
    ]);
    expect(call(inst, 'cancel_booking', TOKEN, 'booking_901')).toBe('{"cancel_status": true}');
    expect(call(inst, 'get_credit_card_balance', TOKEN, 'ext_card')).toBe('{"card_balance": 5400.0}');
    // The shared constants are untouched, so a second instance starts from the original data.
    const again = make(SCENARIO, ctx);
    expect(call(again, 'get_credit_card_balance', TOKEN, 'ext_card')).toBe('{"card_balance": 5000.0}');
    expect(call(again, 'retrieve_invoice', TOKEN, 'booking_901')).toContain('"transaction_id": "trans_001"');
    // Long context lists every route's cost, and a booking returns the whole record.
    const costs = JSON.parse(call(again, 'get_flight_cost', 'SFO', 'LAX', '2026-01-01', 'economy'));
    expect(costs.travel_cost_list).toHaveLength(153);
    expect(costs.travel_cost_list[0]).toBe(400);
    expect(book(again)).toContain('"booking_history": {"booking_901": {');
  });
});
