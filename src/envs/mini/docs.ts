/**
 * The mini suite's own function docs: a small subset of each class's methods, described briefly
 * in our own words. Parameter names and which ones are required match the real method tables
 * (`API_CLASSES[cls].methods[name].params`); a test checks it.
 */
import type { MultiTurnClassName } from '../bfcl/apis/api.js';
import type { FunctionDoc } from '../bfcl/data/tasks.js';
import type { JsonSchemaLike } from '../tools.js';

/** name, BFCL type, description ('' when the name says it all), required (default true) */
type P = readonly [name: string, type: string, description: string, required?: boolean];

function fn(name: string, description: string, params: readonly P[] = []): FunctionDoc {
  const properties: Record<string, JsonSchemaLike> = {};
  for (const [n, type, d] of params) {
    const described = d ? { description: d } : {};
    // 'array' holds strings; 'array<float>' says the item type
    const item = /^array(?:<(\w+)>)?$/.exec(type);
    properties[n] = item
      ? { type: 'array', items: { type: item[1] ?? 'string' }, ...described }
      : { type, ...described };
  }
  return {
    name,
    description,
    parameters: {
      type: 'dict',
      properties,
      required: params.filter((p) => p[3] !== false).map((p) => p[0]),
    },
  };
}

export const MINI_DOCS: Readonly<Record<MultiTurnClassName, readonly FunctionDoc[]>> = {
  GorillaFileSystem: [
    fn('ls', 'List the current directory.', [['a', 'boolean', 'Show hidden files', false]]),
    fn('cd', 'Change directory, one level at a time.', [['folder', 'string', '']]),
    fn('mkdir', 'Make a directory here.', [['dir_name', 'string', '']]),
    fn('touch', 'Create an empty file here.', [['file_name', 'string', '']]),
    fn('echo', 'Write text into an existing file.', [
      ['content', 'string', ''],
      ['file_name', 'string', '', false],
    ]),
    fn('cat', 'Show a file.', [['file_name', 'string', '']]),
    fn('grep', 'Lines of a file containing a pattern.', [
      ['file_name', 'string', ''],
      ['pattern', 'string', ''],
    ]),
    fn('wc', 'Count lines, words or characters of a file.', [
      ['file_name', 'string', ''],
      ['mode', 'string', 'l, w or c', false],
    ]),
    fn('mv', 'Move or rename a file.', [
      ['source', 'string', ''],
      ['destination', 'string', ''],
    ]),
    fn('cp', 'Copy a file.', [
      ['source', 'string', ''],
      ['destination', 'string', ''],
    ]),
    fn('rm', 'Delete a file.', [['file_name', 'string', '']]),
  ],
  MathAPI: [
    fn('add', 'a + b.', [
      ['a', 'float', ''],
      ['b', 'float', ''],
    ]),
    fn('subtract', 'a - b.', [
      ['a', 'float', ''],
      ['b', 'float', ''],
    ]),
    fn('multiply', 'a * b.', [
      ['a', 'float', ''],
      ['b', 'float', ''],
    ]),
    fn('divide', 'a / b.', [
      ['a', 'float', ''],
      ['b', 'float', ''],
    ]),
    fn('mean', 'Average of numbers.', [['numbers', 'array<float>', '']]),
    fn('percentage', 'part as a percent of whole.', [
      ['part', 'float', ''],
      ['whole', 'float', ''],
    ]),
  ],
  MessageAPI: [
    fn('get_user_id', 'Look up a user id by name.', [['user', 'string', '']]),
    fn('send_message', 'Send a message to a user id.', [
      ['receiver_id', 'string', ''],
      ['message', 'string', ''],
    ]),
    fn('delete_message', 'Delete the latest message sent to a user id.', [['receiver_id', 'string', '']]),
    fn('view_messages_sent', 'Show sent messages.'),
    fn('add_contact', 'Add a contact.', [['user_name', 'string', '']]),
  ],
  TwitterAPI: [
    fn('authenticate_twitter', 'Log in.', [
      ['username', 'string', ''],
      ['password', 'string', ''],
    ]),
    fn('post_tweet', 'Post a tweet.', [
      ['content', 'string', ''],
      ['tags', 'array', 'Hashtags like #x', false],
      ['mentions', 'array', 'Users like @x', false],
    ]),
    fn('retweet', 'Retweet a tweet.', [['tweet_id', 'integer', '']]),
    fn('comment', 'Comment on a tweet.', [
      ['tweet_id', 'integer', ''],
      ['comment_content', 'string', ''],
    ]),
    fn('follow_user', 'Follow a user.', [['username_to_follow', 'string', '']]),
    fn('get_tweet', 'Show a tweet.', [['tweet_id', 'integer', '']]),
  ],
  TicketAPI: [
    fn('ticket_login', 'Log in to the ticket system.', [
      ['username', 'string', ''],
      ['password', 'string', ''],
    ]),
    fn('create_ticket', 'Open a ticket.', [
      ['title', 'string', ''],
      ['description', 'string', '', false],
      ['priority', 'integer', '1 (low) to 5 (high)', false],
    ]),
    fn('get_ticket', 'Show a ticket.', [['ticket_id', 'integer', '']]),
    fn('close_ticket', 'Close a ticket.', [['ticket_id', 'integer', '']]),
    fn('resolve_ticket', 'Resolve a ticket.', [
      ['ticket_id', 'integer', ''],
      ['resolution', 'string', ''],
    ]),
    fn('edit_ticket', 'Change ticket fields.', [
      ['ticket_id', 'integer', ''],
      ['updates', 'dict', 'Fields: title, description, status, priority'],
    ]),
  ],
  TradingBot: [
    fn('get_symbol_by_name', 'Stock symbol of a company.', [['name', 'string', '']]),
    fn('get_stock_info', 'Price and stats of a stock.', [['symbol', 'string', '']]),
    fn('place_order', 'Place a stock order.', [
      ['order_type', 'string', 'Buy or Sell'],
      ['symbol', 'string', ''],
      ['price', 'float', ''],
      ['amount', 'integer', ''],
    ]),
    fn('cancel_order', 'Cancel an order.', [['order_id', 'integer', '']]),
    fn('add_to_watchlist', 'Watch a stock.', [['stock', 'string', '']]),
    fn('fund_account', 'Deposit money.', [['amount', 'float', '']]),
  ],
  TravelAPI: [
    fn('get_nearest_airport_by_city', 'Airport code of a city.', [['location', 'string', '']]),
    fn('get_flight_cost', 'Flight price.', [
      ['travel_from', 'string', 'Airport code'],
      ['travel_to', 'string', 'Airport code'],
      ['travel_date', 'string', 'YYYY-MM-DD'],
      ['travel_class', 'string', 'economy, business or first'],
    ]),
    fn('book_flight', 'Book a flight.', [
      ['access_token', 'string', ''],
      ['card_id', 'string', ''],
      ['travel_date', 'string', 'YYYY-MM-DD'],
      ['travel_from', 'string', 'Airport code'],
      ['travel_to', 'string', 'Airport code'],
      ['travel_class', 'string', 'economy, business or first'],
    ]),
    fn('cancel_booking', 'Cancel a booking.', [
      ['access_token', 'string', ''],
      ['booking_id', 'string', ''],
    ]),
    fn('get_credit_card_balance', 'Balance of a card.', [
      ['access_token', 'string', ''],
      ['card_id', 'string', ''],
    ]),
    fn('compute_exchange_rate', 'Convert money from USD or to USD.', [
      ['base_currency', 'string', ''],
      ['target_currency', 'string', ''],
      ['value', 'float', ''],
    ]),
  ],
  VehicleControlAPI: [
    fn('lockDoors', 'Lock or unlock doors.', [
      ['unlock', 'boolean', 'True to unlock'],
      ['door', 'array', 'driver, passenger, rear_left, rear_right'],
    ]),
    fn('pressBrakePedal', 'Press the brake.', [['pedalPosition', 'float', '0 to 1']]),
    fn('startEngine', 'Start the engine (doors locked, brake pressed).', [
      ['ignitionMode', 'string', 'START or STOP'],
    ]),
    fn('fillFuelTank', 'Add fuel (gallons, tank holds 50).', [['fuelAmount', 'float', '']]),
    fn('setHeadlights', 'Set headlights.', [['mode', 'string', 'on, off or auto']]),
    fn('adjustClimateControl', 'Set the cabin temperature.', [
      ['temperature', 'float', ''],
      ['unit', 'string', 'celsius or fahrenheit', false],
      ['fanSpeed', 'integer', '0 to 100', false],
      ['mode', 'string', 'auto, cool, heat or defrost', false],
    ]),
    fn('set_navigation', 'Set the destination.', [['destination', 'string', '']]),
  ],
};
