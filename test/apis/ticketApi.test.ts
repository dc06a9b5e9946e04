import { describe, expect, it } from 'vitest';
import { type TicketApiInstance, ticketApi } from '../../src/envs/bfcl/apis/ticketApi.js';
import { repr } from '../../src/envs/py/format.js';
import { parsePyJson } from '../../src/envs/py/json.js';
import type { PyDict, PyKey, PyValue } from '../../src/envs/py/values.js';
import { callMethod } from '../support/api.js';

const CONFIG =
  '{"ticket_queue": [{"id": 1, "status": "Open", "created_by": "u"}, {"ticket_001": {"id": 2}}]}';

function fresh(config = CONFIG): TicketApiInstance {
  const api = ticketApi.create();
  api.loadScenario(parsePyJson(config) as PyDict, { longContext: false, constants: undefined });
  return api;
}

function call(api: TicketApiInstance, name: string, ...args: (PyValue | undefined)[]): string {
  return callMethod(ticketApi, api, name, ...args);
}

const updates = (entries: [PyKey, PyValue][]): PyDict => new Map(entries);

// Expected strings come from running the reference class (CPython 3.11, PYTHONHASHSEED=0).
describe('TicketAPI', () => {
  it('lists several invalid edit fields in CPython set order under hash seed 0', () => {
    const api = fresh();
    expect(
      call(
        api,
        'edit_ticket',
        1n,
        updates([
          ['owner', 'me'],
          ['assignee', 'x'],
          ['due', 3n],
          ['title', 'y'],
        ]),
      ),
    ).toBe('{"error": "Invalid fields for update: due, assignee, owner"}');
    const six = updates(['a', 'b', 'c', 'd', 'e', 'f'].map((k, i) => [k, BigInt(i)]));
    expect(call(api, 'edit_ticket', 1n, six)).toBe(
      '{"error": "Invalid fields for update: d, f, b, c, a, e"}',
    );
    // 20+ keys take CPython's copy-and-discard path
    const many = updates(Array.from({ length: 25 }, (_, i) => [`w${i}`, 1n] as [PyKey, PyValue]));
    expect(call(api, 'edit_ticket', 1n, many)).toBe(
      '{"error": "Invalid fields for update: w4, w1, w17, w21, w16, w11, w15, w3, w24, w0, w13, w14, w6, w7, w23, w8, w22, w9, w12, w18, w19, w2, w5, w10, w20"}',
    );
    expect(
      call(
        api,
        'edit_ticket',
        1n,
        updates([
          [5n, 1n],
          ['zz', 2n],
        ]),
      ),
    ).toBe('Error during execution: sequence item 1: expected str instance, int found');
    expect(call(api, 'edit_ticket', 1n, ['title'])).toBe(
      "Error during execution: 'list' object has no attribute 'keys'",
    );
  });

  it('edit_ticket skips None values and checks nothing else', () => {
    const api = fresh();
    expect(
      call(
        api,
        'edit_ticket',
        1n,
        updates([
          ['title', null],
          ['priority', 'high'],
        ]),
      ),
    ).toBe('{"status": "Ticket 1 has been updated successfully."}');
    expect(repr(api.ticket_queue)).toBe(
      "[{'id': 1, 'status': 'Open', 'created_by': 'u', 'priority': 'high'}, {'ticket_001': {'id': 2}}]",
    );
  });

  it('malformed scenario tickets raise KeyError', () => {
    const api = fresh();
    expect(call(api, 'get_ticket', 2n)).toBe("Error during execution: 'id'");
    // the str '1' does not equal the id 1, so the scan reaches the malformed ticket too
    expect(call(api, 'get_ticket', '1')).toBe("Error during execution: 'id'");
    expect(call(fresh('{"ticket_queue": [{"id": 1}]}'), 'get_ticket', '1')).toBe(
      '{"error": "Ticket with ID 1 not found."}',
    );
  });

  it('creates, resolves and closes tickets like the reference', () => {
    const api = fresh();
    expect(call(api, 'create_ticket', 't')).toBe(
      '{"error": "User not authenticated. Please log in to create a ticket."}',
    );
    expect(call(api, 'ticket_login', 'u', 'p')).toBe('{"success": true}');
    expect(call(api, 'create_ticket', 't', undefined, '2')).toBe(
      "Error during execution: '<' not supported between instances of 'str' and 'int'",
    );
    expect(call(api, 'create_ticket', 't', null, 5n)).toBe(
      '{"id": 1, "title": "t", "description": null, "status": "Open", "priority": 5, "created_by": "u"}',
    );
    expect(api.ticket_counter).toBe(2n);
    expect(call(api, 'resolve_ticket', 1n, 'done')).toBe(
      '{"status": "Ticket 1 has been resolved successfully."}',
    );
    expect(call(api, 'resolve_ticket', 1n, 'again')).toBe(
      '{"error": "Ticket with ID 1 is already resolved."}',
    );
    expect(call(api, 'close_ticket', 1n)).toBe('{"status": "Ticket 1 has been closed successfully."}');
    expect(call(api, 'get_user_tickets')).toBe("Error during execution: 'created_by'");
  });

  it('get_user_tickets returns a list (Python repr) and filters status case-insensitively', () => {
    const api = fresh('{"current_user": "John"}');
    expect(call(fresh('{}'), 'get_user_tickets')).toBe(
      "[{'error': 'User not authenticated. Please log in to view tickets.'}]",
    );
    call(api, 'create_ticket', 'x');
    expect(call(api, 'get_user_tickets', 'OPEN')).toBe(
      "[{'id': 1, 'title': 'x', 'description': '', 'status': 'Open', 'priority': 1, 'created_by': 'John'}]",
    );
    expect(call(api, 'get_user_tickets', 'closed')).toBe('[]');
    expect(call(api, 'logout')).toBe('{"success": true}');
    expect(call(api, 'logout')).toBe('{"success": false}');
  });
});
