/**
 * Retail's write tools on real orders of the v0.2.0 database, with the texts the reference's
 * tools.py gives (values worked out from db.json by hand).
 */
import { describe, expect, it } from 'vitest';
import { loadRetailDomain } from '../../../src/envs/tau2/domains/retail/index.js';
import { NO_TOOL_DOCS } from '../../../src/envs/tau2/tool-docs.js';
import type { Tau2Domain } from '../../../src/envs/tau2/types.js';
import { callTool, HAS_TAU2, noteMissingTau2, TAU2_ROOT } from '../../support/tau2-data.js';

noteMissingTau2('tau2 retail tools');
let domain: Tau2Domain | undefined;
const env = () => {
  domain ??= loadRetailDomain(TAU2_ROOT, NO_TOOL_DOCS);
  return domain.makeEnvironment();
};
const OPTIONAL_NONE =
  '"cancel_reason": null, "exchange_items": null, "exchange_new_items": null, "exchange_payment_method_id": null, ' +
  '"exchange_price_difference": null, "return_items": null, "return_payment_method_id": null}';

describe.skipIf(!HAS_TAU2)('tau2 retail tools', () => {
  it('lists the 15 tools in the reference order, described by name without docs', () => {
    const tools = env().agentTools();
    expect(tools.map((t) => t.function.name)).toEqual([
      'calculate',
      'cancel_pending_order',
      'exchange_delivered_order_items',
      'find_user_id_by_name_zip',
      'find_user_id_by_email',
      'get_order_details',
      'get_product_details',
      'get_user_details',
      'list_all_product_types',
      'modify_pending_order_address',
      'modify_pending_order_items',
      'modify_pending_order_payment',
      'modify_user_address',
      'return_delivered_order_items',
      'transfer_to_human_agents',
    ]);
    expect(tools[2]!.function).toEqual({
      name: 'exchange_delivered_order_items',
      description: 'exchange_delivered_order_items',
      parameters: {
        properties: {
          order_id: { title: 'Order Id', type: 'string' },
          item_ids: { items: { type: 'string' }, title: 'Item Ids', type: 'array' },
          new_item_ids: { items: { type: 'string' }, title: 'New Item Ids', type: 'array' },
          payment_method_id: { title: 'Payment Method Id', type: 'string' },
        },
        required: ['order_id', 'item_ids', 'new_item_ids', 'payment_method_id'],
        title: 'parameters',
        type: 'object',
      },
    });
  });

  it('modifies a pending order: refund to the gift card, every item given the last new variant', () => {
    const e = env();
    const r = callTool(
      e,
      'modify_pending_order_items',
      '{"order_id": "#W8955613", "item_ids": ["2554056026", "6309044598"], "new_item_ids": ["2860956907", "3928046918"], "payment_method_id": "gift_card_6682391"}',
    );
    const backpack = '{"color": "black", "size": "large", "material": "nylon", "compartment": "camera"}';
    expect(r).toEqual({
      error: false,
      content:
        '{"order_id": "#W8955613", "user_id": "olivia_lopez_9494", "address": {"address1": "200 Elm Street", "address2": "Suite 805", "city": "Houston", "country": "USA", "state": "TX", "zip": "77277"}, ' +
        `"items": [{"name": "Smart Watch", "product_id": "6945232052", "item_id": "2860956907", "price": 198.0, "options": ${backpack}}, ` +
        `{"name": "Backpack", "product_id": "2524789262", "item_id": "3928046918", "price": 198.0, "options": ${backpack}}], ` +
        '"status": "pending (item modified)", "fulfillments": [], "payment_history": [{"transaction_type": "payment", "amount": 585.97, "payment_method_id": "gift_card_6682391"}, ' +
        '{"transaction_type": "refund", "amount": 72.35999999999999, "payment_method_id": "gift_card_6682391"}], ' +
        OPTIONAL_NONE,
    });
    expect(callTool(e, 'get_user_details', '{"user_id": "olivia_lopez_9494"}').content).toContain(
      '"gift_card_6682391": {"source": "gift_card", "id": "gift_card_6682391", "balance": 107.36}',
    );
    expect(
      callTool(
        e,
        'modify_pending_order_items',
        '{"order_id": "#W8955613", "item_ids": [], "new_item_ids": [], "payment_method_id": "x"}',
      ).content,
    ).toBe('Error: Non-pending order cannot be modified');
  });

  it('checks a modification before changing anything', () => {
    const e = env();
    const before = e.dbText('assistant');
    const call = (args: string) =>
      callTool(e, 'modify_pending_order_items', `{"order_id": "#W8955613", ${args}}`).content;
    expect(
      call(
        '"item_ids": ["2554056026"], "new_item_ids": ["2554056026"], "payment_method_id": "gift_card_6682391"',
      ),
    ).toBe('Error: The new item id should be different from the old item id');
    expect(call('"item_ids": ["1"], "new_item_ids": ["2"], "payment_method_id": "gift_card_6682391"')).toBe(
      'Error: 1 not found',
    );
    expect(
      call('"item_ids": ["2554056026"], "new_item_ids": [], "payment_method_id": "gift_card_6682391"'),
    ).toBe('Error: The number of items to be exchanged should match');
    expect(
      call('"item_ids": ["2554056026"], "new_item_ids": ["9"], "payment_method_id": "gift_card_6682391"'),
    ).toBe('Error: Variant not found');
    expect(call('"item_ids": "2554056026", "new_item_ids": ["9"], "payment_method_id": "p"')).toBe(
      'Error: 2 not found',
    );
    expect(call('"item_ids": [["x"]], "new_item_ids": [1], "payment_method_id": "p"')).toBe(
      "Error: ['x'] not found",
    );
    expect(e.dbText('assistant')).toBe(before);
  });

  it('cancels a pending order paid by gift card, refunding the card at once', () => {
    const e = env();
    expect(
      callTool(e, 'cancel_pending_order', '{"order_id": "#W6779827", "reason": "changed my mind"}').content,
    ).toBe('Error: Invalid reason');
    const r = callTool(e, 'cancel_pending_order', '{"order_id": "#W6779827", "reason": "no longer needed"}');
    expect(r.content).toContain(
      '"status": "cancelled", "fulfillments": [], "payment_history": [{"transaction_type": "payment", "amount": 4079.45, "payment_method_id": "gift_card_7219486"}, ' +
        '{"transaction_type": "refund", "amount": 4079.45, "payment_method_id": "gift_card_7219486"}], "cancel_reason": "no longer needed", "exchange_items": null',
    );
    expect(callTool(e, 'get_user_details', '{"user_id": "ethan_lopez_6291"}').content).toContain(
      '{"source": "gift_card", "id": "gift_card_7219486", "balance": 4128.45}',
    );
    expect(
      callTool(e, 'cancel_pending_order', '{"order_id": "#W6779827", "reason": "no longer needed"}').content,
    ).toBe('Error: Non-pending order cannot be cancelled');
  });

  it('exchanges and returns items of a delivered order once', () => {
    const e = env();
    const order = '"order_id": "#W6304490"';
    expect(
      callTool(
        e,
        'exchange_delivered_order_items',
        `{${order}, "item_ids": ["6956751343", "6956751343"], "new_item_ids": ["6843647669", "6843647669"], "payment_method_id": "credit_card_4420174"}`,
      ).content,
    ).toBe('Error: Number of 6956751343 not found.');
    expect(
      callTool(
        e,
        'exchange_delivered_order_items',
        `{${order}, "item_ids": ["6956751343"], "new_item_ids": [], "payment_method_id": "credit_card_4420174"}`,
      ).content,
    ).toBe('Error: The number of items to be exchanged should match.');
    expect(
      callTool(
        e,
        'return_delivered_order_items',
        `{${order}, "item_ids": ["9375701158"], "payment_method_id": "paypal_1"}`,
      ).content,
    ).toBe('Error: Payment method not found');
    const ex = callTool(
      e,
      'exchange_delivered_order_items',
      `{${order}, "item_ids": ["6956751343"], "new_item_ids": ["6843647669"], "payment_method_id": "credit_card_4420174"}`,
    );
    expect(ex.error).toBe(false);
    expect(ex.content).toMatch(
      /"status": "exchange requested", .*"cancel_reason": null, "exchange_items": \["6956751343"\], "exchange_new_items": \["6843647669"\], "exchange_payment_method_id": "credit_card_4420174", "exchange_price_difference": -36.96, "return_items": null, "return_payment_method_id": null}$/,
    );
    expect(
      callTool(
        e,
        'return_delivered_order_items',
        `{${order}, "item_ids": ["9375701158"], "payment_method_id": "credit_card_4420174"}`,
      ).content,
    ).toBe('Error: Non-delivered order cannot be returned');

    const f = env();
    const ret = callTool(
      f,
      'return_delivered_order_items',
      `{${order}, "item_ids": ["9375701158", "5753502325"], "payment_method_id": "credit_card_4420174"}`,
    );
    expect(ret.content).toMatch(
      /"status": "return requested", .*"return_items": \["5753502325", "9375701158"\], "return_payment_method_id": "credit_card_4420174"}$/,
    );
  });

  it('validates a new address as pydantic does and answers the read tools', () => {
    const e = env();
    expect(
      callTool(
        e,
        'modify_user_address',
        '{"user_id": "olivia_lopez_9494", "address1": "1 A St", "address2": "", "city": "X", "state": "TX", "country": "USA", "zip": 77277}',
      ).content,
    ).toBe(
      [
        'Error: 1 validation error for UserAddress',
        'zip',
        '  Input should be a valid string [type=string_type, input_value=77277, input_type=int]',
        '    For further information visit https://errors.pydantic.dev/2.11/v/string_type',
      ].join('\n'),
    );
    expect(
      callTool(
        e,
        'find_user_id_by_name_zip',
        '{"first_name": "OLIVIA", "last_name": "lopez", "zip": "92107"}',
      ).content,
    ).toBe('olivia_lopez_9494');
    expect(callTool(e, 'find_user_id_by_email', '{"email": 5}').content).toBe(
      "Error: 'int' object has no attribute 'lower'",
    );
    expect(callTool(e, 'get_order_details', '{"order_id": ["#W8955613"]}').content).toBe(
      "Error: unhashable type: 'list'",
    );
    expect(callTool(e, 'list_all_product_types', '{}').content).toMatch(
      /^\{"Action Camera": "\d+", "Air Purifier": "\d+", /,
    );
    expect(callTool(e, 'calculate', '{"expression": "585.97 - 72.36"}').content).toBe('513.61');
    expect(callTool(e, 'transfer_to_human_agents', '{"summary": "s"}').content).toBe('Transfer successful');
    expect(callTool(e, 'get_order_details', '{}').content).toBe(
      "Error: RetailTools.get_order_details() missing 1 required positional argument: 'order_id'",
    );
    expect(callTool(e, 'get_order_details', '{"order_id": "#W8955613", "user_id": "x"}').content).toBe(
      "Error: RetailTools.get_order_details() got an unexpected keyword argument 'user_id'",
    );
    expect(callTool(e, 'think', '{"thought": "x"}').content).toBe("Error: Tool 'think' not found.");
  });
});
