import { describe, expect, it } from 'vitest';
import type { ScenarioContext } from '../../src/envs/bfcl/apis/api.js';
import { type TradingBotInstance, tradingBot } from '../../src/envs/bfcl/apis/tradingBot.js';
import { parsePyJson } from '../../src/envs/py/json.js';
import type { PyDict, PyValue } from '../../src/envs/py/values.js';
import { dictOf, ELLIPSIS } from '../../src/envs/py/values.js';
import { callMethod } from '../support/api.js';

const plain: ScenarioContext = { longContext: false, constants: undefined };
/** Tiny stand-ins for the long-context tables (the real ones come from the data directory). */
const longCtx: ScenarioContext = {
  longContext: true,
  constants: new Map<string, PyValue>([
    ['WATCH_LIST_EXTENSION', ['XX', ELLIPSIS]],
    ['TRANSACTION_HISTORY_EXTENSION', [dictOf({ type: 'deposit', amount: 1.5, timestamp: 'old' })]],
    ['MA_5_EXTENSION', [1.0, 2.0]],
    ['MA_20_EXTENSION', [3.0]],
    ['TECHNOLOGY_EXTENSION', ['T1']],
    ['AUTOMOBILE_EXTENSION', ['A1']],
    ['ORDER_DETAIL_EXTENSION', dictOf({ overview: '{symbol} is {{great}}' })],
  ]),
};

function make(configJson = '{}', ctx = plain): TradingBotInstance {
  const inst = tradingBot.create();
  inst.loadScenario(parsePyJson(configJson) as PyDict, ctx);
  return inst;
}

function call(inst: TradingBotInstance, name: string, ...args: (PyValue | undefined)[]): string {
  return callMethod(tradingBot, inst, name, ...args);
}

const SCENARIO = `{"orders": {"12345": {"symbol": "AAPL", "price": 210.65, "num_shares": 10, "status": "Completed"},
  "order_type": "Buy"}, "account_info": {"account_id": 12345, "balance": 10000.0, "binding_card": 1974202140965533},
  "authenticated": true, "market_status": "Open", "order_counter": 12446,
  "stocks": {"AAPL": {"price": 227.16, "percent_change": 0.17, "volume": 2.552, "MA(5)": 227.11, "MA(20)": 227.09},
             "TSLA": {"price": 667.92, "percent_change": -0.12, "volume": 1.654, "MA(5)": 671.15, "MA(20)": 668.2}},
  "watch_list": ["NVDA"], "transaction_history": []}`;

describe('TradingBot', () => {
  it('keeps the stray "order_type" key next to the int order ids', () => {
    const inst = make(SCENARIO);
    expect(call(inst, 'get_order_details', 99999n)).toBe(
      `{"error": "Order with ID 99999 not found.Here is the list of orders_id: [12345, 'order_type']"}`,
    );
    expect(call(inst, 'get_order_details', 'order_type')).toBe('Buy');
    expect(call(inst, 'cancel_order', 'order_type')).toBe(
      "Error during execution: string indices must be integers, not 'str'",
    );
  });

  it('draws CPython-exact transaction timestamps from seed 1053520', () => {
    const inst = make(SCENARIO);
    expect(call(inst, 'fund_account', 100n)).toBe(
      '{"status": "Account funded successfully", "new_balance": 10100.0}',
    );
    expect(call(inst, 'fund_account', 50.5)).toBe(
      '{"status": "Account funded successfully", "new_balance": 10150.5}',
    );
    expect(call(inst, 'get_transaction_history')).toBe(
      '{"transaction_history": [{"type": "deposit", "amount": 100, "timestamp": "2024-09-02 05:40:15"}, ' +
        '{"type": "deposit", "amount": 50.5, "timestamp": "2024-09-01 12:26:34"}]}',
    );
    expect(call(inst, 'get_transaction_history', '2024-09-02')).toContain('05:40:15"}]}');
  });

  it('raises the strptime texts for bad dates', () => {
    const inst = make(SCENARIO);
    const err = (d: PyValue) => call(inst, 'get_transaction_history', d);
    expect(err('2024/09/01')).toBe(
      "Error during execution: time data '2024/09/01' does not match format '%Y-%m-%d'",
    );
    expect(err('2024-09-01x')).toBe('Error during execution: unconverted data remains: x');
    expect(err('2024-02-30')).toBe('Error during execution: day is out of range for month');
    expect(err('0000-01-01')).toBe('Error during execution: year 0 is out of range');
    expect(err(5n)).toBe('Error during execution: strptime() argument 1 must be str, not int');
    expect(err('2024-9-1')).toBe('{"transaction_history": []}');
  });

  it('stores a float price with status Open but reports Pending', () => {
    const inst = make(SCENARIO);
    expect(call(inst, 'place_order', 'Sell', 'AAPL', 500n, 100n)).toBe(
      '{"order_id": 12446, "order_type": "Sell", "status": "Pending", "price": 500.0, "amount": 100}',
    );
    expect(call(inst, 'get_order_details', 12446n)).toBe(
      '{"id": 12446, "order_type": "Sell", "symbol": "AAPL", "price": 500.0, "amount": 100, "status": "Open"}',
    );
    expect(call(inst, 'place_order', 'buy', 'AAPL', 500n, 100n)).toBe(
      '{"error": "Insufficient funds: required $50000.00 but only $10000.00 available."}',
    );
    expect(call(inst, 'place_order', 'Buy', 'AAPL', '5', 1n)).toBe(
      "Error during execution: '<=' not supported between instances of 'str' and 'int'",
    );
  });

  it('returns lists where the reference does', () => {
    const anon = make();
    expect(call(anon, 'get_watchlist')).toBe(
      "['Error: User not authenticated. Please log in to view the watchlist.']",
    );
    expect(call(anon, 'get_current_time')).toBe('{"current_time": "10:30 AM"}');
    const long = make(SCENARIO, longCtx);
    expect(call(long, 'get_watchlist')).toBe("['NVDA', 'XX', Ellipsis]");
    expect(call(long, 'get_available_stocks', 'Automobile')).toBe(
      '{"stock_list": ["TSLA", "F", "GM", "A1"]}',
    );
    // The sector map is rebuilt per call, so the extension is not appended twice.
    expect(call(long, 'get_available_stocks', 'Automobile')).toBe(
      '{"stock_list": ["TSLA", "F", "GM", "A1"]}',
    );
    expect(call(long, 'get_order_details', 12345n)).toBe(
      '{"symbol": "AAPL", "price": 210.65, "num_shares": 10, "status": "Completed", ' +
        '"metadata": {"overview": "AAPL is {great}"}}',
    );
    expect(call(long, 'get_stock_info', 'TSLA')).toContain('"MA(5)": [1.0, 2.0], "MA(20)": [3.0]}');
  });
});
