/**
 * MessageAPI (`message_api.py` in the reference): a workspace of users and one shared inbox.
 *
 * The inbox is a list of single-entry dicts `{receiver_id: text}` with no sender, so "sent"
 * views show every message. Message ids come from a CPython-exact `random.Random` seeded at
 * load, because ground truths quote them.
 *
 * Arguments arrive as arbitrary Python values, so every operation whose outcome depends on their
 * type goes through the `py/ops` helpers; a wrong type then fails with CPython's own text.
 */
import { AttributeError_, IndexError_, ValueError_ } from '../../py/errors.js';
import { str } from '../../py/format.js';
import {
  add,
  contains,
  dictValues,
  iterate,
  listFor,
  requireHashable,
  strFor,
  truthy,
} from '../../py/ops.js';
import { PyRandom, randomFromScenarioSeed } from '../../py/random.js';
import type { PyDict, PyKey, PyList, PyValue } from '../../py/values.js';
import { dictGet, dictOf, dictSet, findKey, PySet, pyEquals } from '../../py/values.js';
import type { ApiClass, BfclApi, BoundArgs, ScenarioContext } from './api.js';
import { req } from './api.js';

/** The seed `_load_scenario` uses when the scenario has no `random_seed` (no task sets one). */
const DEFAULT_RANDOM_SEED = 200191n;

/** `DEFAULT_STATE` of the reference, built fresh for every load (the reference deep-copies it). */
function defaultState(): PyDict {
  return dictOf({
    generated_ids: new PySet(),
    user_count: 4n,
    user_map: dictOf({ Alice: 'USR001', Bob: 'USR002', Catherine: 'USR003', Daniel: 'USR004' }),
    inbox: [
      dictOf({ USR002: 'My name is Alice. I want to connect.' }),
      dictOf({ USR003: 'Could you upload the file?' }),
      dictOf({ USR004: 'Could you upload the file?' }),
    ],
    message_count: 3n,
    current_user: null,
  });
}

const NOT_LOGGED_IN = 'No user is currently logged in.';

// ---------------------------------------------------------------------------------------------
// Small Python builtins the shared py module does not provide.

/** `list(message.items())[0]`: the (only) entry of an inbox message. */
function firstItem(message: PyValue): [PyKey, PyValue] {
  if (!(message instanceof Map)) throw AttributeError_(message, 'items');
  const first = message.entries().next();
  if (first.done) throw IndexError_('list index out of range');
  return first.value;
}

/** `str(n).zfill(width)`: pads with zeros after any sign. */
function zfill(s: string, width: number): string {
  const chars = [...s];
  if (chars.length >= width) return s;
  const signed = chars[0] === '+' || chars[0] === '-';
  const sign = signed ? chars[0]! : '';
  const rest = signed ? chars.slice(1).join('') : s;
  return sign + '0'.repeat(width - chars.length) + rest;
}

// ---------------------------------------------------------------------------------------------

export class MessageApiInstance implements BfclApi {
  readonly className = 'MessageAPI' as const;

  generated_ids: PyValue = new PySet();
  user_count: PyValue = 4n;
  user_map: PyValue = new Map();
  inbox: PyValue = [];
  message_count: PyValue = 3n;
  current_user: PyValue = null;

  /** `self._random`: private, per instance, seeded on load. */
  private random = new PyRandom(DEFAULT_RANDOM_SEED);

  loadScenario(config: PyDict, _ctx: ScenarioContext): void {
    const defaults = defaultState();
    const pick = (key: string): PyValue => (config.has(key) ? config.get(key)! : defaults.get(key)!);
    this.random = randomFromScenarioSeed(
      config.has('random_seed') ? config.get('random_seed')! : DEFAULT_RANDOM_SEED,
      'MessageAPI',
    );
    this.generated_ids = pick('generated_ids');
    this.user_count = pick('user_count');
    this.user_map = pick('user_map');
    this.inbox = pick('inbox');
    this.message_count = pick('message_count');
    this.current_user = pick('current_user');
  }

  publicState(): ReadonlyMap<string, PyValue> {
    return new Map<string, PyValue>([
      ['generated_ids', this.generated_ids],
      ['user_count', this.user_count],
      ['user_map', this.user_map],
      ['inbox', this.inbox],
      ['message_count', this.message_count],
      ['current_user', this.current_user],
    ]);
  }

  /** `_generate_id`: `randint(10000, 99999)`, redrawn while already used. */
  private generateId(): PyDict {
    let newId = this.random.randint(10000n, 99999n);
    while (contains(this.generated_ids, newId)) newId = this.random.randint(10000n, 99999n);
    if (!(this.generated_ids instanceof PySet)) throw AttributeError_(this.generated_ids, 'add');
    this.generated_ids.add(newId);
    return dictOf({ new_id: newId });
  }

  listUsers(): PyValue {
    return dictOf({ user_list: iterate(this.user_map).slice() });
  }

  getUserId(user: PyValue): PyValue {
    if (!contains(this.user_map, user)) {
      return dictOf({ error: `User '${str(user)}' not found in the workspace.` });
    }
    const map = this.user_map as PyDict;
    return dictOf({ user_id: dictGet(map, requireHashable(user)) ?? null });
  }

  messageLogin(userId: PyValue): PyValue {
    // Membership in a list of the ids: plain ==, so no hashing is needed.
    if (!dictValues(this.user_map).some((id) => pyEquals(id, userId))) {
      return dictOf({ login_status: false, message: `User ID '${str(userId)}' not found.` });
    }
    this.current_user = userId;
    return dictOf({ login_status: true, message: `User '${str(userId)}' logged in successfully.` });
  }

  messageGetLoginStatus(): PyValue {
    return dictOf({ login_status: truthy(this.current_user) });
  }

  sendMessage(receiverId: PyValue, message: PyValue): PyValue {
    if (!truthy(this.current_user)) return dictOf({ error: NOT_LOGGED_IN });
    if (!dictValues(this.user_map).some((id) => pyEquals(id, receiverId))) {
      return dictOf({ error: `Receiver ID '${str(receiverId)}' not found.` });
    }
    const messageId = this.generateId();
    listFor(this.inbox, 'append').push(new Map([[requireHashable(receiverId), message]]));
    this.message_count = add(this.message_count, 1n);
    return dictOf({
      sent_status: true,
      message_id: messageId,
      message: `Message sent to '${str(receiverId)}' successfully.`,
    });
  }

  deleteMessage(receiverId: PyValue): PyValue {
    if (!truthy(this.current_user)) return dictOf({ error: NOT_LOGGED_IN });
    const inbox = listFor(this.inbox, '__getitem__');
    for (const message of [...inbox].reverse()) {
      const [receiver] = firstItem(message);
      if (pyEquals(receiver, receiverId)) {
        // Quirk: `inbox.remove(message)` drops the *first* entry equal to the newest match, so
        // with duplicate messages an older copy goes and the newest stays.
        const i = inbox.findIndex((m) => pyEquals(m, message));
        if (i < 0) throw ValueError_('list.remove(x): x not in list');
        inbox.splice(i, 1);
        return dictOf({
          deleted_status: true,
          receiver_id: receiver,
          message: `Receiver ${str(receiverId)}'s latest message deleted successfully.`,
        });
      }
    }
    return dictOf({ error: `Receiver ID ${str(receiverId)} not found.` });
  }

  viewMessagesSent(): PyValue {
    if (!truthy(this.current_user)) return dictOf({ error: NOT_LOGGED_IN });
    // Groups every inbox entry by receiver; nothing is filtered by the current user.
    const sent: PyDict = new Map();
    for (const message of iterate(this.inbox)) {
      const [receiver, content] = firstItem(message);
      const found = findKey(sent, receiver);
      if (found === undefined) sent.set(receiver, [content]);
      else (sent.get(found.key) as PyList).push(content);
    }
    return dictOf({ messages: sent });
  }

  addContact(userName: PyValue): PyValue {
    if (contains(this.user_map, userName)) {
      return dictOf({ error: `User name '${str(userName)}' already exists.` });
    }
    // The counter moves before the collision check, so a failed add still bumps it.
    this.user_count = add(this.user_count, 1n);
    const userId = `USR${zfill(str(this.user_count), 3)}`;
    if (dictValues(this.user_map).some((id) => pyEquals(id, userId))) {
      return dictOf({ error: `User ID '${userId}' already exists.` });
    }
    dictSet(this.user_map as PyDict, requireHashable(userName), userId);
    return dictOf({
      added_status: true,
      user_id: userId,
      message: `Contact '${str(userName)}' added successfully.`,
    });
  }

  searchMessages(keyword: PyValue): PyValue {
    if (!truthy(this.current_user)) return dictOf({ error: NOT_LOGGED_IN });
    const needle = strFor(keyword, 'lower').toLowerCase();
    const results: PyList = [];
    for (const message of iterate(this.inbox)) {
      const [receiverId, content] = firstItem(message);
      // Data quirk (msg-021): many scenarios store inbox values as lists, and `.lower()` raises.
      if (strFor(content, 'lower').toLowerCase().includes(needle)) {
        results.push(dictOf({ receiver_id: receiverId, message: content }));
      }
    }
    return dictOf({ results });
  }

  getMessageStats(): PyValue {
    if (!truthy(this.current_user)) return dictOf({ error: NOT_LOGGED_IN });
    let received = 0n;
    const contacts: PyDict = new Map();
    for (const message of iterate(this.inbox)) {
      const [receiverId] = firstItem(message);
      received += 1n;
      dictSet(contacts, receiverId, null);
    }
    return dictOf({ stats: dictOf({ received_count: received, total_contacts: BigInt(contacts.size) }) });
  }
}

const a = (args: BoundArgs, i: number): PyValue => args[i] as PyValue;

export const messageApi: ApiClass<MessageApiInstance> = {
  className: 'MessageAPI',
  stateless: false,
  create: () => new MessageApiInstance(),
  methods: {
    list_users: { params: [], run: (self) => self.listUsers() },
    get_user_id: { params: [req('user')], run: (self, args) => self.getUserId(a(args, 0)) },
    message_login: {
      params: [req('user_id')],
      run: (self, args) => self.messageLogin(a(args, 0)),
    },
    message_get_login_status: { params: [], run: (self) => self.messageGetLoginStatus() },
    send_message: {
      params: [req('receiver_id'), req('message')],
      run: (self, args) => self.sendMessage(a(args, 0), a(args, 1)),
    },
    delete_message: {
      params: [req('receiver_id')],
      run: (self, args) => self.deleteMessage(a(args, 0)),
    },
    view_messages_sent: { params: [], run: (self) => self.viewMessagesSent() },
    add_contact: {
      params: [req('user_name')],
      run: (self, args) => self.addContact(a(args, 0)),
    },
    search_messages: {
      params: [req('keyword')],
      run: (self, args) => self.searchMessages(a(args, 0)),
    },
    get_message_stats: { params: [], run: (self) => self.getMessageStats() },
  },
};
