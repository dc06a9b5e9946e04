/**
 * The retail agent's 15 tools (`RetailTools` of the reference), in its order, with its results
 * and error texts. Arguments arrive as a model sent them (unvalidated); each tool touches them the
 * way the Python code does, so wrong types fail as they fail there.
 */
import { AttributeError_, IndexError_, ValueError_ } from '../../../py/errors.js';
import { jsonDumps } from '../../../py/format.js';
import { add, gt, iterate, len, lt, pyAbs, pyRound, sub } from '../../../py/ops.js';
import { type PyValue, pyEquals } from '../../../py/values.js';
import { calculate } from '../../calculate.js';
import { field, list, type Model, str } from '../../pydantic.js';
import type { Args, Toolkit, ToolSpec } from '../../toolkit.js';
import { fmt, hasKey, pyCount, pySorted } from '../common.js';
import {
  GiftCard,
  type Order,
  OrderPayment,
  type PaymentMethod,
  type Product,
  type RetailDB,
  type User,
  UserAddress,
  type Variant,
} from './models.js';

export type RetailKit = Toolkit<Model<RetailDB>>;

function getOrder(kit: RetailKit, orderId: PyValue): Model<Order> {
  if (!hasKey(kit.db.orders, orderId)) throw ValueError_('Order not found');
  return kit.db.orders.get(orderId)!;
}
function getUser(kit: RetailKit, userId: PyValue): Model<User> {
  if (!hasKey(kit.db.users, userId)) throw ValueError_('User not found');
  return kit.db.users.get(userId)!;
}
function getProduct(kit: RetailKit, productId: PyValue): Model<Product> {
  if (!hasKey(kit.db.products, productId)) throw ValueError_('Product not found');
  return kit.db.products.get(productId)!;
}
function getVariant(kit: RetailKit, productId: PyValue, variantId: PyValue): Model<Variant> {
  const product = getProduct(kit, productId);
  if (!hasKey(product.variants, variantId)) throw ValueError_('Variant not found');
  return product.variants.get(variantId)!;
}
function getPaymentMethod(kit: RetailKit, userId: PyValue, paymentMethodId: PyValue): PaymentMethod {
  const user = getUser(kit, userId);
  if (!hasKey(user.payment_methods, paymentMethodId)) throw ValueError_('Payment method not found');
  return user.payment_methods.get(paymentMethodId)!;
}
const isGiftCard = (m: PaymentMethod): m is Model<GiftCard> => m.$spec === (GiftCard as unknown);

const payment = (transaction_type: PyValue, amount: PyValue, payment_method_id: PyValue) =>
  OrderPayment.parse(
    new Map([
      ['transaction_type', transaction_type],
      ['amount', amount],
      ['payment_method_id', payment_method_id],
    ]),
  );

const ADDRESS_FIELDS = ['address1', 'address2', 'city', 'state', 'country', 'zip'] as const;
const address = (a: Args) => UserAddress.parse(new Map(ADDRESS_FIELDS.map((f) => [f, a.get(f)!])));

/** `for item_id in item_ids: if item_ids.count(item_id) > all_item_ids.count(item_id): raise ...` */
function checkItemsExist(order: Model<Order>, itemIds: PyValue, message: (id: PyValue) => string): void {
  const all = order.items.map((i) => i.item_id as PyValue);
  for (const id of iterate(itemIds))
    if (pyCount(itemIds, id) > pyCount(all, id)) throw ValueError_(message(id));
}

function findItem(order: Model<Order>, itemId: PyValue) {
  return order.items.find((i) => pyEquals(i.item_id, itemId));
}

function zip(a: PyValue, b: PyValue): [PyValue, PyValue][] {
  const xs = iterate(a);
  const ys = iterate(b);
  return xs.slice(0, Math.min(xs.length, ys.length)).map((x, i) => [x, ys[i]!]);
}

/** The items' price difference as the reference sums it (from the int 0, new minus old each). */
function priceDifference(
  kit: RetailKit,
  order: Model<Order>,
  pairs: [PyValue, PyValue][],
  sameIdCheck: boolean,
): { diff: PyValue; variant: Model<Variant> | undefined } {
  let diff: PyValue = 0n;
  let variant: Model<Variant> | undefined;
  for (const [itemId, newItemId] of pairs) {
    if (sameIdCheck && pyEquals(itemId, newItemId))
      throw ValueError_('The new item id should be different from the old item id');
    const item = findItem(order, itemId);
    if (!item) throw ValueError_(`Item ${fmt(itemId)} not found`);
    variant = getVariant(kit, item.product_id, newItemId);
    if (!variant.available) throw ValueError_(`New item ${fmt(newItemId)} not found or available`);
    diff = add(diff, sub(variant.price, item.price));
  }
  return { diff, variant };
}

const s = (name: string) => field(name, str);
const ls = (name: string) => field(name, list(str));

export const RETAIL_TOOLS: readonly ToolSpec<RetailKit>[] = [
  {
    name: 'calculate',
    kind: 'generic',
    params: [s('expression')],
    run: (_kit, a) => calculate(a.get('expression')!),
  },
  {
    name: 'cancel_pending_order',
    kind: 'write',
    params: [s('order_id'), s('reason')],
    run(kit, a) {
      const order = getOrder(kit, a.get('order_id')!);
      if (order.status !== 'pending') throw ValueError_('Non-pending order cannot be cancelled');
      const reason = a.get('reason')!;
      if (
        !hasKey(
          new Map([
            ['no longer needed', 0],
            ['ordered by mistake', 0],
          ]),
          reason,
        )
      )
        throw ValueError_('Invalid reason');
      const refunds: Model<OrderPayment>[] = [];
      for (const p of order.payment_history) {
        refunds.push(payment('refund', p.amount, p.payment_method_id));
        const user = getUser(kit, order.user_id);
        const method = getPaymentMethod(kit, user.user_id, p.payment_method_id);
        if (isGiftCard(method)) method.balance = pyRound(add(method.balance, p.amount), 2n) as number;
      }
      order.status = 'cancelled';
      order.cancel_reason = reason;
      order.payment_history.push(...refunds);
      return order;
    },
  },
  {
    name: 'exchange_delivered_order_items',
    kind: 'write',
    params: [s('order_id'), ls('item_ids'), ls('new_item_ids'), s('payment_method_id')],
    run(kit, a) {
      const order = getOrder(kit, a.get('order_id')!);
      if (order.status !== 'delivered') throw ValueError_('Non-delivered order cannot be exchanged');
      const itemIds = a.get('item_ids')!;
      const newItemIds = a.get('new_item_ids')!;
      checkItemsExist(order, itemIds, (id) => `Number of ${fmt(id)} not found.`);
      if (len(itemIds) !== len(newItemIds))
        throw ValueError_('The number of items to be exchanged should match.');
      const { diff } = priceDifference(kit, order, zip(itemIds, newItemIds), false);
      const diffPrice = pyRound(diff, 2n);
      const pmId = a.get('payment_method_id')!;
      const method = getPaymentMethod(kit, order.user_id, pmId);
      if (isGiftCard(method) && lt(method.balance, diffPrice))
        throw ValueError_('Insufficient gift card balance to pay for the price difference');
      order.status = 'exchange requested';
      order.exchange_items = pySorted(itemIds);
      order.exchange_new_items = pySorted(newItemIds);
      order.exchange_payment_method_id = pmId;
      order.exchange_price_difference = diffPrice;
      return order;
    },
  },
  {
    name: 'find_user_id_by_name_zip',
    kind: 'read',
    params: [s('first_name'), s('last_name'), s('zip')],
    run(kit, a) {
      const [first, last, zipCode] = [a.get('first_name')!, a.get('last_name')!, a.get('zip')!];
      for (const [userId, user] of kit.db.users) {
        if (
          user.name.first_name.toLowerCase() === lower(first) &&
          user.name.last_name.toLowerCase() === lower(last) &&
          pyEquals(user.address.zip, zipCode)
        )
          return userId;
      }
      throw ValueError_('User not found');
    },
  },
  {
    name: 'find_user_id_by_email',
    kind: 'read',
    params: [s('email')],
    run(kit, a) {
      for (const [userId, user] of kit.db.users)
        if (user.email.toLowerCase() === lower(a.get('email')!)) return userId;
      throw ValueError_('User not found');
    },
  },
  {
    name: 'get_order_details',
    kind: 'read',
    params: [s('order_id')],
    run: (kit, a) => getOrder(kit, a.get('order_id')!),
  },
  {
    name: 'get_product_details',
    kind: 'read',
    params: [s('product_id')],
    run: (kit, a) => getProduct(kit, a.get('product_id')!),
  },
  {
    name: 'get_user_details',
    kind: 'read',
    params: [s('user_id')],
    run: (kit, a) => getUser(kit, a.get('user_id')!),
  },
  {
    name: 'list_all_product_types',
    kind: 'read',
    params: [],
    run(kit) {
      const byName = new Map<string, PyValue>();
      for (const p of kit.db.products.values()) byName.set(p.name, p.product_id);
      return jsonDumps(byName, { sortKeys: true });
    },
  },
  {
    name: 'modify_pending_order_address',
    kind: 'write',
    params: [s('order_id'), ...ADDRESS_FIELDS.map(s)],
    run(kit, a) {
      const order = getOrder(kit, a.get('order_id')!);
      if (!order.status.includes('pending')) throw ValueError_('Non-pending order cannot be modified');
      order.address = address(a);
      return order;
    },
  },
  {
    name: 'modify_pending_order_items',
    kind: 'write',
    params: [s('order_id'), ls('item_ids'), ls('new_item_ids'), s('payment_method_id')],
    run(kit, a) {
      const order = getOrder(kit, a.get('order_id')!);
      if (order.status !== 'pending') throw ValueError_('Non-pending order cannot be modified');
      const itemIds = a.get('item_ids')!;
      const newItemIds = a.get('new_item_ids')!;
      checkItemsExist(order, itemIds, (id) => `${fmt(id)} not found`);
      if (len(itemIds) !== len(newItemIds))
        throw ValueError_('The number of items to be exchanged should match');
      const pairs = zip(itemIds, newItemIds);
      const { diff, variant } = priceDifference(kit, order, pairs, true);
      const pmId = a.get('payment_method_id')!;
      const method = getPaymentMethod(kit, order.user_id, pmId);
      if (isGiftCard(method) && lt(method.balance, diff))
        throw ValueError_('Insufficient gift card balance to pay for the new item');
      order.payment_history.push(payment(gt(diff, 0n) ? 'payment' : 'refund', pyAbs(diff), pmId));
      if (isGiftCard(method)) method.balance = pyRound(sub(method.balance, diff), 2n) as number;
      // The reference gives every changed item the price and options of the last new variant.
      for (const [itemId, newItemId] of pairs) {
        const item = findItem(order, itemId);
        if (!item) throw ValueError_(`Item ${fmt(itemId)} not found`);
        item.item_id = newItemId as string;
        item.price = variant!.price;
        item.options = variant!.options;
      }
      order.status = 'pending (item modified)';
      return order;
    },
  },
  {
    name: 'modify_pending_order_payment',
    kind: 'write',
    params: [s('order_id'), s('payment_method_id')],
    run(kit, a) {
      const order = getOrder(kit, a.get('order_id')!);
      if (!order.status.includes('pending')) throw ValueError_('Non-pending order cannot be modified');
      const pmId = a.get('payment_method_id')!;
      const method = getPaymentMethod(kit, order.user_id, pmId);
      const history = order.payment_history;
      if (history.length !== 1 || history[0]!.transaction_type !== 'payment')
        throw ValueError_('There should be exactly one payment for a pending order');
      if (pyEquals(history[0]!.payment_method_id, pmId))
        throw ValueError_('The new payment method should be different from the current one');
      const amount = history[0]!.amount;
      if (isGiftCard(method) && lt(method.balance, amount))
        throw ValueError_('Insufficient gift card balance to pay for the order');
      history.push(
        payment('payment', amount, pmId),
        payment('refund', amount, history[0]!.payment_method_id),
      );
      if (isGiftCard(method)) method.balance = pyRound(sub(method.balance, amount), 2n) as number;
      const old = getPaymentMethod(kit, order.user_id, history[0]!.payment_method_id);
      if (isGiftCard(old)) old.balance = pyRound(add(old.balance, amount), 2n) as number;
      return order;
    },
  },
  {
    name: 'modify_user_address',
    kind: 'write',
    params: [s('user_id'), ...ADDRESS_FIELDS.map(s)],
    run(kit, a) {
      const user = getUser(kit, a.get('user_id')!);
      user.address = address(a);
      return user;
    },
  },
  {
    name: 'return_delivered_order_items',
    kind: 'write',
    params: [s('order_id'), ls('item_ids'), s('payment_method_id')],
    run(kit, a) {
      const order = getOrder(kit, a.get('order_id')!);
      if (order.status !== 'delivered') throw ValueError_('Non-delivered order cannot be returned');
      const user = getUser(kit, order.user_id);
      const pmId = a.get('payment_method_id')!;
      const method = getPaymentMethod(kit, user.user_id, pmId);
      if (!isGiftCard(method)) {
        const first = order.payment_history[0];
        if (!first) throw IndexError_('list index out of range');
        if (!pyEquals(pmId, first.payment_method_id))
          throw ValueError_('Payment method should be the original payment method');
      }
      const itemIds = a.get('item_ids')!;
      checkItemsExist(order, itemIds, () => 'Some item not found');
      order.status = 'return requested';
      order.return_items = pySorted(itemIds);
      order.return_payment_method_id = pmId;
      return order;
    },
  },
  {
    name: 'transfer_to_human_agents',
    kind: 'generic',
    params: [s('summary')],
    run: () => 'Transfer successful',
  },
];

/** `x.lower()` on a model's argument: only a str has it. */
function lower(x: PyValue): string {
  if (typeof x !== 'string') throw AttributeError_(x, 'lower');
  return x.toLowerCase();
}
