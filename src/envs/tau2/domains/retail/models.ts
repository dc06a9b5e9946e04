/**
 * The retail database as the reference's pydantic models hold it (field order is dump order;
 * floats stay floats, ids stay strings). Field types are what validation gives; tools may store a
 * model's raw argument in a field, as the reference does.
 */
import {
  bool,
  dict,
  field,
  float,
  list,
  literal,
  type Model,
  model,
  optional,
  str,
  union,
} from '../../pydantic.js';

export interface Variant {
  item_id: string;
  options: Map<string, string>;
  available: boolean;
  price: number;
}
export const Variant = model<Variant>('Variant', [
  field('item_id', str),
  field('options', dict(str, str)),
  field('available', bool),
  field('price', float),
]);

export interface Product {
  name: string;
  product_id: string;
  variants: Map<string, Model<Variant>>;
}
export const Product = model<Product>('Product', [
  field('name', str),
  field('product_id', str),
  field('variants', dict(str, Variant)),
]);

export interface UserName {
  first_name: string;
  last_name: string;
}
export const UserName = model<UserName>('UserName', [field('first_name', str), field('last_name', str)]);

export interface UserAddress {
  address1: string;
  address2: string;
  city: string;
  country: string;
  state: string;
  zip: string;
}
export const UserAddress = model<UserAddress>('UserAddress', [
  field('address1', str),
  field('address2', str),
  field('city', str),
  field('country', str),
  field('state', str),
  field('zip', str),
]);

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
  balance: number;
}
export const GiftCard = model<GiftCard>('GiftCard', [
  field('source', literal('gift_card')),
  field('id', str),
  field('balance', float),
]);
export interface Paypal {
  source: 'paypal';
  id: string;
}
export const Paypal = model<Paypal>('Paypal', [field('source', literal('paypal')), field('id', str)]);
export type PaymentMethod = Model<CreditCard> | Model<GiftCard> | Model<Paypal>;
const PaymentMethod = union<PaymentMethod>(CreditCard, GiftCard, Paypal);

export interface User {
  user_id: string;
  name: Model<UserName>;
  address: Model<UserAddress>;
  email: string;
  payment_methods: Map<string, PaymentMethod>;
  orders: string[];
}
export const User = model<User>('User', [
  field('user_id', str),
  field('name', UserName),
  field('address', UserAddress),
  field('email', str),
  field('payment_methods', dict(str, PaymentMethod)),
  field('orders', list(str)),
]);

export interface OrderFullfilment {
  tracking_id: string[];
  item_ids: string[];
}
export const OrderFullfilment = model<OrderFullfilment>('OrderFullfilment', [
  field('tracking_id', list(str)),
  field('item_ids', list(str)),
]);

export interface OrderItem {
  name: string;
  product_id: string;
  item_id: string;
  price: number;
  options: Map<string, string>;
}
export const OrderItem = model<OrderItem>('OrderItem', [
  field('name', str),
  field('product_id', str),
  field('item_id', str),
  field('price', float),
  field('options', dict(str, str)),
]);

export interface OrderPayment {
  transaction_type: 'payment' | 'refund';
  amount: number;
  payment_method_id: string;
}
export const OrderPayment = model<OrderPayment>('OrderPayment', [
  field('transaction_type', literal('payment', 'refund')),
  field('amount', float),
  field('payment_method_id', str),
]);

const OrderStatus = literal(
  'processed',
  'pending',
  'pending (item modified)',
  'delivered',
  'cancelled',
  'exchange requested',
  'return requested',
);

export interface Order {
  order_id: string;
  user_id: string;
  address: Model<UserAddress>;
  items: Model<OrderItem>[];
  status: string;
  fulfillments: Model<OrderFullfilment>[];
  payment_history: Model<OrderPayment>[];
  cancel_reason: string | null;
  exchange_items: unknown[] | null;
  exchange_new_items: unknown[] | null;
  exchange_payment_method_id: unknown;
  exchange_price_difference: unknown;
  return_items: unknown[] | null;
  return_payment_method_id: unknown;
}
export const Order = model<Order>('Order', [
  field('order_id', str),
  field('user_id', str),
  field('address', UserAddress),
  field('items', list(OrderItem)),
  field('status', OrderStatus),
  field('fulfillments', list(OrderFullfilment)),
  field('payment_history', list(OrderPayment)),
  field('cancel_reason', optional(literal('no longer needed', 'ordered by mistake')), null),
  field('exchange_items', optional(list(str)), null),
  field('exchange_new_items', optional(list(str)), null),
  field('exchange_payment_method_id', optional(str), null),
  field('exchange_price_difference', optional(float), null),
  field('return_items', optional(list(str)), null),
  field('return_payment_method_id', optional(str), null),
]);

export interface RetailDB {
  products: Map<string, Model<Product>>;
  users: Map<string, Model<User>>;
  orders: Map<string, Model<Order>>;
}
export const RetailDB = model<RetailDB>(
  'RetailDB',
  [field('products', dict(str, Product)), field('users', dict(str, User)), field('orders', dict(str, Order))],
  true,
);
