/**
 * Airline's tools on real users, reservations and flights of the v0.2.0 database, with the texts
 * the reference's tools.py gives (prices and balances worked out from db.json by hand).
 */
import { describe, expect, it } from 'vitest';
import { loadAirlineDomain } from '../../../src/envs/tau2/domains/airline/index.js';
import { NO_TOOL_DOCS } from '../../../src/envs/tau2/tool-docs.js';
import type { Tau2Domain, ToolDocs } from '../../../src/envs/tau2/types.js';
import { callTool, HAS_TAU2, noteMissingTau2, TAU2_ROOT } from '../../support/tau2-data.js';

noteMissingTau2('tau2 airline tools');
let domain: Tau2Domain | undefined;
const env = () => {
  domain ??= loadAirlineDomain(TAU2_ROOT, NO_TOOL_DOCS);
  return domain.makeEnvironment();
};
const parse = (text: string) => JSON.parse(text);

// HAT001 on 2024-05-20: economy 137, 17 economy seats left. One passenger, insurance (30), one paid bag (50): 217.
const BOOKING = (payments: string, cabin = 'economy') =>
  `{"user_id": "mei_hernandez_8984", "origin": "PHL", "destination": "LGA", "flight_type": "one_way", "cabin": "${cabin}", ` +
  '"flights": [{"flight_number": "HAT001", "date": "2024-05-20"}], "passengers": [{"first_name": "Mei", "last_name": "Hernandez", "dob": "1980-01-01"}], ' +
  `"payment_methods": ${payments}, "total_baggages": 1, "nonfree_baggages": 1, "insurance": "yes"}`;

describe.skipIf(!HAS_TAU2)('tau2 airline tools', () => {
  it('books with a gift card, a certificate and a card: charges them, takes the seat, keeps the fixed clock', () => {
    const e = env();
    const payments =
      '[{"payment_id": "gift_card_5309492", "amount": 98}, {"payment_id": "certificate_7502997", "amount": 100}, {"payment_id": "credit_card_2140654", "amount": 19}]';
    expect(callTool(e, 'book_reservation', BOOKING(payments))).toEqual({
      error: false,
      content:
        '{"reservation_id": "HATHAT", "user_id": "mei_hernandez_8984", "origin": "PHL", "destination": "LGA", "flight_type": "one_way", "cabin": "economy", ' +
        '"flights": [{"flight_number": "HAT001", "origin": "PHL", "destination": "LGA", "date": "2024-05-20", "price": 137}], ' +
        '"passengers": [{"first_name": "Mei", "last_name": "Hernandez", "dob": "1980-01-01"}], ' +
        '"payment_history": [{"payment_id": "gift_card_5309492", "amount": 98}, {"payment_id": "certificate_7502997", "amount": 100}, {"payment_id": "credit_card_2140654", "amount": 19}], ' +
        '"created_at": "2024-05-15T15:00:00", "total_baggages": 1, "nonfree_baggages": 1, "insurance": "yes", "status": null}',
    });
    const user = parse(callTool(e, 'get_user_details', '{"user_id": "mei_hernandez_8984"}').content);
    expect(user.payment_methods.gift_card_5309492.amount).toBe(0);
    expect(callTool(e, 'get_user_details', '{"user_id": "mei_hernandez_8984"}').content).toContain(
      '"gift_card_5309492": {"source": "gift_card", "id": "gift_card_5309492", "amount": 0.0}',
    );
    expect(Object.keys(user.payment_methods)).not.toContain('certificate_7502997');
    expect(user.reservations.at(-1)).toBe('HATHAT');
    const seats = parse(
      callTool(e, 'search_direct_flight', '{"origin": "PHL", "destination": "LGA", "date": "2024-05-20"}')
        .content,
    ).find((f: { flight_number: string }) => f.flight_number === 'HAT001').available_seats;
    expect(seats).toEqual({ basic_economy: 10, economy: 16, business: 13 });
    // the next booking takes the next id
    expect(
      parse(
        callTool(e, 'book_reservation', BOOKING('[{"payment_id": "credit_card_2140654", "amount": 217}]'))
          .content,
      ).reservation_id,
    ).toBe('HATHAU');
  });

  it('refuses a booking that does not add up, or that a card cannot cover, and changes nothing', () => {
    const e = env();
    const before = e.dbText('assistant');
    expect(
      callTool(e, 'book_reservation', BOOKING('[{"payment_id": "credit_card_2140654", "amount": 216}]'))
        .content,
    ).toBe('Error: Payment amount does not add up, total price is 217, but paid 216');
    expect(
      callTool(e, 'book_reservation', BOOKING('[{"payment_id": "gift_card_5309492", "amount": 217}]'))
        .content,
    ).toBe('Error: Not enough balance in payment method gift_card_5309492');
    expect(
      callTool(e, 'book_reservation', BOOKING('[{"payment_id": "credit_card_1", "amount": 217}]')).content,
    ).toBe('Error: Payment method credit_card_1 not found');
    expect(callTool(e, 'book_reservation', BOOKING('[]', 'first')).content).toBe(
      [
        'Error: 1 validation error for Reservation',
        'cabin',
        "  Input should be 'business', 'economy' or 'basic_economy' [type=literal_error, input_value='first', input_type=str]",
        '    For further information visit https://errors.pydantic.dev/2.11/v/literal_error',
      ].join('\n'),
    );
    expect(e.dbText('assistant')).toBe(before);
  });

  it('changes the cabin of a reservation: new prices, the difference refunded to the gift card', () => {
    const e = env();
    // SF5VA1: HAT076 2024-05-23 (196 paid) and HAT080 2024-05-30 (156 paid), one passenger; basic economy now 91 and 50
    const flights =
      '[{"flight_number": "HAT076", "date": "2024-05-23"}, {"flight_number": "HAT080", "date": "2024-05-30"}]';
    const update = (cabin: string, payment: string) =>
      callTool(
        e,
        'update_reservation_flights',
        `{"reservation_id": "SF5VA1", "cabin": "${cabin}", "flights": ${flights}, "payment_id": "${payment}"}`,
      );
    // HAT080 has no business seat left on 2024-05-30
    expect(update('business', 'gift_card_7002574').content).toBe('Error: Not enough seats on flight HAT080');
    expect(update('basic_economy', 'certificate_4961816').content).toBe(
      'Error: Certificate cannot be used to update reservation',
    );
    expect(update('first', 'gift_card_7002574').content).toBe("Error: 'first'");
    const r = update('basic_economy', 'gift_card_7002574');
    expect(r.content).toContain(
      '"cabin": "basic_economy", "flights": [{"flight_number": "HAT076", "origin": "PHL", "destination": "DEN", "date": "2024-05-23", "price": 91}, ' +
        '{"flight_number": "HAT080", "origin": "DEN", "destination": "PHL", "date": "2024-05-30", "price": 50}]',
    );
    expect(r.content).toContain(
      '"payment_history": [{"payment_id": "gift_card_7002574", "amount": 352}, {"payment_id": "gift_card_7002574", "amount": -211}]',
    );
    expect(callTool(e, 'get_user_details', '{"user_id": "olivia_moore_2080"}').content).toContain(
      '{"source": "gift_card", "id": "gift_card_7002574", "amount": 296.0}',
    );
  });

  it('adds paid bags and cancels, as the reference does (no refund to the card, seats kept)', () => {
    const e = env();
    const bags = (payment: string) =>
      callTool(
        e,
        'update_reservation_baggages',
        `{"reservation_id": "SF5VA1", "total_baggages": 2, "nonfree_baggages": 1, "payment_id": "${payment}"}`,
      );
    expect(bags('certificate_4961816').content).toBe(
      'Error: Certificate cannot be used to update reservation',
    );
    expect(bags('credit_card_9').content).toBe('Error: Payment method not found');
    expect(
      callTool(
        e,
        'update_reservation_baggages',
        '{"reservation_id": "SF5VA1", "total_baggages": 3, "nonfree_baggages": 3, "payment_id": "gift_card_7002574"}',
      ).content,
    ).toBe('Error: Gift card balance is not enough');
    expect(bags('gift_card_7002574').content).toContain(
      '"payment_history": [{"payment_id": "gift_card_7002574", "amount": 352}, {"payment_id": "gift_card_7002574", "amount": 50}], "created_at": "2024-05-04T00:51:40", "total_baggages": 2, "nonfree_baggages": 1,',
    );
    expect(callTool(e, 'get_user_details', '{"user_id": "olivia_moore_2080"}').content).toContain(
      '"amount": 35.0}',
    );
    const c = callTool(e, 'cancel_reservation', '{"reservation_id": "SF5VA1"}');
    expect(c.content).toMatch(
      /"payment_history": \[\{"payment_id": "gift_card_7002574", "amount": 352\}, \{"payment_id": "gift_card_7002574", "amount": 50\}, \{"payment_id": "gift_card_7002574", "amount": -352\}, \{"payment_id": "gift_card_7002574", "amount": -50\}\], .*"insurance": "no", "status": "cancelled"\}$/,
    );
    expect(callTool(e, 'cancel_reservation', '{"reservation_id": "NOPE00"}').content).toBe(
      'Error: Reservation NOPE00 not found',
    );
  });

  it('tells a flight status by date, searches one-stop trips over midnight, sends certificates', () => {
    const e = env();
    expect(callTool(e, 'get_flight_status', '{"flight_number": "HAT001", "date": "2024-05-03"}')).toEqual({
      content: 'cancelled',
      error: false,
    });
    expect(
      callTool(e, 'get_flight_status', '{"flight_number": "HAT001", "date": "2024-05-20"}').content,
    ).toBe('available');
    expect(
      callTool(e, 'get_flight_status', '{"flight_number": "HAT001", "date": "2024-06-01"}').content,
    ).toBe('Error: Flight HAT001 not found on date 2024-06-01');
    expect(
      callTool(e, 'get_flight_status', '{"flight_number": "HAT999", "date": "2024-05-01"}').content,
    ).toBe('Error: Flight HAT999 not found');
    const pairs = parse(
      callTool(e, 'search_onestop_flight', '{"origin": "LGA", "destination": "IAH", "date": "2024-05-20"}')
        .content,
    );
    expect(
      pairs.map((p: { flight_number: string; date: string }[]) =>
        p.map((f) => `${f.flight_number} ${f.date}`),
      ),
    ).toEqual([
      ['HAT002 2024-05-20', 'HAT152 2024-05-21'],
      ['HAT114 2024-05-20', 'HAT152 2024-05-21'],
      ['HAT201 2024-05-20', 'HAT152 2024-05-20'],
      ['HAT245 2024-05-20', 'HAT152 2024-05-20'],
    ]);
    expect(Object.keys(pairs[0][0])).toEqual([
      'flight_number',
      'origin',
      'destination',
      'status',
      'scheduled_departure_time_est',
      'scheduled_arrival_time_est',
      'date',
      'available_seats',
      'prices',
    ]);
    expect(callTool(e, 'send_certificate', '{"user_id": "olivia_moore_2080", "amount": 100}').content).toBe(
      'Certificate certificate_3221322 added to user olivia_moore_2080 with amount 100.',
    );
    expect(callTool(e, 'get_user_details', '{"user_id": "olivia_moore_2080"}').content).toContain(
      '"certificate_3221322": {"source": "certificate", "id": "certificate_3221322", "amount": 100.0}',
    );
    expect(callTool(e, 'list_all_airports', '{}').content).toMatch(
      /^\[\{"iata": "SFO", "city": "San Francisco"\}, .*\{"iata": "LGA", "city": "LaGuardia"\}\]$/,
    );
    expect(callTool(e, 'book_reservation', '{"user_id": "x"}').content).toBe(
      "Error: AirlineTools.book_reservation() missing 10 required positional arguments: 'origin', 'destination', " +
        "'flight_type', 'cabin', 'flights', 'passengers', 'payment_methods', 'total_baggages', 'nonfree_baggages', and 'insurance'",
    );
    expect(
      callTool(e, 'update_reservation_passengers', '{"reservation_id": "SF5VA1", "passengers": []}').content,
    ).toBe('Error: Number of passengers does not match');
  });

  it('shows book_reservation as the reference schema does, field docs in $defs', () => {
    const docs: ToolDocs = {
      available: true,
      tool: (owner, name) =>
        owner === 'AirlineTools' && name === 'book_reservation'
          ? { short: 'Book.', long: '', params: new Map([['cabin', 'The cabin.']]) }
          : undefined,
      field: (m, f) => (m === 'Payment' && f === 'amount' ? 'Payment amount in dollars' : undefined),
      model: () => undefined,
    };
    const book = loadAirlineDomain(TAU2_ROOT, docs).makeEnvironment().agentTools()[0]!.function;
    expect(book.description).toBe('Book.');
    const p = book.parameters as Record<string, Record<string, unknown>>;
    expect(Object.keys(p)).toEqual(['$defs', 'properties', 'required', 'title', 'type']);
    expect(p.$defs).toEqual({
      FlightInfo: {
        properties: {
          flight_number: { title: 'Flight Number', type: 'string' },
          date: { title: 'Date', type: 'string' },
        },
        required: ['flight_number', 'date'],
        title: 'FlightInfo',
        type: 'object',
      },
      Passenger: {
        properties: {
          first_name: { title: 'First Name', type: 'string' },
          last_name: { title: 'Last Name', type: 'string' },
          dob: { title: 'Dob', type: 'string' },
        },
        required: ['first_name', 'last_name', 'dob'],
        title: 'Passenger',
        type: 'object',
      },
      Payment: {
        properties: {
          payment_id: { title: 'Payment Id', type: 'string' },
          amount: { description: 'Payment amount in dollars', title: 'Amount', type: 'integer' },
        },
        required: ['payment_id', 'amount'],
        title: 'Payment',
        type: 'object',
      },
    });
    expect(p.properties!.cabin).toEqual({
      description: 'The cabin.',
      enum: ['business', 'economy', 'basic_economy'],
      title: 'Cabin',
      type: 'string',
    });
    expect(p.properties!.passengers).toEqual({
      items: { anyOf: [{ $ref: '#/$defs/Passenger' }, { additionalProperties: true, type: 'object' }] },
      title: 'Passengers',
      type: 'array',
    });
    expect(p.required).toEqual([
      'user_id',
      'origin',
      'destination',
      'flight_type',
      'cabin',
      'flights',
      'passengers',
      'payment_methods',
      'total_baggages',
      'nonfree_baggages',
      'insurance',
    ]);
  });
});
