/**
 * Scenario worlds of the mini suite, one per API class: a light model of the class's state that
 * builds the initial config (Python values, like BFCL's `initial_config`) and offers actions. An
 * action picks its values from the current world, returns the user request in one of several
 * phrasings with its ground-truth calls, and updates the world as those calls will. The generator
 * replays every ground truth in the real executor and drops a task whose calls fail, so the world
 * model only has to be right often, not always.
 */

import type { Rng } from '../../util/rng.js';
import type { ClassName, MultiTurnClassName } from '../bfcl/apis/api.js';
import { dictOf, type PyDict } from '../py/values.js';
import { call, type Lit } from './util.js';

/** One user request and its ground truth. */
export interface Step {
  readonly text: string;
  readonly calls: readonly string[];
  /** miss_param variant: the request without `value`, then the user message that gives it. */
  readonly missing?: { readonly text: string; readonly followUp: string; readonly value: string };
}

export interface World {
  readonly cls: ClassName;
  config(): PyDict;
  /** Candidate actions; each returns undefined when it does not apply to the current world. */
  readonly actions: readonly ((rng: Rng) => Step | undefined)[];
}

export interface WorldOptions {
  /** long_context: larger states (more files, entries, tickets, ...). */
  readonly big: boolean;
}

// ------------------------------------------------------------------------------------------------
// Vocabulary

const WORDS = [
  'budget',
  'meeting',
  'launch',
  'review',
  'client',
  'invoice',
  'design',
  'tests',
  'backlog',
  'sprint',
  'hiring',
  'travel',
  'garden',
  'recipe',
  'music',
  'lunch',
  'coffee',
  'server',
  'update',
  'survey',
];
const STEMS = [
  'notes',
  'plan',
  'report',
  'todo',
  'summary',
  'draft',
  'log',
  'ideas',
  'agenda',
  'memo',
  'list',
];
const EXTS = ['txt', 'md', 'csv'];
const DIRS = ['docs', 'archive', 'projects', 'backup', 'drafts', 'reports', 'misc', 'shared', 'old', 'work'];
const ROOTS = ['home', 'workspace', 'alex', 'sam', 'lab', 'office', 'kim', 'desk'];
const PEOPLE = [
  'Alice',
  'Bob',
  'Carol',
  'Dan',
  'Eve',
  'Frank',
  'Grace',
  'Hank',
  'Ivy',
  'Jack',
  'Kate',
  'Leo',
  'Mia',
  'Nina',
  'Omar',
  'Paul',
];
const HANDLES = ['jo_dev', 'kim22', 'techie', 'max_r', 'lena_k', 'sky_b', 'ravi', 'noor', 'tom_h', 'zoe_p'];

function phrase(rng: Rng, n = 3): string {
  return rng.sample(WORDS, n).join(' ');
}

/** A name not in `taken` (a few draws), or undefined. */
function newName(taken: ReadonlySet<string>, make: () => string): string | undefined {
  for (let i = 0; i < 20; i++) {
    const n = make();
    if (!taken.has(n)) return n;
  }
  return undefined;
}

const fileName = (rng: Rng) => `${rng.pick(STEMS)}${rng.chance(0.3) ? rng.int(1, 9) : ''}.${rng.pick(EXTS)}`;

// ------------------------------------------------------------------------------------------------
// GorillaFileSystem

interface Dir {
  readonly name: string;
  readonly parent: Dir | undefined;
  readonly files: Map<string, string>;
  readonly dirs: Map<string, Dir>;
}

function dirConfig(d: Dir): PyDict {
  const contents: PyDict = new Map();
  for (const [n, c] of d.files) contents.set(n, dictOf({ type: 'file', content: c }));
  for (const [n, sub] of d.dirs) contents.set(n, dictOf({ type: 'directory', contents: dirConfig(sub) }));
  return contents;
}

function fileSystemWorld(rng: Rng, o: WorldOptions): World {
  const mkDir = (name: string, parent: Dir | undefined): Dir => ({
    name,
    parent,
    files: new Map(),
    dirs: new Map(),
  });
  const fill = (d: Dir, n: number) => {
    for (let i = 0; i < n; i++) {
      const f = newName(new Set(d.files.keys()), () => fileName(rng));
      if (!f) continue;
      const lines = rng.int(1, 3);
      d.files.set(f, Array.from({ length: lines }, () => phrase(rng, rng.int(2, 4))).join('\n'));
    }
  };
  const root = mkDir(rng.pick(ROOTS), undefined);
  fill(root, o.big ? rng.int(3, 5) : rng.int(1, 3));
  for (const name of rng.sample(DIRS, o.big ? rng.int(2, 3) : rng.int(1, 2))) {
    const d = mkDir(name, root);
    root.dirs.set(name, d);
    fill(d, o.big ? rng.int(2, 4) : rng.int(0, 2));
  }
  const initial = dictOf({
    root: dictOf({ [root.name]: dictOf({ type: 'directory', contents: dirConfig(root) }) }),
  });
  let cwd = root;
  const taken = (d: Dir) => new Set([...d.files.keys(), ...d.dirs.keys()]);
  const anyFile = (d: Dir) => (d.files.size > 0 ? rng.pick([...d.files.keys()]) : undefined);

  return {
    cls: 'GorillaFileSystem',
    config: () => initial,
    actions: [
      // show a file here
      (r) => {
        const f = anyFile(cwd);
        if (!f) return undefined;
        return {
          text: r.pick([`Show me the contents of ${f}.`, `What does ${f} say?`, `Print the file ${f}.`]),
          calls: [call('cat', { file_name: f })],
          missing: {
            text: r.pick(['Show me the contents of one of my files.', 'Open a file for me.']),
            followUp: `The file is ${f}.`,
            value: f,
          },
        };
      },
      // go into a sub-folder and show a file there
      (r) => {
        const subs = [...cwd.dirs.values()].filter((d) => d.files.size > 0);
        if (subs.length === 0) return undefined;
        const d = r.pick(subs);
        const f = r.pick([...d.files.keys()]);
        cwd = d;
        return {
          text: r.pick([
            `Go into ${d.name} and show me ${f}.`,
            `Open the folder ${d.name}, then print ${f}.`,
            `In ${d.name}, what is in ${f}?`,
          ]),
          calls: [call('cd', { folder: d.name }), call('cat', { file_name: f })],
        };
      },
      // list a sub-folder
      (r) => {
        if (cwd.dirs.size === 0) return undefined;
        const d = r.pick([...cwd.dirs.values()]);
        cwd = d;
        return {
          text: r.pick([
            `Go to ${d.name} and list what is there.`,
            `What files are in the ${d.name} folder?`,
          ]),
          calls: [call('cd', { folder: d.name }), call('ls')],
        };
      },
      // go up
      (r) => {
        if (!cwd.parent) return undefined;
        cwd = cwd.parent;
        return {
          text: r.pick(['Go back to the parent folder.', 'Move up one directory.', 'Go up a level.']),
          calls: [call('cd', { folder: '..' })],
        };
      },
      // make a folder
      (r) => {
        const n = newName(taken(cwd), () => `${r.pick(DIRS)}${r.int(1, 9)}`);
        if (!n) return undefined;
        cwd.dirs.set(n, mkDir(n, cwd));
        return {
          text: r.pick([`Create a folder called ${n}.`, `Make a new directory named ${n}.`]),
          calls: [call('mkdir', { dir_name: n })],
          missing: {
            text: r.pick(['Create a new folder.', 'Make a directory for me.']),
            followUp: `Name it ${n}.`,
            value: n,
          },
        };
      },
      // new file with text
      (r) => {
        const n = newName(taken(cwd), () => fileName(r));
        if (!n) return undefined;
        const c = phrase(r, 3);
        cwd.files.set(n, c);
        return {
          text: r.pick([`Make a file ${n} with the text '${c}'.`, `Create ${n} and write '${c}' in it.`]),
          calls: [call('touch', { file_name: n }), call('echo', { content: c, file_name: n })],
          missing: {
            text: r.pick([`Create ${n} and write a note in it.`, `Make a file ${n} with some text.`]),
            followUp: `The text is '${c}'.`,
            value: c,
          },
        };
      },
      // grep
      (r) => {
        const f = anyFile(cwd);
        if (!f) return undefined;
        const words = cwd.files.get(f)!.split(/\s+/).filter(Boolean);
        if (words.length === 0) return undefined;
        const w = r.pick(words);
        return {
          text: r.pick([`Find the lines with '${w}' in ${f}.`, `Search ${f} for '${w}'.`]),
          calls: [call('grep', { file_name: f, pattern: w })],
          missing: { text: `Search ${f} for a word.`, followUp: `Look for '${w}'.`, value: w },
        };
      },
      // wc
      (r) => {
        const f = anyFile(cwd);
        if (!f) return undefined;
        const [mode, what] = r.pick([
          ['l', 'lines'],
          ['w', 'words'],
          ['c', 'characters'],
        ] as const);
        return {
          text: r.pick([`How many ${what} are in ${f}?`, `Count the ${what} of ${f}.`]),
          calls: [call('wc', { file_name: f, mode })],
        };
      },
      // move a file into a folder
      (r) => {
        const f = anyFile(cwd);
        const targets = [...cwd.dirs.values()].filter(
          (d) => f !== undefined && !d.files.has(f) && !d.dirs.has(f),
        );
        if (!f || targets.length === 0) return undefined;
        const d = r.pick(targets);
        d.files.set(f, cwd.files.get(f)!);
        cwd.files.delete(f);
        return {
          text: r.pick([`Move ${f} into ${d.name}.`, `Put ${f} in the ${d.name} folder.`]),
          calls: [call('mv', { source: f, destination: d.name })],
          missing: {
            text: `Move ${f} into another folder.`,
            followUp: `Put it in ${d.name}.`,
            value: d.name,
          },
        };
      },
      // rename
      (r) => {
        const f = anyFile(cwd);
        const n = newName(taken(cwd), () => fileName(r));
        if (!f || !n) return undefined;
        cwd.files.set(n, cwd.files.get(f)!);
        cwd.files.delete(f);
        return {
          text: r.pick([`Rename ${f} to ${n}.`, `Change the name of ${f} to ${n}.`]),
          calls: [call('mv', { source: f, destination: n })],
          missing: { text: `Rename ${f}.`, followUp: `Call it ${n}.`, value: n },
        };
      },
      // copy
      (r) => {
        const f = anyFile(cwd);
        const n = newName(taken(cwd), () => fileName(r));
        if (!f || !n) return undefined;
        cwd.files.set(n, cwd.files.get(f)!);
        return {
          text: r.pick([`Make a copy of ${f} called ${n}.`, `Copy ${f} to ${n}.`]),
          calls: [call('cp', { source: f, destination: n })],
        };
      },
      // delete
      (r) => {
        const f = anyFile(cwd);
        if (!f) return undefined;
        cwd.files.delete(f);
        return {
          text: r.pick([`Delete ${f}.`, `Remove the file ${f}.`]),
          calls: [call('rm', { file_name: f })],
        };
      },
      // overwrite
      (r) => {
        const f = anyFile(cwd);
        if (!f) return undefined;
        const c = phrase(r, 2);
        cwd.files.set(f, c);
        return {
          text: r.pick([`Replace the text of ${f} with '${c}'.`, `Overwrite ${f} so it says '${c}'.`]),
          calls: [call('echo', { content: c, file_name: f })],
          missing: { text: `Overwrite ${f} with new text.`, followUp: `Make it say '${c}'.`, value: c },
        };
      },
    ],
  };
}

// ------------------------------------------------------------------------------------------------
// MathAPI (stateless)

function mathWorld(_rng: Rng, _o: WorldOptions): World {
  const two = (r: Rng) => [BigInt(r.int(2, 99)), BigInt(r.int(2, 99))] as const;
  return {
    cls: 'MathAPI',
    config: () => new Map(),
    actions: [
      (r) => {
        const [a, b] = two(r);
        return {
          text: r.pick([`What is ${a} plus ${b}?`, `Add ${a} and ${b}.`]),
          calls: [call('add', { a, b })],
          missing: {
            text: `Add ${a} to another number.`,
            followUp: `The other number is ${b}.`,
            value: `${b}`,
          },
        };
      },
      (r) => {
        const [a, b] = two(r);
        return {
          text: r.pick([`What is ${a} minus ${b}?`, `Subtract ${b} from ${a}.`]),
          calls: [call('subtract', { a, b })],
        };
      },
      (r) => {
        const [a, b] = two(r);
        return {
          text: r.pick([`What is ${a} times ${b}?`, `Multiply ${a} by ${b}.`]),
          calls: [call('multiply', { a, b })],
          missing: { text: `Multiply ${a} by something.`, followUp: `By ${b}.`, value: `${b}` },
        };
      },
      (r) => {
        const [a, b] = two(r);
        return {
          text: r.pick([`What is ${a} divided by ${b}?`, `Divide ${a} by ${b}.`]),
          calls: [call('divide', { a, b })],
        };
      },
      (r) => {
        const xs = Array.from({ length: r.int(3, 4) }, () => BigInt(r.int(1, 50)));
        return {
          text: r.pick([`What is the average of ${xs.join(', ')}?`, `Compute the mean of ${xs.join(', ')}.`]),
          calls: [call('mean', { numbers: xs })],
        };
      },
      (r) => {
        const whole = BigInt(r.int(20, 200));
        const part = BigInt(r.int(1, Number(whole)));
        return {
          text: r.pick([`What percent of ${whole} is ${part}?`, `Give ${part} as a percentage of ${whole}.`]),
          calls: [call('percentage', { part, whole })],
        };
      },
    ],
  };
}

// ------------------------------------------------------------------------------------------------
// MessageAPI

function messageWorld(rng: Rng, o: WorldOptions): World {
  const names = rng.sample(PEOPLE, o.big ? 6 : 4);
  const ids = new Map<string, string>(names.map((n, i) => [n, `USR${String(i + 1).padStart(3, '0')}`]));
  let userCount = names.length;
  const me = names[0]!;
  const inbox: { to: string; text: string }[] = [];
  for (let i = 0; i < (o.big ? rng.int(3, 5) : rng.int(1, 2)); i++) {
    inbox.push({ to: rng.pick(names.slice(1)), text: phrase(rng, 3) });
  }
  const initial = dictOf({
    user_count: BigInt(userCount),
    user_map: dictOf(Object.fromEntries(ids)),
    inbox: inbox.map((m) => dictOf({ [ids.get(m.to)!]: m.text })),
    message_count: BigInt(inbox.length),
    current_user: ids.get(me)!,
  });
  const others = () => [...ids.keys()].filter((n) => n !== me);
  return {
    cls: 'MessageAPI',
    config: () => initial,
    actions: [
      (r) => {
        const n = r.pick(others());
        const m = phrase(r, 3);
        inbox.push({ to: n, text: m });
        const calls = [
          call('get_user_id', { user: n }),
          call('send_message', { receiver_id: ids.get(n)!, message: m }),
        ];
        return {
          text: r.pick([
            `Send ${n} the message '${m}'.`,
            `Message ${n}: '${m}'.`,
            `Tell ${n} '${m}' by message.`,
          ]),
          calls,
          missing: {
            text: r.pick([`Send a message to ${n}.`, `I need to message ${n}.`]),
            followUp: `Say '${m}'.`,
            value: m,
          },
        };
      },
      (r) => {
        const sentTo = [...new Set(inbox.map((m) => m.to))];
        if (sentTo.length === 0) return undefined;
        const n = r.pick(sentTo);
        const idx = inbox.map((m) => m.to).lastIndexOf(n);
        inbox.splice(idx, 1);
        return {
          text: r.pick([`Delete the last message I sent to ${n}.`, `Remove my latest message to ${n}.`]),
          calls: [call('get_user_id', { user: n }), call('delete_message', { receiver_id: ids.get(n)! })],
          missing: { text: 'Delete my latest message to someone.', followUp: `It was to ${n}.`, value: n },
        };
      },
      (r) => ({
        text: r.pick(['Show the messages I have sent.', 'What messages did I send?']),
        calls: [call('view_messages_sent')],
      }),
      (r) => {
        const n = PEOPLE.find((p) => !ids.has(p) && r.chance(0.3)) ?? PEOPLE.find((p) => !ids.has(p));
        if (!n) return undefined;
        userCount++;
        ids.set(n, `USR${String(userCount).padStart(3, '0')}`);
        return {
          text: r.pick([`Add ${n} to my contacts.`, `Save ${n} as a new contact.`]),
          calls: [call('add_contact', { user_name: n })],
          missing: { text: 'Add a new contact.', followUp: `The name is ${n}.`, value: n },
        };
      },
    ],
  };
}

// ------------------------------------------------------------------------------------------------
// TwitterAPI

function twitterWorld(rng: Rng, o: WorldOptions): World {
  const [username, ...rest] = rng.sample(HANDLES, 6);
  const password = `pw${rng.int(100, 999)}`;
  let authenticated = rng.chance(0.6);
  const tweets = Array.from({ length: o.big ? rng.int(3, 5) : rng.int(1, 3) }, (_, i) => ({
    id: BigInt(i),
    content: phrase(rng, 3),
    tag: `#${rng.pick(WORDS)}`,
  }));
  const following = rng.sample(rest, o.big ? 3 : 1);
  const retweeted = new Set<bigint>();
  let counter = BigInt(tweets.length);
  const initial = dictOf({
    username: username!,
    password,
    authenticated,
    tweets: dictOf(
      Object.fromEntries(
        tweets.map((t) => [
          String(t.id),
          dictOf({ id: t.id, username: username!, content: t.content, tags: [t.tag], mentions: [] }),
        ]),
      ),
    ),
    comments: new Map(),
    retweets: new Map(),
    following_list: [...following],
    tweet_counter: counter,
  });
  /** Prepends the login the first time an action needs it. */
  const auth = (text: string, calls: string[]): { text: string; calls: string[]; creds: string } => {
    if (authenticated) return { text, calls, creds: '' };
    authenticated = true;
    const creds = `I'm ${username}, password ${password}.`;
    return {
      text: `${text} ${creds}`,
      calls: [call('authenticate_twitter', { username: username!, password }), ...calls],
      creds,
    };
  };
  return {
    cls: 'TwitterAPI',
    config: () => initial,
    actions: [
      (r) => {
        const c = phrase(r, 3);
        const tag = r.chance(0.5) ? `#${r.pick(WORDS)}` : undefined;
        counter++;
        const args: Record<string, Lit> = tag ? { content: c, tags: [tag] } : { content: c };
        const withTag = tag ? ` with the tag ${tag}` : '';
        const a = auth(r.pick([`Post a tweet saying '${c}'${withTag}.`, `Tweet '${c}'${withTag}.`]), [
          call('post_tweet', args),
        ]);
        return {
          text: a.text,
          calls: a.calls,
          missing: {
            text: `I want to post a tweet${withTag}.`,
            followUp: `${a.creds} Write '${c}'.`.trim(),
            value: c,
          },
        };
      },
      (r) => {
        const t = tweets.filter((x) => !retweeted.has(x.id));
        if (t.length === 0) return undefined;
        const x = r.pick(t);
        retweeted.add(x.id);
        const a = auth(r.pick([`Retweet tweet ${x.id}.`, `Share tweet number ${x.id} again.`]), [
          call('retweet', { tweet_id: x.id }),
        ]);
        return { text: a.text, calls: a.calls };
      },
      (r) => {
        const x = r.pick(tweets);
        const c = phrase(r, 2);
        const a = auth(r.pick([`Comment '${c}' on tweet ${x.id}.`, `Reply '${c}' to tweet ${x.id}.`]), [
          call('comment', { tweet_id: x.id, comment_content: c }),
        ]);
        return {
          text: a.text,
          calls: a.calls,
          missing: {
            text: `Leave a comment on tweet ${x.id}.`,
            followUp: `${a.creds} Comment '${c}'.`.trim(),
            value: c,
          },
        };
      },
      (r) => {
        const u = rest.find((h) => !following.includes(h));
        if (!u) return undefined;
        following.push(u);
        const a = auth(r.pick([`Follow ${u}.`, `Start following ${u}.`]), [
          call('follow_user', { username_to_follow: u }),
        ]);
        return { text: a.text, calls: a.calls };
      },
      (r) => {
        const x = r.pick(tweets);
        return {
          text: r.pick([`Show me tweet ${x.id}.`, `What does tweet ${x.id} say?`]),
          calls: [call('get_tweet', { tweet_id: x.id })],
        };
      },
    ],
  };
}

// ------------------------------------------------------------------------------------------------
// TicketAPI

function ticketWorld(rng: Rng, o: WorldOptions): World {
  const user = rng.pick(PEOPLE).toLowerCase();
  let loggedIn = rng.chance(0.6);
  const base = rng.int(10, 90) * 10;
  const tickets = Array.from({ length: o.big ? rng.int(3, 5) : rng.int(1, 2) }, (_, i) => ({
    id: BigInt(base + i),
    title: phrase(rng, 2),
    status: 'Open',
    priority: BigInt(rng.int(1, 5)),
  }));
  let counter = BigInt(base + tickets.length + rng.int(0, 5));
  const initial = dictOf({
    ticket_queue: tickets.map((t) =>
      dictOf({
        id: t.id,
        title: t.title,
        description: '',
        status: t.status,
        priority: t.priority,
        created_by: user,
      }),
    ),
    ticket_counter: counter,
    current_user: loggedIn ? user : null,
  });
  const login = (text: string, calls: string[]): { text: string; calls: string[] } => {
    if (loggedIn) return { text, calls };
    loggedIn = true;
    return {
      text: `${text} Log in as ${user} with password pass${user.length}.`,
      calls: [call('ticket_login', { username: user, password: `pass${user.length}` }), ...calls],
    };
  };
  const open = () => tickets.filter((t) => t.status === 'Open');
  return {
    cls: 'TicketAPI',
    config: () => initial,
    actions: [
      (r) => {
        const title = phrase(r, 2);
        const p = BigInt(r.int(1, 5));
        tickets.push({ id: counter, title, status: 'Open', priority: p });
        counter++;
        const a = login(
          r.pick([
            `Open a ticket titled '${title}' with priority ${p}.`,
            `Create a priority ${p} ticket called '${title}'.`,
          ]),
          [call('create_ticket', { title, priority: p })],
        );
        const loginText = a.text.includes(' Log in as ')
          ? a.text.slice(a.text.indexOf(' Log in as ') + 1)
          : '';
        return {
          ...a,
          missing: {
            text: `Open a new ticket with priority ${p}.`,
            followUp: `${loginText} The title is '${title}'.`.trim(),
            value: title,
          },
        };
      },
      (r) => {
        const t = r.pick(tickets);
        return {
          text: r.pick([`Show me ticket ${t.id}.`, `What is the status of ticket ${t.id}?`]),
          calls: [call('get_ticket', { ticket_id: t.id })],
        };
      },
      (r) => {
        const c = open();
        if (c.length === 0) return undefined;
        const t = r.pick(c);
        t.status = 'Closed';
        return {
          text: r.pick([`Close ticket ${t.id}.`, `Please close ticket ${t.id}.`]),
          calls: [call('close_ticket', { ticket_id: t.id })],
        };
      },
      (r) => {
        const c = open();
        if (c.length === 0) return undefined;
        const t = r.pick(c);
        t.status = 'Resolved';
        const res = phrase(r, 2);
        return {
          text: r.pick([
            `Resolve ticket ${t.id} with the note '${res}'.`,
            `Mark ticket ${t.id} resolved: '${res}'.`,
          ]),
          calls: [call('resolve_ticket', { ticket_id: t.id, resolution: res })],
          missing: { text: `Resolve ticket ${t.id}.`, followUp: `The resolution is '${res}'.`, value: res },
        };
      },
      (r) => {
        const t = r.pick(tickets);
        const p = BigInt(r.int(1, 5));
        t.priority = p;
        return {
          text: r.pick([
            `Set the priority of ticket ${t.id} to ${p}.`,
            `Change ticket ${t.id} to priority ${p}.`,
          ]),
          calls: [call('edit_ticket', { ticket_id: t.id, updates: { priority: p } })],
        };
      },
    ],
  };
}

// ------------------------------------------------------------------------------------------------
// TradingBot

const COMPANIES: readonly (readonly [string, string])[] = [
  ['Apple', 'AAPL'],
  ['Google', 'GOOG'],
  ['Tesla', 'TSLA'],
  ['Microsoft', 'MSFT'],
  ['Nvidia', 'NVDA'],
  ['Zeta Corp', 'ZETA'],
  ['Alpha Tech', 'ALPH'],
  ['Omega Industries', 'OMEG'],
  ['Neptune Systems', 'NEPT'],
  ['Synex Solutions', 'SYNX'],
];

const possessive = (name: string) => (name.endsWith('s') ? `${name}'` : `${name}'s`);

const money = (rng: Rng, lo: number, hi: number) => Math.round((lo + rng.next() * (hi - lo)) * 100) / 100;

function tradingWorld(rng: Rng, o: WorldOptions): World {
  const listed = rng.sample(COMPANIES, o.big ? 6 : 3);
  const prices = new Map(listed.map(([, s]) => [s, money(rng, 20, 400)]));
  const orderBase = rng.int(100, 900);
  const orders = Array.from({ length: o.big ? rng.int(2, 4) : rng.int(0, 2) }, (_, i) => {
    const [, s] = rng.pick(listed);
    return {
      id: BigInt(orderBase + i),
      symbol: s,
      amount: BigInt(rng.int(1, 20)),
      status: rng.pick(['Open', 'Pending']),
    };
  });
  let counter = BigInt(orderBase + orders.length);
  const watch = [rng.pick(listed)[1]];
  const initial = dictOf({
    orders: dictOf(
      Object.fromEntries(
        orders.map((x) => [
          String(x.id),
          dictOf({
            id: x.id,
            order_type: 'Buy',
            symbol: x.symbol,
            price: prices.get(x.symbol)!,
            amount: x.amount,
            status: x.status,
          }),
        ]),
      ),
    ),
    account_info: dictOf({
      account_id: BigInt(rng.int(1000, 9999)),
      balance: money(rng, 20000, 50000),
      binding_card: BigInt(rng.int(1000, 9999)),
    }),
    authenticated: true,
    market_status: 'Open',
    order_counter: counter,
    stocks: dictOf(
      Object.fromEntries(
        listed.map(([, s]) => [
          s,
          dictOf({
            price: prices.get(s)!,
            percent_change: money(rng, -2, 2),
            volume: money(rng, 1, 5),
            'MA(5)': prices.get(s)!,
            'MA(20)': prices.get(s)!,
          }),
        ]),
      ),
    ),
    watch_list: [...watch],
    transaction_history: [],
  });
  return {
    cls: 'TradingBot',
    config: () => initial,
    actions: [
      (r) => {
        const [name, s] = r.pick(listed);
        return {
          text: r.pick([`What is the stock price of ${name}?`, `Look up ${possessive(name)} stock.`]),
          calls: [call('get_symbol_by_name', { name }), call('get_stock_info', { symbol: s })],
        };
      },
      (r) => {
        const [, s] = r.pick(listed);
        const n = BigInt(r.int(2, 30));
        const p = money(r, 10, 300);
        counter++;
        return {
          text: r.pick([
            `Buy ${n} shares of ${s} at ${p} each.`,
            `Place a buy order for ${n} ${s} shares at $${p}.`,
          ]),
          calls: [call('place_order', { order_type: 'Buy', symbol: s, price: p, amount: n })],
          missing: {
            text: `Buy some ${s} shares at $${p}.`,
            followUp: `Make it ${n} shares.`,
            value: `${n}`,
          },
        };
      },
      (r) => {
        const [name, s] = r.pick(listed);
        const n = BigInt(r.int(2, 30));
        counter++;
        return {
          text: r.pick([
            `Buy ${n} shares of ${name} at the current price.`,
            `Get me ${n} ${name} shares at market price.`,
          ]),
          calls: [
            call('get_symbol_by_name', { name }),
            call('get_stock_info', { symbol: s }),
            call('place_order', { order_type: 'Buy', symbol: s, price: prices.get(s)!, amount: n }),
          ],
        };
      },
      (r) => {
        const c = orders.filter((x) => x.status !== 'Cancelled');
        if (c.length === 0) return undefined;
        const x = r.pick(c);
        x.status = 'Cancelled';
        return {
          text: r.pick([`Cancel order ${x.id}.`, `Please cancel my order ${x.id}.`]),
          calls: [call('cancel_order', { order_id: x.id })],
        };
      },
      (r) => {
        const c = listed.filter(([, s]) => !watch.includes(s));
        if (c.length === 0) return undefined;
        const [, s] = r.pick(c);
        watch.push(s);
        return {
          text: r.pick([`Add ${s} to my watchlist.`, `Watch the stock ${s}.`]),
          calls: [call('add_to_watchlist', { stock: s })],
          missing: { text: 'Add a stock to my watchlist.', followUp: `The symbol is ${s}.`, value: s },
        };
      },
      (r) => {
        const x = BigInt(r.int(1, 40)) * 50n;
        const amount = Number(x);
        return {
          text: r.pick([
            `Deposit ${amount} dollars into my account.`,
            `Add $${amount} to my trading account.`,
          ]),
          calls: [call('fund_account', { amount: amount + 0.0 })],
          missing: {
            text: 'Put some money into my trading account.',
            followUp: `Deposit ${amount} dollars.`,
            value: `${amount}`,
          },
        };
      },
    ],
  };
}

// ------------------------------------------------------------------------------------------------
// TravelAPI

const CITIES: readonly (readonly [string, string])[] = [
  ['San Francisco', 'SFO'],
  ['Los Angeles', 'LAX'],
  ['New York', 'JFK'],
  ['Chicago', 'ORD'],
  ['Boston', 'BOS'],
  ['Rivermist', 'RMS'],
  ['Stonebrook', 'SBK'],
  ['Crescent Hollow', 'CRH'],
];
const ROUTES: readonly (readonly [string, string])[] = [
  ['SFO', 'LAX'],
  ['SFO', 'JFK'],
  ['SFO', 'ORD'],
  ['SFO', 'BOS'],
  ['LAX', 'SFO'],
  ['LAX', 'JFK'],
  ['LAX', 'ORD'],
  ['JFK', 'ORD'],
  ['JFK', 'BOS'],
  ['ORD', 'LAX'],
  ['ORD', 'BOS'],
  ['BOS', 'RMS'],
  ['RMS', 'BOS'],
  ['RMS', 'JFK'],
  ['CRH', 'SFO'],
  ['SBK', 'CRH'],
];
const CURRENCIES = ['EUR', 'JPY', 'GBP', 'CAD', 'AUD', 'INR'];

function travelWorld(rng: Rng, o: WorldOptions): World {
  const token = `tk${rng.int(1000, 9999)}`;
  let tokenGiven = false;
  const [first, last] = [rng.pick(PEOPLE), rng.pick(['Lee', 'Kim', 'Cruz', 'Shah', 'Berg', 'Moss'])];
  const cards = Array.from({ length: o.big ? 3 : rng.int(1, 2) }, () => String(rng.int(1000, 9999)));
  const uniqueCards = [...new Set(cards)];
  const bookings = Array.from({ length: o.big ? rng.int(2, 3) : rng.int(0, 1) }, () => ({
    id: String(rng.int(100000, 999999)),
    route: rng.pick(ROUTES),
    card: rng.pick(uniqueCards),
  }));
  const date = () =>
    `2025-${String(rng.int(1, 12)).padStart(2, '0')}-${String(rng.int(1, 28)).padStart(2, '0')}`;
  const initial = dictOf({
    credit_card_list: dictOf(
      Object.fromEntries(
        uniqueCards.map((c) => [
          c,
          dictOf({
            card_number: `4${rng.int(100, 999)}${c}${rng.int(1000, 9999)}`,
            expiration_date: `0${rng.int(1, 9)}/2030`,
            cardholder_name: `${first} ${last}`,
            card_verification_number: BigInt(rng.int(100, 999)),
            balance: money(rng, 15000, 30000),
          }),
        ]),
      ),
    ),
    booking_record: dictOf(
      Object.fromEntries(
        bookings.map((b) => [
          b.id,
          dictOf({
            card_id: b.card,
            travel_date: date(),
            travel_from: b.route[0],
            travel_to: b.route[1],
            travel_class: 'economy',
            travel_cost: money(rng, 200, 600),
            transaction_id: String(rng.int(10000000, 99999999)),
          }),
        ]),
      ),
    ),
    access_token: token,
    token_type: 'Bearer',
    token_expires_in: 2n,
    token_scope: 'read_write',
    user_first_name: first,
    user_last_name: last,
  });
  const tok = (text: string) => {
    if (tokenGiven) return text;
    tokenGiven = true;
    return `${text} My access token is ${token}.`;
  };
  return {
    cls: 'TravelAPI',
    config: () => initial,
    actions: [
      (r) => {
        const [city] = r.pick(CITIES);
        return {
          text: r.pick([`Which airport is nearest to ${city}?`, `Find the airport code for ${city}.`]),
          calls: [call('get_nearest_airport_by_city', { location: city })],
        };
      },
      (r) => {
        const [from, to] = r.pick(ROUTES);
        const d = date();
        const cls = r.pick(['economy', 'business', 'first']);
        return {
          text: r.pick([
            `How much is a ${cls} flight from ${from} to ${to} on ${d}?`,
            `Price a ${cls} ticket ${from} to ${to} for ${d}.`,
          ]),
          calls: [
            call('get_flight_cost', { travel_from: from, travel_to: to, travel_date: d, travel_class: cls }),
          ],
          missing: {
            text: `How much is a flight from ${from} to ${to} on ${d}?`,
            followUp: `In ${cls} class.`,
            value: cls,
          },
        };
      },
      (r) => {
        const [from, to] = r.pick(ROUTES);
        const d = date();
        const cls = r.pick(['economy', 'business']);
        const card = r.pick(uniqueCards);
        const text = tok(
          r.pick([
            `Book a ${cls} flight from ${from} to ${to} on ${d} with card ${card}.`,
            `Reserve ${from} to ${to} on ${d}, ${cls} class, paying with card ${card}.`,
          ]),
        );
        return {
          text,
          calls: [
            call('book_flight', {
              access_token: token,
              card_id: card,
              travel_date: d,
              travel_from: from,
              travel_to: to,
              travel_class: cls,
            }),
          ],
          missing: {
            text: `Book a ${cls} flight from ${from} to ${to} on ${d}.`,
            followUp: text.includes(token)
              ? `Pay with card ${card}. My access token is ${token}.`
              : `Pay with card ${card}.`,
            value: card,
          },
        };
      },
      (r) => {
        if (bookings.length === 0) return undefined;
        const b = bookings.splice(r.int(0, bookings.length - 1), 1)[0]!;
        return {
          text: tok(r.pick([`Cancel my booking ${b.id}.`, `Please cancel booking ${b.id}.`])),
          calls: [call('cancel_booking', { access_token: token, booking_id: b.id })],
        };
      },
      (r) => {
        const card = r.pick(uniqueCards);
        return {
          text: tok(
            r.pick([`What is the balance on card ${card}?`, `How much money is left on card ${card}?`]),
          ),
          calls: [call('get_credit_card_balance', { access_token: token, card_id: card })],
        };
      },
      (r) => {
        const v = r.int(2, 200) * 10;
        const cur = r.pick(CURRENCIES);
        return {
          text: r.pick([`Convert ${v} USD to ${cur}.`, `How much is ${v} dollars in ${cur}?`]),
          calls: [
            call('compute_exchange_rate', { base_currency: 'USD', target_currency: cur, value: v + 0.0 }),
          ],
          missing: {
            text: `Convert some US dollars to ${cur}.`,
            followUp: `The amount is ${v} USD.`,
            value: `${v}`,
          },
        };
      },
    ],
  };
}

// ------------------------------------------------------------------------------------------------
// VehicleControlAPI

const DOORS = ['driver', 'passenger', 'rear_left', 'rear_right'] as const;
const PLACES = [
  '12 Oak Street',
  '5 Lake Road',
  '99 Hill Avenue',
  '7 Park Lane',
  '31 Pine Drive',
  '240 Main Street',
];

function vehicleWorld(rng: Rng, o: WorldOptions): World {
  let fuel = rng.int(5, 35) + (rng.chance(0.5) ? 0.5 : 0);
  let engineOn = false;
  const doors = new Map(DOORS.map((d) => [d, rng.chance(0.5) ? 'locked' : 'unlocked']));
  const initial = dictOf({
    fuelLevel: fuel,
    batteryVoltage: 12.6,
    engineState: 'stopped',
    doorStatus: dictOf(Object.fromEntries(doors)),
    acTemperature: rng.int(18, 26) + 0.0,
    headLightStatus: rng.pick(['on', 'off']),
    ...(o.big ? { humidityLevel: rng.int(30, 70) + 0.0, destination: rng.pick(PLACES) } : {}),
  });
  return {
    cls: 'VehicleControlAPI',
    config: () => initial,
    actions: [
      (r) => {
        if (engineOn) return undefined;
        engineOn = true;
        for (const d of DOORS) doors.set(d, 'locked');
        return {
          text: r.pick([
            'Start the car.',
            'Start the engine, please.',
            'Lock all the doors, press the brake fully and start the engine.',
          ]),
          calls: [
            call('lockDoors', { unlock: false, door: [...DOORS] }),
            call('pressBrakePedal', { pedalPosition: 1.0 }),
            call('startEngine', { ignitionMode: 'START' }),
          ],
        };
      },
      (r) => {
        const room = Math.floor(50 - fuel);
        if (room < 2) return undefined;
        const x = r.int(1, Math.min(room, 30)) + 0.0;
        fuel += x;
        return {
          text: r.pick([`Add ${x} gallons of fuel.`, `Put ${x} gallons in the tank.`]),
          calls: [call('fillFuelTank', { fuelAmount: x })],
          missing: { text: 'Add some fuel to the tank.', followUp: `Add ${x} gallons.`, value: `${x}` },
        };
      },
      (r) => {
        const m = r.pick(['on', 'off']);
        return {
          text: r.pick([`Turn the headlights ${m}.`, `Switch the headlights ${m}.`]),
          calls: [call('setHeadlights', { mode: m })],
        };
      },
      (r) => {
        const t = r.int(16, 28) + 0.0;
        return {
          text: r.pick([`Set the cabin to ${t} degrees celsius.`, `Make it ${t} degrees celsius inside.`]),
          calls: [call('adjustClimateControl', { temperature: t, unit: 'celsius' })],
        };
      },
      (r) => {
        const p = r.pick(PLACES);
        return {
          text: r.pick([`Navigate to ${p}.`, `Set the destination to ${p}.`]),
          calls: [call('set_navigation', { destination: p })],
          missing: { text: 'Set up the navigation.', followUp: `Go to ${p}.`, value: p },
        };
      },
      (r) => {
        const locked = DOORS.filter((d) => doors.get(d) === 'locked');
        if (locked.length === 0 || engineOn) return undefined;
        const d = r.pick(locked);
        doors.set(d, 'unlocked');
        return {
          text: r.pick([
            `Unlock the ${d.replace('_', ' ')} door.`,
            `Open the lock on the ${d.replace('_', ' ')} door.`,
          ]),
          calls: [call('lockDoors', { unlock: true, door: [d] })],
        };
      },
    ],
  };
}

export const WORLD_BUILDERS: Readonly<Record<MultiTurnClassName, (rng: Rng, o: WorldOptions) => World>> = {
  GorillaFileSystem: fileSystemWorld,
  MathAPI: mathWorld,
  MessageAPI: messageWorld,
  TwitterAPI: twitterWorld,
  TicketAPI: ticketWorld,
  TradingBot: tradingWorld,
  TravelAPI: travelWorld,
  VehicleControlAPI: vehicleWorld,
};
