/**
 * The airline database as the reference's pydantic models hold it, and the models its tools
 * build from a model's arguments (flights, passengers, payments).
 */
import {
  dict,
  field,
  float,
  int,
  list,
  literal,
  type Model,
  model,
  optional,
  str,
  union,
} from '../../pydantic.js';

export const FlightType = literal('round_trip', 'one_way');
export const CabinClass = literal('business', 'economy', 'basic_economy');
export const Insurance = literal('yes', 'no');
export type Cabin = 'business' | 'economy' | 'basic_economy';

export interface AirportCode {
  iata: string;
  city: string;
}
export const AirportCode = model<AirportCode>('AirportCode', [field('iata', str), field('city', str)]);

export interface Name {
  first_name: string;
  last_name: string;
}
export const Name = model<Name>('Name', [field('first_name', str), field('last_name', str)]);

export interface Address {
  address1: string;
  address2: string | null;
  city: string;
  country: string;
  state: string;
  zip: string;
}
export const Address = model<Address>('Address', [
  field('address1', str),
  field('address2', optional(str), null),
  field('city', str),
  field('country', str),
  field('state', str),
  field('zip', str),
]);

export interface Payment {
  payment_id: string;
  amount: bigint;
}
export const Payment = model<Payment>('Payment', [field('payment_id', str), field('amount', int)]);

export interface CreditCard {
  source: 'credit_card';
  id: string;
  brand: string;
  last_four: string;
}
export const CreditCard = model<CreditCard>('CreditCard', [
  field('source', literal('credit_card')),
  field('id', str),
  field('brand', str),
  field('last_four', str),
]);
export interface GiftCard {
  source: 'gift_card';
  id: string;
  amount: number;
}
export const GiftCard = model<GiftCard>('GiftCard', [
  field('source', literal('gift_card')),
  field('id', str),
  field('amount', float),
]);
export interface Certificate {
  source: 'certificate';
  id: string;
  amount: number;
}
export const Certificate = model<Certificate>('Certificate', [
  field('source', literal('certificate')),
  field('id', str),
  field('amount', float),
]);
export type PaymentMethod = Model<CreditCard> | Model<GiftCard> | Model<Certificate>;

export interface Passenger {
  first_name: string;
  last_name: string;
  dob: string;
}
export const Passenger = model<Passenger>('Passenger', [
  field('first_name', str),
  field('last_name', str),
  field('dob', str),
]);

const seats = dict(CabinClass, int);

export interface FlightDateStatusAvailable {
  status: 'available';
  available_seats: Map<Cabin, bigint>;
  prices: Map<Cabin, bigint>;
}
export const FlightDateStatusAvailable = model<FlightDateStatusAvailable>('FlightDateStatusAvailable', [
  field('status', literal('available')),
  field('available_seats', seats),
  field('prices', seats),
]);
const statusModel = (name: string, status: string, times: string[]) =>
  model<{ status: string }>(name, [field('status', literal(status)), ...times.map((t) => field(t, str))]);
const FlightDateStatusLanded = statusModel('FlightDateStatusLanded', 'landed', [
  'actual_departure_time_est',
  'actual_arrival_time_est',
]);
const FlightDateStatusCancelled = statusModel('FlightDateStatusCancelled', 'cancelled', []);
const FlightDateStatusDelayed = statusModel('FlightDateStatusDelayed', 'delayed', [
  'estimated_departure_time_est',
  'estimated_arrival_time_est',
]);
const FlightDataStatusFlying = statusModel('FlightDataStatusFlying', 'flying', [
  'actual_departure_time_est',
  'estimated_arrival_time_est',
]);
const FlightDataStatusOnTime = statusModel('FlightDataStatusOnTime', 'on time', [
  'estimated_departure_time_est',
  'estimated_arrival_time_est',
]);
export type FlightDateStatus = Model<{ status: string }>;
const FlightDateStatus = union<FlightDateStatus>(
  FlightDateStatusAvailable as never,
  FlightDateStatusLanded,
  FlightDateStatusCancelled,
  FlightDateStatusDelayed,
  FlightDataStatusFlying,
  FlightDataStatusOnTime,
);

export interface Flight {
  flight_number: string;
  origin: string;
  destination: string;
  scheduled_departure_time_est: string;
  scheduled_arrival_time_est: string;
  dates: Map<string, FlightDateStatus>;
}
export const Flight = model<Flight>('Flight', [
  field('flight_number', str),
  field('origin', str),
  field('destination', str),
  field('scheduled_departure_time_est', str),
  field('scheduled_arrival_time_est', str),
  field('dates', dict(str, FlightDateStatus)),
]);

export interface DirectFlight {
  flight_number: string;
  origin: string;
  destination: string;
  status: 'available';
  scheduled_departure_time_est: string;
  scheduled_arrival_time_est: string;
  date: unknown;
  available_seats: Map<Cabin, bigint>;
  prices: Map<Cabin, bigint>;
}
export const DirectFlight = model<DirectFlight>('DirectFlight', [
  field('flight_number', str),
  field('origin', str),
  field('destination', str),
  field('status', literal('available')),
  field('scheduled_departure_time_est', str),
  field('scheduled_arrival_time_est', str),
  field('date', optional(str), null),
  field('available_seats', seats),
  field('prices', seats),
]);

export interface ReservationFlight {
  flight_number: string;
  origin: string;
  destination: string;
  date: string;
  price: bigint;
}
export const ReservationFlight = model<ReservationFlight>('ReservationFlight', [
  field('flight_number', str),
  field('origin', str),
  field('destination', str),
  field('date', str),
  field('price', int),
]);

export interface FlightInfo {
  flight_number: string;
  date: string;
}
export const FlightInfo = model<FlightInfo>('FlightInfo', [field('flight_number', str), field('date', str)]);

export interface User {
  user_id: string;
  name: Model<Name>;
  address: Model<Address>;
  email: string;
  dob: string;
  payment_methods: Map<string, PaymentMethod>;
  saved_passengers: Model<Passenger>[];
  membership: string;
  reservations: string[];
}
export const User = model<User>('User', [
  field('user_id', str),
  field('name', Name),
  field('address', Address),
  field('email', str),
  field('dob', str),
  field('payment_methods', dict(str, union<PaymentMethod>(CreditCard, GiftCard, Certificate))),
  field('saved_passengers', list(Passenger)),
  field('membership', literal('gold', 'silver', 'regular')),
  field('reservations', list(str)),
]);

export interface Reservation {
  reservation_id: string;
  user_id: string;
  origin: string;
  destination: string;
  flight_type: string;
  cabin: Cabin;
  flights: Model<ReservationFlight>[];
  passengers: Model<Passenger>[];
  payment_history: Model<Payment>[];
  created_at: string;
  total_baggages: bigint;
  nonfree_baggages: bigint;
  insurance: string;
  status: string | null;
}
export const Reservation = model<Reservation>('Reservation', [
  field('reservation_id', str),
  field('user_id', str),
  field('origin', str),
  field('destination', str),
  field('flight_type', FlightType),
  field('cabin', CabinClass),
  field('flights', list(ReservationFlight)),
  field('passengers', list(Passenger)),
  field('payment_history', list(Payment)),
  field('created_at', str),
  field('total_baggages', int),
  field('nonfree_baggages', int),
  field('insurance', Insurance),
  field('status', optional(literal('cancelled')), null),
]);

export interface FlightDB {
  flights: Map<string, Model<Flight>>;
  users: Map<string, Model<User>>;
  reservations: Map<string, Model<Reservation>>;
}
export const FlightDB = model<FlightDB>(
  'FlightDB',
  [
    field('flights', dict(str, Flight)),
    field('users', dict(str, User)),
    field('reservations', dict(str, Reservation)),
  ],
  true,
);
