/**
 * The airline agent's 14 tools (`AirlineTools` of the reference), in its order, with its results
 * and error texts. The reference's clock is fixed: a reservation is created at 2024-05-15T15:00:00.
 */
import { ValueError_ } from '../../../py/errors.js';
import { add, getItem, iterate, len, lt, mul, neg, pyMax, pySum, sub, toInt } from '../../../py/ops.js';
import { type PyDict, type PyValue, pyEquals } from '../../../py/values.js';
import { calculate } from '../../calculate.js';
import {
  anyDict,
  deepClone,
  field,
  int,
  list,
  type Model,
  type ModelSpec,
  str,
  union,
} from '../../pydantic.js';
import type { Toolkit, ToolSpec } from '../../toolkit.js';
import { attr, augmented, fmt, hasKey } from '../common.js';
import {
  AirportCode,
  CabinClass,
  Certificate,
  DirectFlight,
  type Flight,
  type FlightDateStatus,
  FlightDateStatusAvailable,
  type FlightDB,
  FlightInfo,
  FlightType,
  Insurance,
  Passenger,
  Payment,
  type PaymentMethod,
  Reservation,
  ReservationFlight,
  type User,
} from './models.js';

export type AirlineKit = Toolkit<Model<FlightDB>>;

/** The reference's fixed "now". */
export const AIRLINE_NOW = '2024-05-15T15:00:00';
const NEW_RESERVATION_IDS = ['HATHAT', 'HATHAU', 'HATHAV'];
const NEW_PAYMENT_IDS = [3221322, 3221323, 3221324];

function getUser(kit: AirlineKit, userId: PyValue): Model<User> {
  if (!hasKey(kit.db.users, userId)) throw ValueError_(`User ${fmt(userId)} not found`);
  return kit.db.users.get(userId)!;
}
function getReservation(kit: AirlineKit, id: PyValue): Model<Reservation> {
  if (!hasKey(kit.db.reservations, id)) throw ValueError_(`Reservation ${fmt(id)} not found`);
  return kit.db.reservations.get(id)!;
}
function getFlight(kit: AirlineKit, flightNumber: PyValue): Model<Flight> {
  if (!hasKey(kit.db.flights, flightNumber)) throw ValueError_(`Flight ${fmt(flightNumber)} not found`);
  return kit.db.flights.get(flightNumber)!;
}
function getFlightInstance(kit: AirlineKit, flightNumber: PyValue, date: PyValue): FlightDateStatus {
  const flight = getFlight(kit, flightNumber);
  if (!hasKey(flight.dates, date))
    throw ValueError_(`Flight ${fmt(flightNumber)} not found on date ${fmt(date)}`);
  return flight.dates.get(date)!;
}
const isAvailable = (d: FlightDateStatus): d is Model<FlightDateStatusAvailable> =>
  d.$spec === (FlightDateStatusAvailable as unknown);

/** `if all(isinstance(x, dict) for x in xs): xs = [M(**x) for x in xs]` */
function modelsIfAllDicts(xs: PyValue, m: ModelSpec<object>): PyValue {
  const items = iterate(xs);
  return items.every((x) => x instanceof Map) ? items.map((x) => m.parse(x)) : xs;
}

function searchDirect(
  kit: AirlineKit,
  date: PyValue,
  origin: PyValue,
  destination: PyValue,
  leaveAfter: string | null = null,
): Model<DirectFlight>[] {
  const out: Model<DirectFlight>[] = [];
  for (const f of kit.db.flights.values()) {
    const ok =
      (origin === null || pyEquals(f.origin, origin)) &&
      (destination === null || pyEquals(f.destination, destination)) &&
      hasKey(f.dates, date) &&
      f.dates.get(date)!.status === 'available' &&
      (leaveAfter === null || f.scheduled_departure_time_est >= leaveAfter);
    if (!ok) continue;
    const d = f.dates.get(date as string) as Model<FlightDateStatusAvailable>;
    out.push(
      DirectFlight.parse(
        new Map<string, PyValue>([
          ['flight_number', f.flight_number],
          ['origin', f.origin],
          ['destination', f.destination],
          ['status', 'available'],
          ['scheduled_departure_time_est', f.scheduled_departure_time_est],
          ['scheduled_arrival_time_est', f.scheduled_arrival_time_est],
          ['available_seats', d.available_seats as PyDict],
          ['prices', d.prices as PyDict],
        ]),
      ),
    );
  }
  return out;
}

/** `_payment_for_update`: checks and charges a change's price, and the payment to record (or none). */
function paymentForUpdate(user: Model<User>, paymentId: PyValue, totalPrice: PyValue): Model<Payment> | null {
  if (!hasKey(user.payment_methods, paymentId)) throw ValueError_('Payment method not found');
  const method = user.payment_methods.get(paymentId)!;
  if (method.source === 'certificate') throw ValueError_('Certificate cannot be used to update reservation');
  if (method.source === 'gift_card' && lt(method.amount, totalPrice))
    throw ValueError_('Gift card balance is not enough');
  if (method.source === 'gift_card') method.amount = augmented('-', sub, method.amount, totalPrice) as number;
  if (pyEquals(totalPrice, 0n)) return null;
  return Payment.parse(
    new Map<string, PyValue>([
      ['payment_id', paymentId],
      ['amount', totalPrice],
    ]),
  );
}

const s = (name: string) => field(name, str);
const listOf = (name: string, m: ModelSpec<object>) => field(name, list(union<PyValue>(m as never, anyDict)));

const AIRPORTS: readonly [string, string][] = [
  ['SFO', 'San Francisco'],
  ['JFK', 'New York'],
  ['LAX', 'Los Angeles'],
  ['ORD', 'Chicago'],
  ['DFW', 'Dallas'],
  ['DEN', 'Denver'],
  ['SEA', 'Seattle'],
  ['ATL', 'Atlanta'],
  ['MIA', 'Miami'],
  ['BOS', 'Boston'],
  ['PHX', 'Phoenix'],
  ['IAH', 'Houston'],
  ['LAS', 'Las Vegas'],
  ['MCO', 'Orlando'],
  ['EWR', 'Newark'],
  ['CLT', 'Charlotte'],
  ['MSP', 'Minneapolis'],
  ['DTW', 'Detroit'],
  ['PHL', 'Philadelphia'],
  ['LGA', 'LaGuardia'],
];

export const AIRLINE_TOOLS: readonly ToolSpec<AirlineKit>[] = [
  {
    name: 'book_reservation',
    kind: 'write',
    params: [
      s('user_id'),
      s('origin'),
      s('destination'),
      field('flight_type', FlightType),
      field('cabin', CabinClass),
      listOf('flights', FlightInfo),
      listOf('passengers', Passenger),
      listOf('payment_methods', Payment),
      field('total_baggages', int),
      field('nonfree_baggages', int),
      field('insurance', Insurance),
    ],
    run(kit, a) {
      const flights = modelsIfAllDicts(a.get('flights')!, FlightInfo);
      const passengers = modelsIfAllDicts(a.get('passengers')!, Passenger);
      const payments = modelsIfAllDicts(a.get('payment_methods')!, Payment);
      const userId = a.get('user_id')!;
      const user = getUser(kit, userId);
      const reservationId = NEW_RESERVATION_IDS.find((id) => !kit.db.reservations.has(id));
      if (!reservationId) throw ValueError_('Too many reservations');
      const cabin = a.get('cabin')!;
      const reservation = Reservation.parse(
        new Map<string, PyValue>([
          ['reservation_id', reservationId],
          ['user_id', userId],
          ['origin', a.get('origin')!],
          ['destination', a.get('destination')!],
          ['flight_type', a.get('flight_type')!],
          ['cabin', cabin],
          ['flights', []],
          ['passengers', deepClone(passengers)],
          ['payment_history', deepClone(payments)],
          ['created_at', AIRLINE_NOW],
          ['total_baggages', a.get('total_baggages')!],
          ['nonfree_baggages', a.get('nonfree_baggages')!],
          ['insurance', a.get('insurance')!],
        ]),
      );
      const count = BigInt(len(passengers));
      let total: PyValue = 0n;
      const booked: Model<FlightDateStatusAvailable>[] = [];
      for (const info of iterate(flights)) {
        const number = attr(info, 'flight_number');
        const flight = getFlight(kit, number);
        const date = attr(info, 'date');
        const dateData = getFlightInstance(kit, number, date);
        if (!isAvailable(dateData))
          throw ValueError_(`Flight ${fmt(number)} not available on date ${fmt(date)}`);
        if (lt(getItem(dateData.available_seats as PyDict, cabin), count))
          throw ValueError_(`Not enough seats on flight ${fmt(number)}`);
        const price = getItem(dateData.prices as PyDict, cabin);
        reservation.flights.push(
          ReservationFlight.parse(
            new Map<string, PyValue>([
              ['origin', flight.origin],
              ['destination', flight.destination],
              ['flight_number', number],
              ['date', date],
              ['price', price],
            ]),
          ),
        );
        booked.push(dateData);
        total = augmented('+', add, total, mul(price, count));
      }
      if (pyEquals(a.get('insurance')!, 'yes')) total = augmented('+', add, total, mul(30n, count));
      total = augmented('+', add, total, mul(50n, a.get('nonfree_baggages')!));
      const paymentList = iterate(payments);
      for (const p of paymentList) {
        const paymentId = attr(p, 'payment_id');
        if (!hasKey(user.payment_methods, paymentId))
          throw ValueError_(`Payment method ${fmt(paymentId)} not found`);
        const method = user.payment_methods.get(paymentId)!;
        if (
          (method.source === 'gift_card' || method.source === 'certificate') &&
          lt(method.amount, attr(p, 'amount'))
        )
          throw ValueError_(`Not enough balance in payment method ${fmt(paymentId)}`);
      }
      const paid = pySum(paymentList.map((p) => attr(p, 'amount')));
      if (!pyEquals(paid, total))
        throw ValueError_(
          `Payment amount does not add up, total price is ${fmt(total)}, but paid ${fmt(paid)}`,
        );
      for (const p of paymentList) {
        const paymentId = attr(p, 'payment_id') as string;
        const method = getItem(user.payment_methods as PyDict, paymentId) as unknown as PaymentMethod;
        if (method.source === 'gift_card')
          method.amount = augmented('-', sub, method.amount, attr(p, 'amount')) as number;
        else if (method.source === 'certificate') user.payment_methods.delete(paymentId);
      }
      for (const d of booked) {
        const seats = d.available_seats as PyDict;
        seats.set(cabin as string, augmented('-', sub, getItem(seats, cabin), count));
      }
      kit.db.reservations.set(reservationId, reservation);
      kit.db.users.get(userId as string)!.reservations.push(reservationId);
      return reservation;
    },
  },
  {
    name: 'calculate',
    kind: 'generic',
    params: [s('expression')],
    run: (_kit, a) => calculate(a.get('expression')!),
  },
  {
    name: 'cancel_reservation',
    kind: 'write',
    params: [s('reservation_id')],
    run(kit, a) {
      const reservation = getReservation(kit, a.get('reservation_id')!);
      const refunds = reservation.payment_history.map((p) =>
        Payment.parse(
          new Map<string, PyValue>([
            ['payment_id', p.payment_id],
            ['amount', neg(p.amount)],
          ]),
        ),
      );
      reservation.payment_history.push(...refunds);
      reservation.status = 'cancelled';
      return reservation;
    },
  },
  {
    name: 'get_reservation_details',
    kind: 'read',
    params: [s('reservation_id')],
    run: (kit, a) => getReservation(kit, a.get('reservation_id')!),
  },
  {
    name: 'get_user_details',
    kind: 'read',
    params: [s('user_id')],
    run: (kit, a) => getUser(kit, a.get('user_id')!),
  },
  {
    name: 'list_all_airports',
    kind: 'read',
    params: [],
    run: () => AIRPORTS.map(([iata, city]) => AirportCode.make({ iata, city })),
  },
  {
    name: 'search_direct_flight',
    kind: 'read',
    params: [s('origin'), s('destination'), s('date')],
    run: (kit, a) => searchDirect(kit, a.get('date')!, a.get('origin')!, a.get('destination')!),
  },
  {
    name: 'search_onestop_flight',
    kind: 'read',
    params: [s('origin'), s('destination'), s('date')],
    run(kit, a) {
      const date = a.get('date')!;
      const results: PyValue[] = [];
      for (const first of searchDirect(kit, date, a.get('origin')!, null)) {
        first.date = date;
        // the reference's next day: the same month, the day unpadded ("2024-05-2")
        const date2 = first.scheduled_arrival_time_est.includes('+1')
          ? `2024-05-${toInt([...(date as string)].slice(-2).join('')) + 1n}`
          : date;
        for (const second of searchDirect(
          kit,
          date2,
          first.destination,
          a.get('destination')!,
          first.scheduled_arrival_time_est,
        )) {
          second.date = date2;
          results.push([first, second]);
        }
      }
      return results;
    },
  },
  {
    name: 'send_certificate',
    kind: 'write',
    params: [s('user_id'), field('amount', int)],
    run(kit, a) {
      const userId = a.get('user_id')!;
      const user = getUser(kit, userId);
      const amount = a.get('amount')!;
      for (const id of NEW_PAYMENT_IDS) {
        const paymentId = `certificate_${id}`;
        if (user.payment_methods.has(paymentId)) continue;
        user.payment_methods.set(
          paymentId,
          Certificate.parse(
            new Map<string, PyValue>([
              ['id', paymentId],
              ['amount', amount],
              ['source', 'certificate'],
            ]),
          ),
        );
        return `Certificate ${paymentId} added to user ${fmt(userId)} with amount ${fmt(amount)}.`;
      }
      throw ValueError_('Too many certificates');
    },
  },
  {
    name: 'transfer_to_human_agents',
    kind: 'generic',
    params: [s('summary')],
    run: () => 'Transfer successful',
  },
  {
    name: 'update_reservation_baggages',
    kind: 'write',
    params: [
      s('reservation_id'),
      field('total_baggages', int),
      field('nonfree_baggages', int),
      s('payment_id'),
    ],
    run(kit, a) {
      const reservation = getReservation(kit, a.get('reservation_id')!);
      const user = getUser(kit, reservation.user_id);
      const nonfree = a.get('nonfree_baggages')!;
      const total = mul(50n, pyMax([0n, sub(nonfree, reservation.nonfree_baggages)]));
      const payment = paymentForUpdate(user, a.get('payment_id')!, total);
      if (payment) reservation.payment_history.push(payment);
      reservation.total_baggages = a.get('total_baggages') as bigint;
      reservation.nonfree_baggages = nonfree as bigint;
      return reservation;
    },
  },
  {
    name: 'update_reservation_flights',
    kind: 'write',
    params: [s('reservation_id'), field('cabin', CabinClass), listOf('flights', FlightInfo), s('payment_id')],
    run(kit, a) {
      const flights = modelsIfAllDicts(a.get('flights')!, FlightInfo);
      const reservation = getReservation(kit, a.get('reservation_id')!);
      const user = getUser(kit, reservation.user_id);
      const cabin = a.get('cabin')!;
      const count = BigInt(len(reservation.passengers as PyValue[]));
      let total: PyValue = 0n;
      const kept: Model<ReservationFlight>[] = [];
      for (const info of iterate(flights)) {
        const match = reservation.flights.find(
          (rf) =>
            pyEquals(rf.flight_number, attr(info, 'flight_number')) &&
            pyEquals(rf.date, attr(info, 'date')) &&
            pyEquals(cabin, reservation.cabin),
        );
        if (match) {
          total = augmented('+', add, total, mul(match.price, count));
          kept.push(match);
          continue;
        }
        const number = attr(info, 'flight_number');
        const date = attr(info, 'date');
        const flight = getFlight(kit, number);
        const dateData = getFlightInstance(kit, number, date);
        if (!isAvailable(dateData))
          throw ValueError_(`Flight ${fmt(number)} not available on date ${fmt(date)}`);
        if (lt(getItem(dateData.available_seats as PyDict, cabin), count))
          throw ValueError_(`Not enough seats on flight ${fmt(number)}`);
        const rf = ReservationFlight.parse(
          new Map<string, PyValue>([
            ['flight_number', number],
            ['date', date],
            ['price', getItem(dateData.prices as PyDict, cabin)],
            ['origin', flight.origin],
            ['destination', flight.destination],
          ]),
        );
        total = augmented('+', add, total, mul(rf.price, count));
        kept.push(rf);
      }
      const paidBefore = mul(pySum(reservation.flights.map((f) => f.price)), count);
      total = augmented('-', sub, total, paidBefore);
      const payment = paymentForUpdate(user, a.get('payment_id')!, total);
      if (payment) reservation.payment_history.push(payment);
      reservation.flights = kept;
      reservation.cabin = cabin as never;
      return reservation;
    },
  },
  {
    name: 'update_reservation_passengers',
    kind: 'write',
    params: [s('reservation_id'), listOf('passengers', Passenger)],
    run(kit, a) {
      const passengers = modelsIfAllDicts(a.get('passengers')!, Passenger);
      const reservation = getReservation(kit, a.get('reservation_id')!);
      if (len(passengers) !== len(reservation.passengers as PyValue[]))
        throw ValueError_('Number of passengers does not match');
      reservation.passengers = deepClone(passengers) as never;
      return reservation;
    },
  },
  {
    name: 'get_flight_status',
    kind: 'read',
    params: [s('flight_number'), s('date')],
    run: (kit, a) => getFlightInstance(kit, a.get('flight_number')!, a.get('date')!).status,
  },
];
