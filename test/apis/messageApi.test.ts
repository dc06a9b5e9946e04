import { describe, expect, it } from 'vitest';
import { type MessageApiInstance, messageApi } from '../../src/envs/bfcl/apis/messageApi.js';
import { repr } from '../../src/envs/py/format.js';
import { parsePyJson } from '../../src/envs/py/json.js';
import type { PyDict, PyValue } from '../../src/envs/py/values.js';
import { toStateJson } from '../../src/envs/py/values.js';
import { callMethod } from '../support/api.js';

function fresh(config = '{}'): MessageApiInstance {
  const api = messageApi.create();
  api.loadScenario(parsePyJson(config) as PyDict, { longContext: false, constants: undefined });
  return api;
}

function call(api: MessageApiInstance, name: string, ...args: (PyValue | undefined)[]): string {
  return callMethod(messageApi, api, name, ...args);
}

// Expected strings come from running the reference class (CPython 3.11).
describe('MessageAPI', () => {
  it('draws CPython-exact message ids from the default seed and records them', () => {
    const api = fresh();
    call(api, 'message_login', 'USR001');
    const ids = ['a', 'b', 'a'].map((text, i) =>
      call(api, 'send_message', i === 1 ? 'USR003' : 'USR002', text),
    );
    expect(ids[0]).toBe(
      '{"sent_status": true, "message_id": {"new_id": 67410}, "message": "Message sent to \'USR002\' successfully."}',
    );
    expect(ids[1]).toContain('{"new_id": 41772}');
    expect(ids[2]).toContain('{"new_id": 24547}');
    expect(toStateJson(api.generated_ids)).toEqual([24547, 41772, 67410]);
    expect(api.message_count).toBe(6n);
    expect(call(api, 'send_message', 'USR009', 'x')).toBe('{"error": "Receiver ID \'USR009\' not found."}');
  });

  it('uses random_seed from the scenario', () => {
    const api = fresh('{"random_seed": 7, "current_user": "USR001"}');
    expect(call(api, 'send_message', 'USR002', 'x')).toContain('{"new_id": 52445}');
    expect(call(api, 'send_message', 'USR002', 'y')).toContain('{"new_id": 29772}');
  });

  it('delete_message removes the first inbox entry equal to the newest match', () => {
    const api = fresh(
      '{"current_user": "USR001", "inbox": [{"USR002": "a"}, {"USR003": "b"}, {"USR002": "a"}, {"USR002": "c"}]}',
    );
    expect(call(api, 'delete_message', 'USR002')).toBe(
      '{"deleted_status": true, "receiver_id": "USR002", "message": "Receiver USR002\'s latest message deleted successfully."}',
    );
    expect(repr(api.inbox)).toBe("[{'USR002': 'a'}, {'USR003': 'b'}, {'USR002': 'a'}]");
    // Quirk: the newest match is {'USR002': 'a'} at index 2, but list.remove drops index 0.
    call(api, 'delete_message', 'USR002');
    expect(repr(api.inbox)).toBe("[{'USR003': 'b'}, {'USR002': 'a'}]");
  });

  it('views and stats cover the whole inbox, not just the current user', () => {
    const api = fresh();
    expect(call(api, 'view_messages_sent')).toBe('{"error": "No user is currently logged in."}');
    call(api, 'message_login', 'USR003');
    expect(call(api, 'view_messages_sent')).toBe(
      '{"messages": {"USR002": ["My name is Alice. I want to connect."], "USR003": ["Could you upload the file?"], "USR004": ["Could you upload the file?"]}}',
    );
    expect(call(api, 'get_message_stats')).toBe('{"stats": {"received_count": 3, "total_contacts": 3}}');
  });

  it('add_contact bumps user_count before the id collision check', () => {
    const api = fresh('{"user_map": {"A": "USR005"}, "user_count": 4}');
    expect(call(api, 'add_contact', 'B')).toBe('{"error": "User ID \'USR005\' already exists."}');
    expect(api.user_count).toBe(5n);
    expect(call(fresh(), 'add_contact', 'Alice')).toBe('{"error": "User name \'Alice\' already exists."}');
    expect(call(fresh(), 'add_contact', 'Eve')).toBe(
      '{"added_status": true, "user_id": "USR005", "message": "Contact \'Eve\' added successfully."}',
    );
  });

  it('fails on odd argument types with CPython texts', () => {
    const api = fresh('{"current_user": "USR001"}');
    expect(call(api, 'add_contact', ['x'])).toBe("Error during execution: unhashable type: 'list'");
    expect(call(api, 'get_user_id', ['x'])).toBe("Error during execution: unhashable type: 'list'");
    expect(call(api, 'search_messages', 5n)).toBe(
      "Error during execution: 'int' object has no attribute 'lower'",
    );
    expect(call(api, 'message_login', ['x'])).toBe(
      '{"login_status": false, "message": "User ID \'[\'x\']\' not found."}',
    );
    // Data quirk (msg-021): list-valued inbox entries make search raise.
    expect(
      call(fresh('{"current_user": "USR001", "inbox": [{"USR002": ["hi"]}]}'), 'search_messages', 'hi'),
    ).toBe("Error during execution: 'list' object has no attribute 'lower'");
  });
});
