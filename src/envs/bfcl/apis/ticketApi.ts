/**
 * TicketAPI (`ticket_api.py` in the reference): a support-ticket queue with a trivial login.
 *
 * Arguments arrive as arbitrary Python values, so every operation whose outcome depends on their
 * type goes through the `py/ops` helpers; a wrong type then fails with CPython's own text.
 *
 * The one non-obvious piece is `edit_ticket`'s error for several unknown fields: the reference
 * joins a Python *set*, so the order of the names is CPython's set iteration order, which
 * depends on string hashes and therefore on PYTHONHASHSEED. The golden files were produced with
 * hash seed 0, and this port reproduces that order exactly (SipHash-1-3 with a zero key plus
 * CPython 3.11's open-addressing set table), see `pySetDifferenceOrder` below.
 */
import { AttributeError_ } from '../../py/errors.js';
import { str } from '../../py/format.js';
import { add, getItem, gt, iterate, listFor, lt, setItem, strFor, truthy } from '../../py/ops.js';
import { joinStrings } from '../../py/text.js';
import type { PyDict, PyKey, PyValue } from '../../py/values.js';
import { dictOf, pyEquals } from '../../py/values.js';
import type { ApiClass, BfclApi, BoundArgs, ScenarioContext } from './api.js';
import { opt, req } from './api.js';

/** `DEFAULT_STATE` of the reference, built fresh for every load (the reference deep-copies it). */
function defaultState(): PyDict {
  return dictOf({ ticket_queue: [], ticket_counter: 1n, current_user: null });
}

/** The fields `edit_ticket` accepts, in the order the reference's set literal lists them. */
const VALID_FIELDS = ['title', 'description', 'status', 'priority'] as const;

// ---------------------------------------------------------------------------------------------
// Small Python builtins the shared py module does not provide.

// ---------------------------------------------------------------------------------------------
// CPython 3.11 hashing with PYTHONHASHSEED=0 (the golden files' setting).

const MASK64 = (1n << 64n) - 1n;
const HASH_MODULUS = (1n << 61n) - 1n;

function rotl64(x: bigint, b: bigint): bigint {
  return ((x << b) | (x >> (64n - b))) & MASK64;
}

/** SipHash-1-3 as in CPython's Python/pyhash.c (one compression, three finalisation rounds). */
function siphash13(k0: bigint, k1: bigint, data: Uint8Array): bigint {
  let v0 = k0 ^ 0x736f6d6570736575n;
  let v1 = k1 ^ 0x646f72616e646f6dn;
  let v2 = k0 ^ 0x6c7967656e657261n;
  let v3 = k1 ^ 0x7465646279746573n;
  const round = () => {
    v0 = (v0 + v1) & MASK64;
    v2 = (v2 + v3) & MASK64;
    v1 = rotl64(v1, 13n) ^ v0;
    v3 = rotl64(v3, 16n) ^ v2;
    v0 = rotl64(v0, 32n);
    v2 = (v2 + v1) & MASK64;
    v0 = (v0 + v3) & MASK64;
    v1 = rotl64(v1, 17n) ^ v2;
    v3 = rotl64(v3, 21n) ^ v0;
    v2 = rotl64(v2, 32n);
  };
  const readLe = (from: number, count: number): bigint => {
    let word = 0n;
    for (let i = count - 1; i >= 0; i--) word = (word << 8n) | BigInt(data[from + i]!);
    return word;
  };
  const full = data.length - (data.length % 8);
  for (let off = 0; off < full; off += 8) {
    const m = readLe(off, 8);
    v3 ^= m;
    round();
    v0 ^= m;
  }
  const b = ((BigInt(data.length) << 56n) | readLe(full, data.length - full)) & MASK64;
  v3 ^= b;
  round();
  v0 ^= b;
  v2 ^= 0xffn;
  round();
  round();
  round();
  return v0 ^ v1 ^ v2 ^ v3;
}

/** Signed 64-bit view of a hash, with CPython's rule that -1 is never a hash value. */
function toPyHash(u: bigint): bigint {
  const signed = BigInt.asIntN(64, u);
  return signed === -1n ? -2n : signed;
}

/**
 * `hash(str)`: SipHash over the string's compact storage (1, 2 or 4 bytes per code point,
 * little-endian, chosen by the widest code point), key all zeros under PYTHONHASHSEED=0.
 */
function strHash(s: string): bigint {
  const cps = [...s].map((c) => c.codePointAt(0)!);
  if (cps.length === 0) return 0n;
  const max = Math.max(...cps);
  const kind = max < 0x100 ? 1 : max < 0x10000 ? 2 : 4;
  const bytes = new Uint8Array(cps.length * kind);
  cps.forEach((cp, i) => {
    for (let k = 0; k < kind; k++) bytes[i * kind + k] = (cp >>> (8 * k)) & 0xff;
  });
  return toPyHash(siphash13(0n, 0n, bytes));
}

/** Numeric hash of m * 2**e (ints, bools and floats share it): reduced modulo 2**61 - 1. */
function rationalHash(negative: boolean, man: bigint, exp: number): bigint {
  // 2**61 = 1 (mod P), so 2**e = 2**(e mod 61) for negative e too.
  const e = ((exp % 61) + 61) % 61;
  let h = (man % HASH_MODULUS) * (1n << BigInt(e));
  h %= HASH_MODULUS;
  if (negative) h = -h;
  return h === -1n ? -2n : h;
}

function floatHash(x: number): bigint {
  if (Number.isNaN(x)) return 0n; // really id-based in 3.11: not reproducible
  if (!Number.isFinite(x)) return x > 0 ? 314159n : -314159n;
  if (Number.isInteger(x)) return intHash(BigInt(x));
  let m = Math.abs(x);
  let e = 0;
  while (!Number.isInteger(m)) {
    m *= 2;
    e--;
  }
  return rationalHash(x < 0, BigInt(m), e);
}

function intHash(v: bigint): bigint {
  return rationalHash(v < 0n, v < 0n ? -v : v, 0);
}

/** `hash(key)` for the key types a parsed dict literal can hold. */
function pyHash(key: PyKey): bigint {
  if (typeof key === 'string') return strHash(key);
  if (typeof key === 'bigint') return intHash(key);
  if (typeof key === 'boolean') return key ? 1n : 0n;
  if (typeof key === 'number') return floatHash(key);
  if (key === null) return 0n; // id-based in 3.11: not reproducible
  // Tuples: CPython's xxHash-style combination of the item hashes.
  const p1 = 11400714785074694791n;
  const p2 = 14029467366897019727n;
  const p5 = 2870177450012600261n;
  let acc = p5;
  for (const item of key.items) {
    const lane = BigInt.asUintN(64, pyHash(item as PyKey));
    acc = (acc + lane * p2) & MASK64;
    acc = rotl64(acc, 31n);
    acc = (acc * p1) & MASK64;
  }
  acc = (acc + (BigInt(key.items.length) ^ (p5 ^ 3527539n))) & MASK64;
  return acc === MASK64 ? 1546275796n : BigInt.asIntN(64, acc);
}

// ---------------------------------------------------------------------------------------------
// CPython 3.11 set table (Objects/setobject.c): only what `set(keys) - other` needs.

const PERTURB_SHIFT = 5n;
const LINEAR_PROBES = 9;
const SET_MINSIZE = 8;

interface SetEntry {
  key: PyKey;
  hash: bigint;
  dummy: boolean;
}

class CSet {
  table: (SetEntry | undefined)[] = new Array(SET_MINSIZE).fill(undefined);
  fill = 0;
  used = 0;

  get mask(): number {
    return this.table.length - 1;
  }

  /** The probe sequence: linear runs of up to 9 slots, then a perturbed jump. */
  private *probe(hash: bigint, mask: number): Generator<number> {
    let perturb = BigInt.asUintN(64, hash);
    let i = Number(perturb & BigInt(mask));
    for (;;) {
      const probes = i + LINEAR_PROBES <= mask ? LINEAR_PROBES : 0;
      for (let j = 0; j <= probes; j++) yield i + j;
      perturb >>= PERTURB_SHIFT;
      i = Number((BigInt(i) * 5n + 1n + perturb) & BigInt(mask));
    }
  }

  has(key: PyKey, hash: bigint): boolean {
    for (const i of this.probe(hash, this.mask)) {
      const e = this.table[i];
      if (e === undefined) return false;
      if (!e.dummy && e.hash === hash && pyEquals(e.key, key)) return true;
    }
    return false;
  }

  add(key: PyKey, hash: bigint): void {
    let freeslot: number | undefined;
    for (const i of this.probe(hash, this.mask)) {
      const e = this.table[i];
      if (e === undefined) {
        if (freeslot !== undefined) {
          this.table[freeslot] = { key, hash, dummy: false };
          this.used++;
          return;
        }
        this.table[i] = { key, hash, dummy: false };
        this.fill++;
        this.used++;
        if (this.fill * 5 >= this.mask * 3) this.resize(this.used > 50000 ? this.used * 2 : this.used * 4);
        return;
      }
      if (e.dummy) {
        freeslot ??= i;
      } else if (e.hash === hash && pyEquals(e.key, key)) {
        return;
      }
    }
  }

  discard(key: PyKey, hash: bigint): void {
    for (const i of this.probe(hash, this.mask)) {
      const e = this.table[i];
      if (e === undefined) return;
      if (!e.dummy && e.hash === hash && pyEquals(e.key, key)) {
        e.dummy = true;
        this.used--;
        return;
      }
    }
  }

  private insertClean(table: (SetEntry | undefined)[], key: PyKey, hash: bigint): void {
    for (const i of this.probe(hash, table.length - 1)) {
      if (table[i] === undefined) {
        table[i] = { key, hash, dummy: false };
        return;
      }
    }
  }

  resize(minused: number): void {
    let size = SET_MINSIZE;
    while (size <= minused) size *= 2;
    const old = this.table;
    this.table = new Array(size).fill(undefined);
    for (const e of old) if (e !== undefined && !e.dummy) this.insertClean(this.table, e.key, e.hash);
    this.fill = this.used;
  }

  /** `set(other_set)`: CPython's set_merge into an empty set. */
  static copyOf(other: CSet): CSet {
    const s = new CSet();
    if (other.used * 5 >= s.mask * 3) s.resize(other.used * 2);
    if (s.mask === other.mask && other.fill === other.used) {
      s.table = other.table.map((e) => (e === undefined ? undefined : { ...e }));
    } else {
      for (const e of other.table) if (e !== undefined && !e.dummy) s.insertClean(s.table, e.key, e.hash);
    }
    s.fill = other.used;
    s.used = other.used;
    return s;
  }

  *entries(): Generator<SetEntry> {
    for (const e of this.table) if (e !== undefined && !e.dummy) yield e;
  }
}

/**
 * The iteration order of `set(keys) - {'title', 'description', 'status', 'priority'}` in
 * CPython 3.11 under PYTHONHASHSEED=0.
 */
function pySetDifferenceOrder(keys: readonly PyKey[]): PyKey[] {
  const valid = new CSet();
  for (const f of VALID_FIELDS) valid.add(f, pyHash(f));
  const left = new CSet();
  for (const k of keys) left.add(k, pyHash(k));
  let result: CSet;
  if (left.used >> 2 > valid.used) {
    // set_copy_and_difference: copy the big set, then discard the small one's members.
    result = CSet.copyOf(left);
    for (const e of valid.entries()) result.discard(e.key, e.hash);
  } else {
    result = new CSet();
    for (const e of left.entries()) if (!valid.has(e.key, e.hash)) result.add(e.key, e.hash);
  }
  return [...result.entries()].map((e) => e.key);
}

// ---------------------------------------------------------------------------------------------

export class TicketApiInstance implements BfclApi {
  readonly className = 'TicketAPI' as const;

  ticket_queue: PyValue = [];
  ticket_counter: PyValue = 1n;
  current_user: PyValue = null;

  loadScenario(config: PyDict, _ctx: ScenarioContext): void {
    const defaults = defaultState();
    const pick = (key: string): PyValue => (config.has(key) ? config.get(key)! : defaults.get(key)!);
    this.ticket_queue = pick('ticket_queue');
    this.ticket_counter = pick('ticket_counter');
    this.current_user = pick('current_user');
  }

  publicState(): ReadonlyMap<string, PyValue> {
    return new Map<string, PyValue>([
      ['ticket_queue', this.ticket_queue],
      ['ticket_counter', this.ticket_counter],
      ['current_user', this.current_user],
    ]);
  }

  /** `_find_ticket`: first ticket whose `id` equals (==) the argument; a ticket without `id` raises. */
  private findTicket(ticketId: PyValue): PyValue {
    for (const ticket of iterate(this.ticket_queue)) {
      if (pyEquals(getItem(ticket, 'id'), ticketId)) return ticket;
    }
    return null;
  }

  createTicket(title: PyValue, description: PyValue, priority: PyValue): PyValue {
    if (!truthy(this.current_user)) {
      return dictOf({ error: 'User not authenticated. Please log in to create a ticket.' });
    }
    // Python ordering: a str priority raises TypeError here (not caught).
    if (lt(priority, 1n) || gt(priority, 5n)) {
      return dictOf({ error: 'Invalid priority. Priority must be between 1 and 5.' });
    }
    const ticket = dictOf({
      id: this.ticket_counter,
      title,
      description,
      status: 'Open',
      priority,
      created_by: this.current_user,
    });
    listFor(this.ticket_queue, 'append').push(ticket);
    this.ticket_counter = add(this.ticket_counter, 1n);
    return ticket;
  }

  getTicket(ticketId: PyValue): PyValue {
    const ticket = this.findTicket(ticketId);
    if (!truthy(ticket)) return notFound(ticketId);
    return ticket;
  }

  closeTicket(ticketId: PyValue): PyValue {
    const ticket = this.findTicket(ticketId);
    if (!truthy(ticket)) return notFound(ticketId);
    if (pyEquals(getItem(ticket, 'status'), 'Closed')) {
      return dictOf({ error: `Ticket with ID ${str(ticketId)} is already closed.` });
    }
    setItem(ticket, 'status', 'Closed');
    return dictOf({ status: `Ticket ${str(ticketId)} has been closed successfully.` });
  }

  resolveTicket(ticketId: PyValue, resolution: PyValue): PyValue {
    const ticket = this.findTicket(ticketId);
    if (!truthy(ticket)) return notFound(ticketId);
    if (pyEquals(getItem(ticket, 'status'), 'Resolved')) {
      return dictOf({ error: `Ticket with ID ${str(ticketId)} is already resolved.` });
    }
    setItem(ticket, 'status', 'Resolved');
    setItem(ticket, 'resolution', resolution);
    return dictOf({ status: `Ticket ${str(ticketId)} has been resolved successfully.` });
  }

  editTicket(ticketId: PyValue, updates: PyValue): PyValue {
    const ticket = this.findTicket(ticketId);
    if (!truthy(ticket)) return notFound(ticketId);
    if (!(updates instanceof Map)) throw AttributeError_(updates, 'keys');
    const invalid = pySetDifferenceOrder([...updates.keys()]);
    if (invalid.length > 0) {
      // Quirk: a set is joined, so two or more names come out in hash order (PYTHONHASHSEED=0).
      return dictOf({ error: `Invalid fields for update: ${joinStrings(', ', invalid)}` });
    }
    // Values are not type-checked; None means "leave as is".
    for (const [key, value] of updates) {
      if (value !== null) setItem(ticket, key, value);
    }
    return dictOf({ status: `Ticket ${str(ticketId)} has been updated successfully.` });
  }

  ticketLogin(username: PyValue, password: PyValue): PyValue {
    // Any two truthy values log in (`if username and password`).
    if (truthy(username) && truthy(password)) {
      this.current_user = username;
      return dictOf({ success: true });
    }
    return dictOf({ success: false });
  }

  ticketGetLoginStatus(): PyValue {
    return dictOf({ login_status: truthy(this.current_user) });
  }

  logout(): PyValue {
    if (truthy(this.current_user)) {
      this.current_user = null;
      return dictOf({ success: true });
    }
    return dictOf({ success: false });
  }

  /** Returns a list, so the result string is its Python repr. */
  getUserTickets(status: PyValue): PyValue {
    if (!truthy(this.current_user)) {
      return [dictOf({ error: 'User not authenticated. Please log in to view tickets.' })];
    }
    // A ticket without `created_by` (scenario tickets often lack it) raises KeyError.
    let userTickets = iterate(this.ticket_queue).filter((t) =>
      pyEquals(getItem(t, 'created_by'), this.current_user),
    );
    if (truthy(status)) {
      // `ticket["status"].lower()` is evaluated before `status.lower()`, once per ticket.
      userTickets = userTickets.filter((t) => {
        const own = strFor(getItem(t, 'status'), 'lower').toLowerCase();
        return own === strFor(status, 'lower').toLowerCase();
      });
    }
    return userTickets;
  }
}

const notFound = (ticketId: PyValue): PyDict =>
  dictOf({ error: `Ticket with ID ${str(ticketId)} not found.` });

const a = (args: BoundArgs, i: number): PyValue => args[i] as PyValue;

export const ticketApi: ApiClass<TicketApiInstance> = {
  className: 'TicketAPI',
  stateless: false,
  create: () => new TicketApiInstance(),
  methods: {
    create_ticket: {
      params: [req('title'), opt('description'), opt('priority')],
      // Explicit None stays None (only a missing argument takes the default).
      run: (self, args) =>
        self.createTicket(
          a(args, 0),
          args[1] === undefined ? '' : args[1],
          args[2] === undefined ? 1n : args[2],
        ),
    },
    get_ticket: { params: [req('ticket_id')], run: (self, args) => self.getTicket(a(args, 0)) },
    close_ticket: { params: [req('ticket_id')], run: (self, args) => self.closeTicket(a(args, 0)) },
    resolve_ticket: {
      params: [req('ticket_id'), req('resolution')],
      run: (self, args) => self.resolveTicket(a(args, 0), a(args, 1)),
    },
    edit_ticket: {
      params: [req('ticket_id'), req('updates')],
      run: (self, args) => self.editTicket(a(args, 0), a(args, 1)),
    },
    ticket_login: {
      params: [req('username'), req('password')],
      run: (self, args) => self.ticketLogin(a(args, 0), a(args, 1)),
    },
    ticket_get_login_status: { params: [], run: (self) => self.ticketGetLoginStatus() },
    logout: { params: [], run: (self) => self.logout() },
    get_user_tickets: {
      params: [opt('status')],
      run: (self, args) => self.getUserTickets(args[0] === undefined ? null : args[0]),
    },
  },
};
