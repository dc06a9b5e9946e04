/**
 * A mutation check you can rerun: each break in BREAKS (one file, an exact search string, its
 * replacement) is applied to a scratch copy of the repository, the test files that should catch it
 * are run there, and the table says which breaks the tests caught. The working tree is never
 * touched: the copy lives in a temporary folder, node_modules a symlink to the repository's.
 *
 *   npx tsx bench/mutate.ts                  # every break, then the table and caught/total
 *   npx tsx bench/mutate.ts --only sign,kl   # the breaks whose name contains one of these
 *   npx tsx bench/mutate.ts --list           # the breaks and their test files, nothing run
 *
 * A search string that is not in its file exactly once stops the run before anything is copied (exit
 * 2): the list follows the code, or it says nothing. Before the breaks, the test files are run once
 * on the unbroken copy (the control); a file that fails there makes every break on it meaningless,
 * and the run stops. Outside `npm test`: a full run takes about a quarter of an hour on two cores.
 */
import { spawn } from 'node:child_process';
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

interface Break {
  /** short name, for --only and the table */
  readonly name: string;
  /** the kind of mistake it stands for */
  readonly kind: string;
  readonly file: string;
  readonly search: string;
  readonly replace: string;
  /** the test files that should catch it */
  readonly tests: readonly string[];
  /** a note printed beside the result (why it may escape) */
  readonly note?: string;
}

const DATUMS = 'test/learner/tinker/seal-datums.test.ts';
const TINKER_CLIENT = ['test/tinker/client.test.ts', 'test/tinker/failures.test.ts'];
const TINKER_TRAIN = 'test/train/tinker.test.ts';
const RUN_FOLDER = 'test/train/run-folder.test.ts';

export const BREAKS: readonly Break[] = [
  {
    name: 'sign-wire',
    kind: 'flip a sign: advantages negated between the datums and the wire (wireDatum)',
    file: 'src/learner/tinker/learner.ts',
    search: '...(f.advantages ? { advantages: f.advantages.data } : {}),',
    replace: '...(f.advantages ? { advantages: f.advantages.data.map((a) => -a) } : {}),',
    tests: [DATUMS],
  },
  {
    name: 'mask-shift',
    kind: 'shifted mask: a token trained when the token before it was (policyDatums)',
    file: 'src/learner/tinker/seal-datums.ts',
    search: 'if (!(d.weights[t]! > 0)) {',
    replace: 'if (!(d.weights[t - 1]! > 0)) {',
    tests: [DATUMS],
  },
  {
    name: 'normaliser',
    kind: 'wrong normaliser: advantages over N + 1 trained tokens (policyDatums)',
    file: 'src/learner/tinker/seal-datums.ts',
    search: 'advantages.push(a / n);',
    replace: 'advantages.push(a / (n + 1));',
    tests: [DATUMS],
  },
  {
    name: 'kl-dropped',
    kind: 'dropped KL: the k3 term not folded into the advantages (policyDatums)',
    file: 'src/learner/tinker/seal-datums.ts',
    search: 'a += klAdvantage(q, b, loss.klCoef);',
    replace: 'a += 0 * klAdvantage(q, b, loss.klCoef);',
    tests: [DATUMS],
  },
  {
    name: 'retry-dropped',
    kind: 'drop a retry: a 429 answer is not sent again (http.ts shouldRetry)',
    file: 'src/tinker/http.ts',
    search: 'return s === 408 || s === 409 || s === 429 || s >= 500;',
    replace: 'return s === 408 || s === 409 || s >= 500;',
    tests: TINKER_CLIENT,
  },
  {
    name: 'retry-after',
    kind: 'Retry-After ignored: the backoff instead of the wait the server asked for (http.ts)',
    file: 'src/tinker/http.ts',
    search: 'waitMs = retryAfterMs(answer.headers) ?? this.backoffMs(retries + 1);',
    replace: 'waitMs = this.backoffMs(retries + 1);',
    tests: TINKER_CLIENT,
  },
  {
    name: 'seq-skip',
    kind: 'skip a seq id: the third training request of a model takes seq id 4 (client.ts takeSeq)',
    file: 'src/tinker/client.ts',
    search: 'return this.seq++;',
    replace: 'return this.seq === 3 ? (this.seq += 2) - 1 : this.seq++;',
    tests: TINKER_CLIENT,
  },
  {
    name: 'idempotency-reuse',
    kind: 'reuse an idempotency key: every request sent under the same key (http.ts)',
    file: 'src/tinker/http.ts',
    search: 'export function newIdempotencyKey(): string {\n',
    replace: "export function newIdempotencyKey(): string {\n  if (randomUUID) return 'seal-retry-same';\n",
    tests: TINKER_CLIENT,
  },
  {
    name: 'eval-base',
    kind: 'seal eval --policy tinker --model CKPT samples the base model, not the checkpoint (eval-tinker.ts)',
    file: 'src/cli/eval-tinker.ts',
    search: 'return { sampler: { modelPath: saved.sampler }, base: saved.baseModel };',
    replace: 'return { sampler: { baseModel: saved.baseModel }, base: saved.baseModel };',
    tests: [TINKER_TRAIN],
    note: 'caught only where the test server samples by weights',
  },
  {
    name: 'resume-no-load',
    kind: 'skip load_weights on resume: a resumed Tinker run starts from the base (learner.ts open)',
    file: 'src/learner/tinker/learner.ts',
    search: '...(saved ? { loadFrom: { path: saved.state, optimizer: true } } : {}),',
    replace: '...(saved && saved.version < 0 ? { loadFrom: { path: saved.state, optimizer: true } } : {}),',
    tests: ['test/learner/tinker/learner.test.ts', TINKER_TRAIN],
  },
  {
    name: 'torn-line',
    kind: 'tolerate a torn line: resume appends the missing rounds.jsonl line after it instead of rewriting (run-folder.ts)',
    file: 'src/train/run-folder.ts',
    search: 'if (kept.length !== rows.length || kept.some((r, i) => r !== rows[i])) writeJsonLines(p, kept);',
    replace: 'for (const r of kept) if (!rows.includes(r)) appendJsonLine(p, r);',
    tests: [RUN_FOLDER],
  },
  {
    name: 'lock-off',
    kind: 'disable the lock: a run folder is taken whoever holds it (eval/run.ts lockRunFolder)',
    file: 'src/eval/run.ts',
    search: 'export function lockRunFolder(dir: string): () => void {\n',
    replace: 'export function lockRunFolder(dir: string): () => void {\n  if (dir) return () => {};\n',
    tests: [RUN_FOLDER],
  },
];

const REPO = resolve(import.meta.dirname, '..');
/** what the copy leaves out: made by builds and runs, or too big and not read by the tests */
const SKIP = new Set([
  '.git',
  'node_modules',
  'dist',
  'runs',
  'test-results',
  'test-results.json',
  '.seal-cache',
]);
/** one test run's limit: a break that hangs a test (a skipped seq id) ends by the tests' own timeouts */
const RUN_LIMIT_MS = 20 * 60_000;

function usage(message: string): never {
  console.error(`mutate: ${message}`);
  process.exit(2);
}

function parseArgs(argv: readonly string[]): { only: string[] | null; list: boolean } {
  let only: string[] | null = null;
  let list = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--list') list = true;
    else if (a === '--only') {
      const v = argv[++i];
      if (!v) usage('--only needs a comma-separated list of break names');
      only = v.split(',').filter(Boolean);
    } else usage(`unknown argument ${a}; use --only NAMES or --list`);
  }
  return { only, list };
}

/** every search string is in its file exactly once, or the list is out of date */
function checkBreaks(breaks: readonly Break[]): void {
  const problems: string[] = [];
  for (const b of breaks) {
    const path = join(REPO, b.file);
    if (!existsSync(path)) {
      problems.push(`${b.name}: ${b.file} does not exist`);
      continue;
    }
    const n = readFileSync(path, 'utf8').split(b.search).length - 1;
    if (n !== 1) problems.push(`${b.name}: the search string is in ${b.file} ${n} times, not once`);
    for (const t of b.tests) if (!existsSync(join(REPO, t))) problems.push(`${b.name}: no test file ${t}`);
  }
  if (problems.length > 0)
    usage(`the break list does not match the code; update bench/mutate.ts:\n  ${problems.join('\n  ')}`);
}

/** the repository's files in a temporary folder, node_modules linked */
function scratchCopy(): string {
  const dir = mkdtempSync(join(tmpdir(), 'seal-mutate-'));
  // readable by all, as a checkout is: the permission test runs its seal as an unprivileged user
  chmodSync(dir, 0o755);
  for (const entry of readdirSync(REPO)) {
    if (SKIP.has(entry)) continue;
    cpSync(join(REPO, entry), join(dir, entry), { recursive: true });
  }
  symlinkSync(realpathSync(join(REPO, 'node_modules')), join(dir, 'node_modules'), 'dir');
  return dir;
}

/** vitest on `files` in `dir`: whether every test passed, and how long it took */
function runTests(
  dir: string,
  files: readonly string[],
): Promise<{ passed: boolean; seconds: number; tail: string }> {
  const t0 = Date.now();
  // the shared BFCL folder beside the repository, which the copy is not beside
  const shared = join(REPO, '..', 'shared', 'bfcl-v3');
  const env = {
    ...process.env,
    ...(existsSync(shared) && !process.env.SEAL_SHARED_BFCL ? { SEAL_SHARED_BFCL: shared } : {}),
  };
  return new Promise((done) => {
    const child = spawn('npx', ['vitest', 'run', ...files], { cwd: dir, env, detached: true });
    let out = '';
    const keep = (b: Buffer) => {
      out = (out + b.toString()).slice(-4000);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    const timer = setTimeout(() => {
      out += '\n(mutate: the run exceeded its limit and was stopped)';
      if (child.pid) process.kill(-child.pid, 'SIGKILL');
    }, RUN_LIMIT_MS);
    child.on('exit', (code) => {
      clearTimeout(timer);
      done({ passed: code === 0, seconds: (Date.now() - t0) / 1000, tail: out });
    });
  });
}

function table(rows: readonly (readonly string[])[]): string {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  return rows
    .map((r) =>
      r
        .map((x, c) => x.padEnd(widths[c]!))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

async function main(): Promise<void> {
  const { only, list } = parseArgs(process.argv.slice(2));
  const breaks = only ? BREAKS.filter((b) => only.some((o) => b.name.includes(o))) : BREAKS;
  if (breaks.length === 0) usage(`no break matches --only ${only?.join(',')}; --list shows them`);
  checkBreaks(BREAKS);
  if (list) {
    console.log(
      table([['name', 'tests', 'break'], ...breaks.map((b) => [b.name, b.tests.join(' '), b.kind])]),
    );
    return;
  }
  const dir = scratchCopy();
  console.error(`mutate: scratch copy in ${dir}`);
  try {
    const files = [...new Set(breaks.flatMap((b) => b.tests))];
    console.error(`mutate: control run of ${files.length} test files on the unbroken copy`);
    const control = await runTests(dir, files);
    if (!control.passed) {
      console.error(control.tail);
      console.error(
        'mutate: the tests fail on the unbroken copy; a break cannot be told from that. Fix them first.',
      );
      process.exitCode = 2;
      return;
    }
    console.error(`mutate: control passed in ${control.seconds.toFixed(0)} s`);
    const results: { b: Break; caught: boolean; seconds: number }[] = [];
    for (const b of breaks) {
      const path = join(dir, b.file);
      const original = readFileSync(path, 'utf8');
      writeFileSync(
        path,
        original.replace(b.search, () => b.replace),
      );
      console.error(`mutate: ${b.name} (${b.tests.join(' ')}) ...`);
      const r = await runTests(dir, b.tests);
      writeFileSync(path, original);
      results.push({ b, caught: !r.passed, seconds: r.seconds });
      console.error(`mutate: ${b.name}: ${r.passed ? 'ESCAPED' : 'caught'} (${r.seconds.toFixed(0)} s)`);
    }
    const caught = results.filter((r) => r.caught).length;
    console.log(
      table([
        ['break', 'result', 's', 'kind'],
        ...results.map((r) => [
          r.b.name,
          r.caught ? 'caught' : 'ESCAPED',
          r.seconds.toFixed(0),
          r.b.kind + (r.b.note && !r.caught ? ` (${r.b.note})` : ''),
        ]),
      ]),
    );
    console.log(`caught ${caught}/${results.length}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
