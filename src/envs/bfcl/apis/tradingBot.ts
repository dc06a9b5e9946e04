/**
 * TradingBot (`trading_bot.py` in the reference): a stock trading account with a fixed clock.
 *
 * Arguments arrive as arbitrary Python values, so comparisons, arithmetic and lookups on them go
 * through the `py/ops` helpers and fail with CPython 3.11's texts. The long-context tables come
 * from the data directory (`long_context.py` constants), never from this file.
 */

import {
  compareDateTimes,
  DATE_FORMAT,
  DATETIME_FORMAT,
  DATETIME_MAX,
  DATETIME_MIN,
  strptime,
} from '../../py/datetime.js';
import { AttributeError_, PyException, TypeError_, ValueError_ } from '../../py/errors.js';
import { repr, str } from '../../py/format.js';
import {
  add,
  contains,
  dictCopy,
  dictGetOr,
  formatFixed,
  ge,
  getItem,
  gt,
  iterate,
  le,
  listFor,
  listRemove,
  pyAbs,
  requireHashable,
  setItem,
  strFor,
  sub,
  toFloat,
  toInt,
  truthy,
} from '../../py/ops.js';
import { PyRandom, randomFromScenarioSeed } from '../../py/random.js';
import type { PyDict, PyList, PyValue } from '../../py/values.js';
import { dictOf, dictSet, pyDict, pyEquals, typeName } from '../../py/values.js';
import type { ApiClass, BfclApi, BoundArgs, ScenarioContext } from './api.js';
import { longContextConstant, opt, req } from './api.js';

// ---------------------------------------------------------------------------------------------
// Module data of the reference.

const DEFAULT_RANDOM_SEED = 1053520n;

const stock = (price: number, percentChange: number, volume: number, ma5: number, ma20: number): PyDict =>
  dictOf({ price, percent_change: percentChange, volume, 'MA(5)': ma5, 'MA(20)': ma20 });

/** `DEFAULT_STATE` of the reference, built fresh for every load (the reference deep-copies it). */
function defaultState(): PyDict {
  return dictOf({
    orders: pyDict([
      [
        12345n,
        dictOf({
          id: 12345n,
          order_type: 'Buy',
          symbol: 'AAPL',
          price: 210.65,
          amount: 10n,
          status: 'Completed',
        }),
      ],
      [
        12446n,
        dictOf({
          id: 12446n,
          order_type: 'Sell',
          symbol: 'GOOG',
          price: 2840.56,
          amount: 5n,
          status: 'Pending',
        }),
      ],
    ]),
    account_info: dictOf({ account_id: 12345n, balance: 10000.0, binding_card: 1974202140965533n }),
    authenticated: false,
    market_status: 'Closed',
    order_counter: 12446n,
    stocks: dictOf({
      AAPL: stock(227.16, 0.17, 2.552, 227.11, 227.09),
      GOOG: stock(2840.34, 0.24, 1.123, 2835.67, 2842.15),
      TSLA: stock(667.92, -0.12, 1.654, 671.15, 668.2),
      MSFT: stock(310.23, 0.09, 3.234, 309.88, 310.11),
      NVDA: stock(220.34, 0.34, 1.234, 220.45, 220.67),
      ALPH: stock(1320.45, -0.08, 1.567, 1321.12, 1325.78),
      OMEG: stock(457.23, 0.12, 2.345, 456.78, 458.12),
      QUAS: stock(725.89, -0.03, 1.789, 726.45, 728.0),
      NEPT: stock(88.34, 0.19, 0.654, 88.21, 88.67),
      SYNX: stock(345.67, 0.11, 2.112, 345.34, 346.12),
      ZETA: stock(22.09, -0.05, 0.789, 22.12, 22.34),
    }),
    watch_list: ['NVDA'],
    transaction_history: [],
    random_seed: DEFAULT_RANDOM_SEED,
  });
}

/** The literal map inside `get_symbol_by_name` (Amazon and Gorilla have no stock entry). */
const SYMBOL_BY_NAME: ReadonlyMap<string, string> = new Map([
  ['Apple', 'AAPL'],
  ['Google', 'GOOG'],
  ['Tesla', 'TSLA'],
  ['Microsoft', 'MSFT'],
  ['Nvidia', 'NVDA'],
  ['Zeta Corp', 'ZETA'],
  ['Alpha Tech', 'ALPH'],
  ['Omega Industries', 'OMEG'],
  ['Quasar Ltd.', 'QUAS'],
  ['Neptune Systems', 'NEPT'],
  ['Synex Solutions', 'SYNX'],
  ['Amazon', 'AMZN'],
  ['Gorilla', 'GORI'],
]);

/** The literal `sector_map` inside `get_available_stocks`, rebuilt per call (it gets extended). */
function sectorMap(): PyDict {
  return dictOf({
    Technology: ['AAPL', 'GOOG', 'MSFT', 'NVDA'],
    Automobile: ['TSLA', 'F', 'GM'],
  });
}

/**
 * The fixed clock: `CURRENT_TIME = datetime(2024, 9, 1, 10, 30)`. Kept as a UTC instant; the
 * reference's naive local-time round trip (`timestamp()` / `fromtimestamp()`) cancels out.
 */
const CURRENT_TIME_MS = Date.UTC(2024, 8, 1, 10, 30, 0);
const SECONDS_PER_DAY = 86400n;

// ---------------------------------------------------------------------------------------------
// Small Python builtins the shared py module does not provide.

/**
 * `container[key]`. Like `ops.getItem`, except for str containers, whose CPython 3.11 text
 * differs from the list one: `string indices must be integers, not 'str'` (cancel_order on the
 * stray `"order_type": "Buy"` entry of the orders dict hits this).
 */
function subscript(container: PyValue, key: PyValue): PyValue {
  if (typeof container === 'string' && typeof key !== 'bigint' && typeof key !== 'boolean') {
    throw TypeError_(`string indices must be integers, not '${typeName(key)}'`);
  }
  return getItem(container, key);
}

/** `f"{v:.2f}"` */
function format2f(v: PyValue): string {
  if (typeof v === 'number' || typeof v === 'bigint' || typeof v === 'boolean') {
    return formatFixed(toFloat(v), 2);
  }
  if (typeof v === 'string') throw ValueError_("Unknown format code 'f' for object of type 'str'");
  throw TypeError_(`unsupported format string passed to ${typeName(v)}.__format__`);
}

/** `', '.join(items)` */
function joinComma(items: PyValue[]): string {
  return items
    .map((item, i) => {
      if (typeof item !== 'string') {
        throw TypeError_(`sequence item ${i}: expected str instance, ${typeName(item)} found`);
      }
      return item;
    })
    .join(', ');
}

/**
 * `template.format(symbol=value)` for the long-context order templates, which only use
 * `{symbol}` (plus `{{`/`}}` escapes, handled for completeness).
 */
function formatSymbol(template: PyValue, symbol: PyValue): string {
  const text = strFor(template, 'format');
  return text.replace(/\{\{|\}\}|\{([^{}]*)\}/g, (m: string, field: string | undefined) => {
    if (m === '{{') return '{';
    if (m === '}}') return '}';
    if (field === 'symbol') return str(symbol);
    throw new Error(`long-context order template uses an unsupported field ${m}`);
  });
}

interface LongContextTables {
  watchList: PyValue;
  transactionHistory: PyValue;
  ma5: PyValue;
  ma20: PyValue;
  technology: PyValue;
  automobile: PyValue;
  orderDetail: PyValue;
}

export class TradingBotInstance implements BfclApi {
  readonly className = 'TradingBot' as const;

  /** Order id -> order. Digit-string keys become ints at load; other keys (the stray `"order_type"`) stay. */
  orders: PyDict = new Map();
  account_info: PyValue = new Map();
  authenticated: PyValue = false;
  market_status: PyValue = 'Closed';
  order_counter: PyValue = 0n;
  stocks: PyValue = new Map();
  watch_list: PyValue = [];
  transaction_history: PyValue = [];
  long_context = false;

  private random = new PyRandom(DEFAULT_RANDOM_SEED);
  private tables: LongContextTables | undefined;

  loadScenario(config: PyDict, ctx: ScenarioContext): void {
    const defaults = defaultState();
    const pick = (key: string): PyValue => (config.has(key) ? config.get(key)! : defaults.get(key)!);
    const orders = pick('orders');
    if (!(orders instanceof Map)) throw AttributeError_(orders, 'items');
    this.orders = new Map();
    for (const [k, v] of orders) {
      // `int(k) if isinstance(k, str) and k.isdigit() else k`
      dictSet(this.orders, typeof k === 'string' && /^[0-9]+$/.test(k) ? BigInt(k) : k, v);
    }
    this.account_info = pick('account_info');
    this.authenticated = pick('authenticated');
    this.market_status = pick('market_status');
    this.order_counter = pick('order_counter');
    this.stocks = pick('stocks');
    this.watch_list = pick('watch_list');
    this.transaction_history = pick('transaction_history');
    this.long_context = ctx.longContext;
    this.random = randomFromScenarioSeed(pick('random_seed'), 'TradingBot');
    this.tables = ctx.longContext
      ? {
          watchList: longContextConstant(ctx, 'WATCH_LIST_EXTENSION'),
          transactionHistory: longContextConstant(ctx, 'TRANSACTION_HISTORY_EXTENSION'),
          ma5: longContextConstant(ctx, 'MA_5_EXTENSION'),
          ma20: longContextConstant(ctx, 'MA_20_EXTENSION'),
          technology: longContextConstant(ctx, 'TECHNOLOGY_EXTENSION'),
          automobile: longContextConstant(ctx, 'AUTOMOBILE_EXTENSION'),
          orderDetail: longContextConstant(ctx, 'ORDER_DETAIL_EXTENSION'),
        }
      : undefined;
  }

  publicState(): ReadonlyMap<string, PyValue> {
    return new Map<string, PyValue>([
      ['orders', this.orders],
      ['account_info', this.account_info],
      ['authenticated', this.authenticated],
      ['market_status', this.market_status],
      ['order_counter', this.order_counter],
      ['stocks', this.stocks],
      ['watch_list', this.watch_list],
      ['transaction_history', this.transaction_history],
      ['long_context', this.long_context],
    ]);
  }

  /**
   * `randint(ts(CURRENT_TIME), ts(CURRENT_TIME + 1 day))` formatted as local time: the same as
   * CURRENT_TIME plus `randbelow(86401)` seconds. One draw per deposit or withdrawal.
   */
  private transactionTimestamp(): string {
    const offset = this.random.randint(0n, SECONDS_PER_DAY);
    const d = new Date(CURRENT_TIME_MS + Number(offset) * 1000);
    const p2 = (n: number) => String(n).padStart(2, '0');
    return (
      `${String(d.getUTCFullYear()).padStart(4, '0')}-${p2(d.getUTCMonth() + 1)}-${p2(d.getUTCDate())} ` +
      `${p2(d.getUTCHours())}:${p2(d.getUTCMinutes())}:${p2(d.getUTCSeconds())}`
    );
  }

  getCurrentTime(): PyValue {
    // CURRENT_TIME.strftime("%I:%M %p")
    return dictOf({ current_time: '10:30 AM' });
  }

  getSymbolByName(name: PyValue): PyValue {
    requireHashable(name);
    const symbol = typeof name === 'string' ? SYMBOL_BY_NAME.get(name) : undefined;
    return dictOf({ symbol: symbol ?? 'Stock not found' });
  }

  getStockInfo(symbol: PyValue): PyValue {
    if (!contains(this.stocks, symbol)) {
      return dictOf({ error: `Stock with symbol '${str(symbol)}' not found.` });
    }
    if (this.tables) {
      // Long context: a copy with the moving averages replaced by 2000-value lists.
      const info = dictCopy(subscript(this.stocks, symbol));
      info.set('MA(5)', this.tables.ma5);
      info.set('MA(20)', this.tables.ma20);
      return info;
    }
    return subscript(this.stocks, symbol);
  }

  getOrderDetails(orderId: PyValue): PyValue {
    if (!contains(this.orders, orderId)) {
      // The error lists every key in Python repr, the stray 'order_type' key included (trading-005).
      return dictOf({
        error:
          `Order with ID ${str(orderId)} not found.` +
          'Here is the list of orders_id: ' +
          repr(iterate(this.orders)),
      });
    }
    if (this.tables) {
      const order = dictCopy(subscript(this.orders, orderId));
      const symbol = subscript(order, 'symbol');
      const extension = this.tables.orderDetail;
      if (!(extension instanceof Map)) throw new Error('ORDER_DETAIL_EXTENSION must be a dict');
      const metadata: PyDict = new Map();
      for (const [key, template] of extension) metadata.set(key, formatSymbol(template, symbol));
      order.set('metadata', metadata);
      return order;
    }
    return subscript(this.orders, orderId);
  }

  cancelOrder(orderId: PyValue): PyValue {
    if (!contains(this.orders, orderId)) return dictOf({ error: `Order with ID ${str(orderId)} not found.` });
    const order = subscript(this.orders, orderId);
    if (pyEquals(subscript(order, 'status'), 'Completed')) {
      return dictOf({ error: `Can't cancel order ${str(orderId)}. Order is already completed.` });
    }
    setItem(order, 'status', 'Cancelled');
    return dictOf({ order_id: orderId, status: 'Cancelled' });
  }

  placeOrder(orderType: PyValue, symbol: PyValue, price: PyValue, amount: PyValue): PyValue {
    if (!truthy(this.authenticated)) {
      return dictOf({ error: 'User not authenticated. Please log in to place an order.' });
    }
    if (!contains(this.stocks, symbol)) return dictOf({ error: `Invalid stock symbol: ${str(symbol)}` });
    if (le(price, 0n) || le(amount, 0n))
      return dictOf({ error: 'Price and amount must be positive values.' });

    // The funds check is only for a case-insensitive "buy"; the market status is never checked.
    if (strFor(orderType, 'lower').toLowerCase() === 'buy') {
      const unitPrice = toFloat(price);
      const shares = toInt(amount);
      const sharesAsFloat = Number(shares);
      if (!Number.isFinite(sharesAsFloat)) {
        throw new PyException('OverflowError', 'int too large to convert to float');
      }
      const totalCost = unitPrice * sharesAsFloat;
      const balance = dictGetOr(this.account_info, 'balance', 0n);
      if (gt(totalCost, balance)) {
        return dictOf({
          error: `Insufficient funds: required $${format2f(totalCost)} but only $${format2f(balance)} available.`,
        });
      }
    }

    // The stored order has a float price and status "Open", the response says "Pending".
    const floatPrice = toFloat(price);
    const orderId = this.order_counter;
    setItem(
      this.orders,
      orderId,
      dictOf({ id: orderId, order_type: orderType, symbol, price: floatPrice, amount, status: 'Open' }),
    );
    this.order_counter = add(this.order_counter, 1n);
    return dictOf({ order_id: orderId, order_type: orderType, status: 'Pending', price: floatPrice, amount });
  }

  withdrawFunds(amount: PyValue): PyValue {
    if (!truthy(this.authenticated)) {
      return dictOf({ error: 'User not authenticated. Please log in to make a transaction.' });
    }
    if (!pyEquals(this.market_status, 'Open')) {
      return dictOf({ error: 'Market is closed. Transactions are not allowed.' });
    }
    if (le(amount, 0n)) return dictOf({ error: 'Transaction amount must be positive.' });
    if (gt(amount, subscript(this.account_info, 'balance'))) {
      return dictOf({ error: 'Insufficient funds for withdrawal.' });
    }
    setItem(this.account_info, 'balance', sub(subscript(this.account_info, 'balance'), amount));
    this.recordTransaction('withdrawal', amount);
    return dictOf({
      status: 'Withdrawal successful',
      new_balance: subscript(this.account_info, 'balance'),
    });
  }

  /** Appends `{"type", "amount", "timestamp"}`; the random draw happens only for a real list. */
  private recordTransaction(type: string, amount: PyValue): void {
    const history = listFor(this.transaction_history, 'append');
    history.push(dictOf({ type, amount, timestamp: this.transactionTimestamp() }));
  }

  getAccountInfo(): PyValue {
    if (!truthy(this.authenticated)) {
      return dictOf({ error: 'User not authenticated. Please log in to view account information.' });
    }
    return this.account_info;
  }

  /** The credentials are ignored. */
  tradingLogin(): PyValue {
    if (truthy(this.authenticated)) return dictOf({ status: 'Already logged in' });
    this.authenticated = true;
    return dictOf({ status: 'Logged in successfully' });
  }

  tradingGetLoginStatus(): PyValue {
    return dictOf({ status: truthy(this.authenticated) });
  }

  tradingLogout(): PyValue {
    if (!truthy(this.authenticated)) return dictOf({ status: 'No user is currently logged in' });
    this.authenticated = false;
    return dictOf({ status: 'Logged out successfully' });
  }

  fundAccount(amount: PyValue): PyValue {
    if (!truthy(this.authenticated)) {
      return dictOf({ error: 'User not authenticated. Please log in to fund the account.' });
    }
    if (le(amount, 0n)) return dictOf({ error: 'Funding amount must be positive.' });
    setItem(this.account_info, 'balance', add(subscript(this.account_info, 'balance'), amount));
    this.recordTransaction('deposit', amount);
    return dictOf({
      status: 'Account funded successfully',
      new_balance: subscript(this.account_info, 'balance'),
    });
  }

  removeStockFromWatchlist(symbol: PyValue): PyValue {
    if (!truthy(this.authenticated)) {
      return dictOf({ error: 'User not authenticated. Please log in to modify the watchlist.' });
    }
    if (!contains(this.watch_list, symbol)) {
      return dictOf({ error: `Stock ${str(symbol)} not found in watchlist.` });
    }
    listRemove(this.watch_list, symbol);
    return dictOf({ status: `Stock ${str(symbol)} removed from watchlist successfully.` });
  }

  /** Not authenticated, or long context: a *list* (so the result is its Python repr). */
  getWatchlist(): PyValue {
    if (!truthy(this.authenticated)) {
      return ['Error: User not authenticated. Please log in to view the watchlist.'];
    }
    if (this.tables) {
      // The extension ends with Python's Ellipsis, which shows up in the repr.
      return [...listFor(this.watch_list, 'copy'), ...iterate(this.tables.watchList)];
    }
    return dictOf({ watchlist: this.watch_list });
  }

  getOrderHistory(): PyValue {
    if (!truthy(this.authenticated)) {
      return [dictOf({ error: 'User not authenticated. Please log in to view order history.' })];
    }
    return dictOf({ history: iterate(this.orders) });
  }

  getTransactionHistory(startDate: PyValue, endDate: PyValue): PyValue {
    if (!truthy(this.authenticated)) {
      return [dictOf({ error: 'User not authenticated. Please log in to view transaction history.' })];
    }
    const start = truthy(startDate) ? strptime(startDate, DATE_FORMAT) : DATETIME_MIN;
    const end = truthy(endDate) ? strptime(endDate, DATE_FORMAT) : DATETIME_MAX;
    // Every stored timestamp is parsed, even when the range could not include it.
    const filtered = iterate(this.transaction_history).filter((transaction) => {
      const at = strptime(subscript(transaction, 'timestamp'), DATETIME_FORMAT);
      return compareDateTimes(start, at) <= 0 && compareDateTimes(at, end) <= 0;
    });
    if (this.tables) filtered.push(...iterate(this.tables.transactionHistory));
    return dictOf({ transaction_history: filtered });
  }

  getAvailableStocks(sector: PyValue): PyValue {
    const sectors = sectorMap();
    if (this.tables) {
      (sectors.get('Technology') as PyList).push(...iterate(this.tables.technology));
      (sectors.get('Automobile') as PyList).push(...iterate(this.tables.automobile));
    }
    return dictOf({ stock_list: dictGetOr(sectors, sector, []) });
  }

  /** Unknown symbols count as price 0. */
  filterStocksByPrice(stocks: PyValue, minPrice: PyValue, maxPrice: PyValue): PyValue {
    const priceOf = (symbol: PyValue) => dictGetOr(dictGetOr(this.stocks, symbol, new Map()), 'price', 0n);
    const filtered = iterate(stocks).filter(
      (symbol) => ge(priceOf(symbol), minPrice) && le(priceOf(symbol), maxPrice),
    );
    return dictOf({ filtered_stocks: filtered });
  }

  /** Needs no authentication; unknown symbols are silently skipped. */
  addToWatchlist(stockSymbol: PyValue): PyValue {
    if (!contains(this.watch_list, stockSymbol)) {
      if (contains(this.stocks, stockSymbol)) listFor(this.watch_list, 'append').push(stockSymbol);
    }
    return dictOf({ watchlist: this.watch_list });
  }

  notifyPriceChange(stocks: PyValue, threshold: PyValue): PyValue {
    const changed = iterate(stocks).filter(
      (symbol) =>
        contains(this.stocks, symbol) &&
        ge(pyAbs(subscript(subscript(this.stocks, symbol), 'percent_change')), threshold),
    );
    if (changed.length > 0) {
      return dictOf({ notification: `Stocks ${joinComma(changed)} have significant price changes.` });
    }
    return dictOf({ notification: 'No significant price changes in the selected stocks.' });
  }
}

const a = (args: BoundArgs, i: number): PyValue => args[i] as PyValue;
/** An optional parameter whose Python default is None. */
const orNone = (args: BoundArgs, i: number): PyValue => args[i] ?? null;

export const tradingBot: ApiClass<TradingBotInstance> = {
  className: 'TradingBot',
  stateless: false,
  create: () => new TradingBotInstance(),
  methods: {
    get_current_time: { params: [], run: (self) => self.getCurrentTime() },
    get_symbol_by_name: { params: [req('name')], run: (self, args) => self.getSymbolByName(a(args, 0)) },
    get_stock_info: { params: [req('symbol')], run: (self, args) => self.getStockInfo(a(args, 0)) },
    get_order_details: { params: [req('order_id')], run: (self, args) => self.getOrderDetails(a(args, 0)) },
    cancel_order: { params: [req('order_id')], run: (self, args) => self.cancelOrder(a(args, 0)) },
    place_order: {
      params: [req('order_type'), req('symbol'), req('price'), req('amount')],
      run: (self, args) => self.placeOrder(a(args, 0), a(args, 1), a(args, 2), a(args, 3)),
    },
    withdraw_funds: { params: [req('amount')], run: (self, args) => self.withdrawFunds(a(args, 0)) },
    get_account_info: { params: [], run: (self) => self.getAccountInfo() },
    trading_login: { params: [req('username'), req('password')], run: (self) => self.tradingLogin() },
    trading_get_login_status: { params: [], run: (self) => self.tradingGetLoginStatus() },
    trading_logout: { params: [], run: (self) => self.tradingLogout() },
    fund_account: { params: [req('amount')], run: (self, args) => self.fundAccount(a(args, 0)) },
    remove_stock_from_watchlist: {
      params: [req('symbol')],
      run: (self, args) => self.removeStockFromWatchlist(a(args, 0)),
    },
    get_watchlist: { params: [], run: (self) => self.getWatchlist() },
    get_order_history: { params: [], run: (self) => self.getOrderHistory() },
    get_transaction_history: {
      params: [opt('start_date'), opt('end_date')],
      run: (self, args) => self.getTransactionHistory(orNone(args, 0), orNone(args, 1)),
    },
    get_available_stocks: {
      params: [req('sector')],
      run: (self, args) => self.getAvailableStocks(a(args, 0)),
    },
    filter_stocks_by_price: {
      params: [req('stocks'), req('min_price'), req('max_price')],
      run: (self, args) => self.filterStocksByPrice(a(args, 0), a(args, 1), a(args, 2)),
    },
    add_to_watchlist: { params: [req('stock')], run: (self, args) => self.addToWatchlist(a(args, 0)) },
    notify_price_change: {
      params: [req('stocks'), req('threshold')],
      run: (self, args) => self.notifyPriceChange(a(args, 0), a(args, 1)),
    },
  },
};
