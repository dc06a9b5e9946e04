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
import { join, relative, resolve } from 'node:path';

interface Break {
  /** short name, for --only and the table */
  readonly name: string;
  /** the kind of mistake it stands for */
  readonly kind: string;
  /**
   * the promise it breaks: `docs/PAGE.md: "the sentence"`, quoted from the page (whitespace aside;
   * `...` leaves out words between two quoted parts); the run stops when the page no longer says it
   */
  readonly claim: string;
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
const OFF_POLICY = 'test/train/tinker-off-policy.test.ts';
const USAGE = 'test/train/tinker-usage.test.ts';
const AUTH = 'test/tinker/auth.test.ts';
const BAD_ROLLOUT = 'test/learner/tinker/bad-rollout.test.ts';
const CHECKPOINTS = 'test/tinker/checkpoints.test.ts';
const CHECKPOINTS_CLI = 'test/tinker/checkpoints-cli.test.ts';
const HOSTILE = 'test/tinker/download-hostile.test.ts';
const DOWNLOAD_CLI = 'test/tinker/download-cli.test.ts';
const CONVERT_CLI = 'test/tinker/checkpoints-convert.test.ts';
const PEFT = 'test/tinker/peft.test.ts';

export const BREAKS: readonly Break[] = [
  {
    name: 'sign-wire',
    kind: 'flip a sign: advantages negated between the datums and the wire (wireDatum)',
    claim:
      'docs/commands/train.md: "rollouts are rendered in the model family\'s chat format ... sampled by the service, and trained with Tinker\'s `ppo` loss on exactly the sampled tokens"',
    file: 'src/learner/tinker/learner.ts',
    search: '...(f.advantages ? { advantages: f.advantages.data } : {}),',
    replace: '...(f.advantages ? { advantages: f.advantages.data.map((a) => -a) } : {}),',
    tests: [DATUMS],
  },
  {
    name: 'mask-shift',
    kind: 'shifted mask: a token trained when the token before it was (policyDatums)',
    claim:
      'docs/commands/train.md: "Each step of a rollout is the sampler\'s prompt ids and completion ids; ... so one forward pass gives every completion the logprobs it was sampled with"',
    file: 'src/learner/tinker/seal-datums.ts',
    search: 'if (!(d.weights[t]! > 0)) {',
    replace: 'if (!(d.weights[t - 1]! > 0)) {',
    tests: [DATUMS],
  },
  {
    name: 'normaliser',
    kind: 'wrong normaliser: advantages over N + 1 trained tokens (policyDatums)',
    claim:
      'docs/tinker-protocol.md: "Losses are sums over tokens on every server; normalise through the advantages or weights."',
    file: 'src/learner/tinker/seal-datums.ts',
    search: 'advantages.push(a / n);',
    replace: 'advantages.push(a / (n + 1));',
    tests: [DATUMS],
  },
  {
    name: 'kl-dropped',
    kind: 'dropped KL: the k3 term not folded into the advantages (policyDatums)',
    claim: 'docs/tinker-protocol.md: "The server has no KL term: fold one into the advantages."',
    file: 'src/learner/tinker/seal-datums.ts',
    search: 'a += klAdvantage(q, b, loss.klCoef);',
    replace: 'a += 0 * klAdvantage(q, b, loss.klCoef);',
    tests: [DATUMS],
  },
  {
    name: 'retry-dropped',
    kind: 'drop a retry: a 429 answer is not sent again (http.ts shouldRetry)',
    claim: 'docs/tinker-protocol.md: "| 429 | waits `retry-after-ms` ... else backs off."',
    file: 'src/tinker/http.ts',
    search: 'return s === 408 || s === 409 || s === 429 || s >= 500;',
    replace: 'return s === 408 || s === 409 || s >= 500;',
    tests: TINKER_CLIENT,
  },
  {
    name: 'retry-after',
    kind: 'Retry-After ignored: the backoff instead of the wait the server asked for (http.ts)',
    claim:
      'docs/tinker-protocol.md: "waits `retry-after-ms` (milliseconds; it wins when both are given), else `Retry-After` (seconds, or an HTTP date)"',
    file: 'src/tinker/http.ts',
    search: 'waitMs = retryAfterMs(answer.headers, this.now) ?? this.backoffMs(retries + 1);',
    replace: 'waitMs = this.backoffMs(retries + 1);',
    tests: TINKER_CLIENT,
  },
  {
    name: 'seq-skip',
    kind: 'skip a seq id: the third training request of a model takes seq id 4 (client.ts takeSeq)',
    claim:
      'docs/tinker-protocol.md: "takes the next `seq_id` when it is *called*, from 1, and none is ever skipped"',
    file: 'src/tinker/client.ts',
    search: 'return this.seq++;',
    replace: 'return this.seq === 3 ? (this.seq += 2) - 1 : this.seq++;',
    tests: TINKER_CLIENT,
  },
  {
    name: 'idempotency-reuse',
    kind: 'reuse an idempotency key: every request sent under the same key (http.ts)',
    claim:
      'docs/tinker-protocol.md: "resends the same body with the same idempotency key (a training request keeps its `seq_id`, so the server runs it once)"',
    file: 'src/tinker/http.ts',
    search: 'export function newIdempotencyKey(): string {\n',
    replace: "export function newIdempotencyKey(): string {\n  if (randomUUID) return 'seal-retry-same';\n",
    tests: TINKER_CLIENT,
  },
  {
    name: 'eval-base',
    kind: 'seal eval --policy tinker --model CKPT samples the base model, not the checkpoint (eval-tinker.ts)',
    claim:
      'docs/commands/eval.md: "`--policy tinker --model NAME_OR_PATH` evaluates a base model, a `tinker://.../sampler_weights/...` path, or a `seal train --learner tinker` checkpoint folder through Tinker sampling"',
    file: 'src/cli/eval-tinker.ts',
    search: 'return { sampler: { modelPath: saved.sampler }, base: saved.baseModel, trained:',
    replace: 'return { sampler: { baseModel: saved.baseModel }, base: saved.baseModel, trained:',
    tests: [TINKER_TRAIN],
    note: 'caught only where the test server samples by weights',
  },
  {
    name: 'resume-no-load',
    kind: 'skip load_weights on resume: a resumed Tinker run starts from the base (learner.ts open)',
    claim:
      'docs/recipes/tinker-hosted.md: "It creates a new model on the service whose first request is `load_weights` of the last round\'s saved state (weights and Adam state), then carries on."',
    file: 'src/learner/tinker/learner.ts',
    search: '...(saved ? { loadFrom: { path: saved.state, optimizer: true } } : {}),',
    replace: '...(saved && saved.version < 0 ? { loadFrom: { path: saved.state, optimizer: true } } : {}),',
    tests: ['test/learner/tinker/learner.test.ts', TINKER_TRAIN],
  },
  {
    name: 'torn-line',
    kind: 'tolerate a torn line: resume appends the missing rounds.jsonl line after it instead of rewriting (run-folder.ts)',
    claim:
      'docs/run-folder.md: "a `rounds.jsonl` line that was not appended (or was torn by the kill) is restored from `state.json`"',
    file: 'src/train/run-folder.ts',
    search: 'if (kept.length !== rows.length || kept.some((r, i) => r !== rows[i])) writeJsonLines(p, kept);',
    replace: 'for (const r of kept) if (!rows.includes(r)) appendJsonLine(p, r);',
    tests: [RUN_FOLDER],
  },
  {
    name: 'lock-off',
    kind: 'disable the lock: a run folder is taken whoever holds it (eval/folder.ts lockRunFolder)',
    claim:
      'docs/run-folder.md: "A second `seal train` (a new run into the same `--out`, or a second `--resume`) is refused while the first runs."',
    file: 'src/eval/folder.ts',
    search: 'export function lockRunFolder(dir: string): () => void {\n',
    replace: 'export function lockRunFolder(dir: string): () => void {\n  if (dir) return () => {};\n',
    tests: [RUN_FOLDER],
  },
  {
    name: 'offpolicy-resume',
    kind: 'an off-policy resume samples the uncommitted round from the last checkpoint, not the weights it was sampled from (loop.ts samplerOf)',
    claim:
      'docs/tinker-protocol.md: "so a run killed before then samples the round again from the same weights on resume"',
    file: 'src/train/loop.ts',
    search: 'return state.nextSampler ?? { checkpoint: state.checkpoint, version: ctx.learner.version };',
    replace: 'return { checkpoint: state.checkpoint, version: ctx.learner.version };',
    tests: [OFF_POLICY],
  },
  {
    name: 'save-awaited',
    kind: "a round's checkpoint sent only after its step's result: a clock tick more a round (loop.ts learnRound)",
    claim:
      'docs/tinker-protocol.md: "sends a round\'s `forward_backward` chunks, its `optim_step` and the checkpoint\'s `save_weights` and `save_weights_for_sampler` back to back and awaits them together"',
    file: 'src/train/loop.ts',
    search: 'if (pass === passes - 1 && learner.queuesCalls) {',
    replace: 'if (pass === passes - 1 && learner.queuesCalls && round < 0) {',
    tests: ['test/train/tinker-clock.test.ts'],
  },
  {
    name: 'prefill-ahead-lost',
    kind: 'KL prefills started ahead are never used: each is sent again when the pass comes (learner.ts baseLogprobs)',
    claim:
      'docs/tinker-protocol.md: "The KL prefills of a group whose rewards differ start as soon as its last rollout ends, while the rest of the round still samples"',
    file: 'src/learner/tinker/learner.ts',
    search: 'const p = this.prefills.get(key);',
    replace: "const p = this.prefills.get(key.concat('!'));",
    tests: ['test/learner/tinker/learner.test.ts'],
  },
  // ---- issue 43: the breaks an audit found no test caught -------------------------------------
  {
    name: 'offpolicy-interface',
    kind: 'the round sampled ahead shows the interface from before the last diagnosis (loop.ts runRounds)',
    claim:
      'docs/tinker-protocol.md: "With N at or above `passes`, round r+1 samples while round r trains, from the sampler weights round r-1\'s checkpoint saved ... and through the interface round r\'s diagnosis made"',
    file: 'src/train/loop.ts',
    search: 'const started = sampleRound(ctx, plan, round + 1, nextTasks, next, before);',
    replace: 'const started = sampleRound(ctx, plan, round + 1, nextTasks, state.interface, before);',
    tests: [OFF_POLICY],
  },
  {
    name: 'tar-dotdot',
    kind: "a member path with '..' after its first part accepted (tar.ts safePath)",
    claim:
      'docs/commands/checkpoints.md: "unpacks it into `--out/raw/` (`--out` new or empty; links, devices and paths outside the folder are refused)"',
    file: 'src/util/tar.ts',
    search: "parts.includes('..')",
    replace: "parts[0] === '..'",
    tests: [HOSTILE, CHECKPOINTS],
  },
  {
    name: 'lora-b-rank',
    kind: "a lora_B of another rank than the config's accepted (adapter.ts checkLoraAdapter)",
    claim:
      'docs/commands/checkpoints.md: "whose tensors pair up as `lora_A` [r, in] and `lora_B` [out, r] of the config\'s rank"',
    file: 'src/tinker/adapter.ts',
    search: 'if (rA !== r || rB !== r)',
    replace: 'if (rA !== r)',
    tests: [HOSTILE, CHECKPOINTS],
  },
  {
    name: 'safetensors-trailing',
    kind: 'bytes after the last tensor accepted (adapter.ts readSafetensorsHeader)',
    claim:
      'docs/commands/checkpoints.md: "whose header is read against the file (each tensor\'s dtype and shape fill exactly its byte range, the ranges tile the data)"',
    file: 'src/tinker/adapter.ts',
    search: 'if (at !== dataLen)',
    replace: 'if (at > dataLen)',
    tests: [HOSTILE, CHECKPOINTS],
  },
  {
    name: 'location-as-is',
    kind: "a 302's relative Location taken as the URL as it is (checkpoints.ts checkpointArchiveUrl)",
    claim:
      'docs/tinker-protocol.md: "a 302 read without following it, a relative `Location` read from the archive route\'s URL"',
    file: 'src/tinker/checkpoints.ts',
    search: 'url: new URL(location, transport.url(archiveRoute)).toString(),',
    replace: 'url: location,',
    tests: [CHECKPOINTS],
  },
  {
    name: 'jwt-full-life',
    kind: 'a short-lived JWT bought again only when it expires, not at half its life (auth.ts)',
    claim:
      'docs/tinker-protocol.md: "bought again a minute before its `exp` (or at half its life, if shorter; the payload is parsed, never run)"',
    file: 'src/tinker/auth.ts',
    search: ': Math.max(issued, expires - Math.min(REFRESH_MARGIN_MS, (expires - issued) / 2));',
    replace: ': expires;',
    tests: [AUTH],
  },
  {
    name: 'jwt-rebuy-unbounded',
    kind: 'a JWT bought again on every 401, also when the fresh one is refused (http.ts send)',
    claim: 'docs/tinker-protocol.md: "and once more when a request is answered 401"',
    file: 'src/tinker/http.ts',
    search: 'answer.status === 401 && !refreshed && (await',
    replace: 'answer.status === 401 && (await',
    tests: [AUTH],
  },
  {
    name: 'auth-403',
    kind: 'a 403 not an auth error: exit 1 instead of 2 (http.ts statusError)',
    claim: 'docs/tinker-protocol.md: "a service that refuses the key (401 / 403) ends with exit 2"',
    file: 'src/tinker/http.ts',
    search: 'if (status === 401 || status === 403) {',
    replace: 'if (status === 401) {',
    tests: ['test/tinker/first-contact.test.ts'],
  },
  {
    name: 'usage-passes',
    kind: "the tokens a round's passes read (and their cost) count one pass whatever --passes says (loop.ts learnRound)",
    claim:
      'docs/recipes/tinker-hosted.md: "prompt and KL-prefill tokens at the prefill price, completions at the sample price, the tokens each training pass reads at the train price"',
    file: 'src/train/loop.ts',
    search: 'const read = steps * (',
    replace: 'const read = 1 * (',
    tests: [USAGE],
  },
  {
    name: 'kl-cumulative',
    kind: "a round's KL prefill tokens counted from the start of the run, not the round (loop.ts roundUsage)",
    claim:
      'docs/recipes/tinker-hosted.md: "prefills every training sequence on it once per round for the KL term; the log prints its token cost each round"',
    file: 'src/train/loop.ts',
    search: 'klPrefillTokens: after && before ? after.klPrefillTokens - before.klPrefillTokens : 0,',
    replace: 'klPrefillTokens: after ? after.klPrefillTokens : 0,',
    tests: [USAGE],
  },
  {
    name: 'sample-400',
    kind: 'an HTTP 400 on the sample request stops the run instead of ending the rollout (policy/tinker.ts)',
    claim:
      'docs/tinker-protocol.md: "A sample the service refuses for good (a failure answer or a 400 for that request: most often a prompt past the model\'s context)"',
    file: 'src/policy/tinker.ts',
    search: "(e.kind === 'request_failed' || (e.kind === 'http' && e.status === 400))",
    replace: "e.kind === 'request_failed'",
    tests: [BAD_ROLLOUT, USAGE],
  },
  {
    name: 'context-exact',
    kind: 'a prompt of exactly max_context_length tokens sent (policy/tinker.ts complete)',
    claim:
      'docs/tinker-protocol.md: "a prompt that `get_server_capabilities`\' `max_context_length` says the service would refuse (stopped before it is sent; the completion is also capped to the room left)"',
    file: 'src/policy/tinker.ts',
    search: 'if (prompt.length >= context)',
    replace: 'if (prompt.length > context)',
    tests: [BAD_ROLLOUT],
  },
  {
    name: 'refused-ends-round',
    kind: 'a refused sample ends the round (the run) instead of its rollout (loop.ts sampleRound)',
    claim: 'docs/tinker-protocol.md: "**A bad rollout does not stop a round.**"',
    file: 'src/train/loop.ts',
    search: "onSampleFailure: 'end',",
    replace: "onSampleFailure: 'throw',",
    tests: [USAGE],
  },
  {
    name: 'lr-file-replaced',
    kind: "an lr set in a config file replaced by the LoRA rule; only a flag's kept (config.ts resolveConfig)",
    claim: 'docs/commands/train.md: "a YAML file of the same keys with `--config`, flags override it"',
    file: 'src/train/config.ts',
    search: 'tinker && overrides.lr === undefined ? loraDefaultLr(',
    replace: 'tinker && (flags as { lr?: unknown }).lr === undefined ? loraDefaultLr(',
    tests: ['test/tinker/lora-lr.test.ts', USAGE],
  },
  {
    name: 'lr-dropped',
    kind: "the LoRA rate and its source dropped from run.json's learner record (train/tinker.ts)",
    claim:
      'docs/recipes/tinker-hosted.md: "`run.json`\'s `learner.lr` and the dry run say which rate applies and why"',
    file: 'src/train/tinker.ts',
    search: '        lr: lrChoice(c),\n',
    replace: '',
    tests: [USAGE],
  },
  // ---- beyond the audit's list ----------------------------------------------------------------
  {
    name: 'location-api-root',
    kind: "a 302's relative Location read from the API root instead of the archive route's URL (checkpoints.ts)",
    claim:
      'docs/commands/checkpoints.md: "its redirects are followed, a relative one from the URL that gave it"',
    file: 'src/tinker/checkpoints.ts',
    search: 'url: new URL(location, transport.url(archiveRoute)).toString(),',
    replace: "url: new URL(location, transport.url('')).toString(),",
    tests: [CHECKPOINTS],
  },
  {
    name: 'tar-absolute',
    kind: 'an absolute member path unpacked under --out as if relative (tar.ts safePath)',
    claim:
      'docs/commands/checkpoints.md: "unpacks it into `--out/raw/` (`--out` new or empty; links, devices and paths outside the folder are refused)"',
    file: 'src/util/tar.ts',
    search: "raw.startsWith('/') || ",
    replace: '',
    tests: [HOSTILE],
  },
  {
    name: 'tar-symlink',
    kind: 'a symlink member unpacked as a file (tar.ts readTar)',
    claim:
      'docs/tinker-protocol.md: "unpacked (with `src/util/tar.ts`, refusing links and paths outside the folder)"',
    file: 'src/util/tar.ts',
    search: "if (type !== '0' && type !== '\\0' && type !== '7')",
    replace: "if (type !== '0' && type !== '\\0' && type !== '7' && type !== '2')",
    tests: [HOSTILE, CHECKPOINTS],
  },
  {
    name: 'dtype-bytes',
    kind: "a tensor's byte range not checked against its dtype and shape (adapter.ts)",
    claim: 'docs/commands/checkpoints.md: "each tensor\'s dtype and shape fill exactly its byte range"',
    file: 'src/tinker/adapter.ts',
    search: 'end - begin !== elements * width || ',
    replace: '',
    tests: [HOSTILE],
  },
  {
    name: 'html-answer',
    kind: 'an HTML page in place of the archive read as one (cli/checkpoints.ts download)',
    claim: 'docs/commands/checkpoints.md: "and a loop or an HTML page in place of the archive is refused"',
    file: 'src/cli/checkpoints.ts',
    search: "if (/\\btext\\/html\\b/i.test(res.headers.get('content-type') ?? ''))",
    replace: "if (res.status < 0 && /\\btext\\/html\\b/i.test(res.headers.get('content-type') ?? ''))",
    tests: [DOWNLOAD_CLI],
  },
  {
    name: 'out-left-behind',
    kind: 'a refused download leaves the half-written adapter folder behind (cli/checkpoints.ts download)',
    claim:
      'docs/commands/checkpoints.md: "A download whose archive cannot be unpacked leaves `--out` as it found it: not there, or empty"',
    file: 'src/cli/checkpoints.ts',
    search: 'if (made) rmSync(out, { recursive: true, force: true });',
    replace: "if (made && out === '') rmSync(out, { recursive: true, force: true });",
    tests: [DOWNLOAD_CLI],
  },
  {
    name: 'delete-without-yes',
    kind: 'delete acts without --yes (cli/checkpoints.ts)',
    claim: 'docs/commands/checkpoints.md: "`delete` without `--yes` only says what it would delete."',
    file: 'src/cli/checkpoints.ts',
    search: 'if (!flags.yes)',
    replace: 'if (!flags.yes && value === "")',
    tests: [CHECKPOINTS_CLI],
  },
  {
    name: 'out-not-empty',
    kind: 'download writes into a folder that is not empty (cli/checkpoints.ts)',
    claim: 'docs/commands/checkpoints.md: "an `--out` that is not new or empty"',
    file: 'src/cli/checkpoints.ts',
    search: '(!statSync(out).isDirectory() || readdirSync(out).length > 0)',
    replace: '!statSync(out).isDirectory()',
    tests: [CHECKPOINTS_CLI],
  },
  {
    name: 'max-lora-rank',
    kind: "--max-lora-rank printed as the adapter's rank, not one vLLM takes (cli/checkpoints.ts maxLoraRank)",
    claim:
      'docs/commands/checkpoints.md: "`--max-lora-rank` is the largest rank ... rounded up to one vLLM takes (1, 8, 16, 32, 64, 128, 256, 320 or 512)"',
    file: 'src/cli/checkpoints.ts',
    search: 'return VLLM_LORA_RANKS.find((r) => r >= rank);',
    replace: 'return Math.max(8, 2 ** Math.ceil(Math.log2(rank)));',
    tests: [CHECKPOINTS_CLI, CONVERT_CLI],
  },
  {
    name: 'lora-name',
    kind: "the LoRA's model name taken from the run id, not the checkpoint's name (cli/checkpoints.ts)",
    claim: 'docs/commands/checkpoints.md: "The LoRA\'s model name is the checkpoint\'s own name"',
    file: 'src/cli/checkpoints.ts',
    search: 'const name = parseTinkerPath(path).name;',
    replace: "const name = parseTinkerPath(path).runId.replace(/:/g, '-');",
    tests: [CHECKPOINTS_CLI],
  },
  {
    name: 'passes-ignored',
    kind: 'one learner pass a round whatever --passes says (loop.ts learnRound)',
    claim:
      'docs/commands/train.md: "`--passes N` takes N learner passes (forward-backward and optimiser step) over a round\'s batch"',
    file: 'src/train/loop.ts',
    search: 'const passes = datums.length > 0 || anchor.length > 0 ? c.passes : 0;',
    replace: 'const passes = datums.length > 0 || anchor.length > 0 ? 1 : 0;',
    tests: [USAGE],
  },
  {
    name: 'jwt-no-rebuy',
    kind: 'a 401 on a JWT not answered by buying a new one (http.ts send)',
    claim: 'docs/tinker-protocol.md: "and once more when a request is answered 401"',
    file: 'src/tinker/http.ts',
    search: 'answer.status === 401 && !refreshed && (await',
    replace: 'answer.status === 4010 && !refreshed && (await',
    tests: [AUTH],
  },
  {
    name: 'offpolicy-pruned',
    kind: 'the checkpoint the next round samples from pruned before that round commits (loop.ts commitRound)',
    claim:
      'docs/run-folder.md: "older ones are removed; with `--max-steps-off-policy`, the one the next round samples from stays until that round commits"',
    file: 'src/train/loop.ts',
    search: 'ctx.run.pruneCheckpoints([r.checkpoint, r.nextSampler?.checkpoint ?? null]);',
    replace: 'ctx.run.pruneCheckpoints([r.checkpoint]);',
    tests: [OFF_POLICY],
  },
  {
    name: 'should-retry-false',
    kind: 'x-should-retry: false ignored on a status otherwise resent (http.ts shouldRetry)',
    claim:
      'docs/tinker-protocol.md: "`x-should-retry: true` / `false` on any error answer | resent / not resent, whatever the status (the SDK\'s rule)"',
    file: 'src/tinker/http.ts',
    search: "if (said === 'false') return false;",
    replace: "if (said === 'no') return false;",
    tests: TINKER_CLIENT,
  },
  {
    name: 'retry-after-cap',
    kind: 'a retry-after-ms over 60 s waited out instead of the seconds form or the backoff (http.ts retryAfterMs)',
    claim: 'docs/tinker-protocol.md: "when 60 s or less; else backs off"',
    file: 'src/tinker/http.ts',
    search: 'Number.isFinite(ms) && ms >= 0 && ms <= 60_000) return ms;',
    replace: 'Number.isFinite(ms) && ms >= 0) return ms;',
    tests: TINKER_CLIENT,
  },
  {
    name: 'lock-stale-kept',
    kind: 'a lock left by a dead process is not taken over (eval/folder.ts lockRunFolder)',
    claim: 'docs/commands/eval.md: "a lock left by a killed run is taken over"',
    file: 'src/eval/folder.ts',
    search: 'owner !== process.pid && alive(owner))',
    replace: 'owner !== process.pid)',
    tests: [RUN_FOLDER],
  },
  // ---- the model families (issue 44) ------------------------------------------------------------
  {
    name: 'family-unparsed-ignored',
    kind: "a call the family's parser could not read is dropped, not the turn's parse error (formats/native.ts)",
    claim:
      'docs/renderer.md: "those give `unparsed` entries with their raw text and `ok: false`, never an exception. A rollout counts them as the turn\'s parse error"',
    file: 'src/agent/formats/native.ts',
    search: 'const unparsed = completion.unparsedToolCalls ?? [];',
    replace: 'const unparsed: readonly { raw: string }[] = [];',
    tests: ['test/agent/formats.test.ts'],
  },
  {
    name: 'family-auto-hf',
    kind: "--renderer auto ignores the cookbook's model table: every base model gets its HF template (render/open.ts)",
    claim:
      'docs/renderer.md: "`auto`, the default, takes the renderer the cookbook\'s model table recommends for `--base-model`"',
    file: 'src/render/open.ts',
    search:
      'return recommended !== undefined && availableRenderers().includes(recommended) ? recommended : HF_TEMPLATE;',
    replace: 'return HF_TEMPLATE;',
    tests: ['test/train/tinker-families.test.ts', 'test/learner/tinker/learner.test.ts'],
  },
  {
    name: 'family-llama-ok',
    kind: 'a Llama 3 completion cut off before <|eot_id|> read as a clean end (families/llama3.ts parse)',
    claim:
      'docs/renderer.md: "`ok` says the completion ended cleanly (its stop sequence, nothing malformed)"',
    file: 'src/render/families/llama3.ts',
    search:
      'if (!end) return { content: completion, reasoning: null, toolCalls: [], unparsed: [], ok: false };',
    replace:
      'if (!end) return { content: completion, reasoning: null, toolCalls: [], unparsed: [], ok: true };',
    tests: ['test/render/families/llama3.test.ts'],
  },
  {
    name: 'family-resume-renderer',
    kind: 'a Tinker run recorded before renderers resumes in the family format auto now picks (train/train.ts)',
    claim:
      'docs/commands/train.md: "A Tinker run recorded before the `renderer` setting existed continues as it started: with the model\'s Hugging Face template and the tools as text."',
    file: 'src/train/train.ts',
    search: 'return { ...c, renderer: HF_TEMPLATE };',
    replace: 'return c;',
    tests: ['test/learner/tinker/learner.test.ts'],
  },
  {
    name: 'pool-ignored',
    kind: 'a training pool read and checked, then not used: the whole training split is drawn (train/loop.ts)',
    claim:
      'docs/commands/train.md: "`--train-pool FILE` trains on the training tasks a file names, one id a line"',
    file: 'src/train/loop.ts',
    search: 'trainTasks: ctx.pool ? poolTasks(',
    replace: 'trainTasks: false ? poolTasks(',
    tests: ['test/train/pool.test.ts'],
  },
  {
    name: 'abstention-any-empty-turn',
    kind: 'a call made on a turn with nothing to call counted as holding back (bfcl/abstention.ts)',
    claim:
      'docs/commands/train.md: "every validation also counts, per category, the turns with nothing to call that the policy answered without a call"',
    file: 'src/bfcl/abstention.ts',
    search: "if (label === 'correct_abstention') c.abstained++;",
    replace: 'c.abstained++;',
    tests: ['test/train/pool.test.ts'],
  },
  {
    name: 'anchor-categories-dropped',
    kind: "the anchor's categories recorded but not passed to the demonstrations: all four are drawn (train/loop.ts)",
    claim:
      'docs/commands/train.md: "`--anchor-categories` keeps them to some categories (the recovery experiment\'s anchor holds the categories a habit does not touch and never shows the one reward is meant to change)"',
    file: 'src/train/loop.ts',
    search: 'await anchorData(learner, c.seed, round, c.anchorDemos, c.anchorCategories)',
    replace: 'await anchorData(learner, c.seed, round, c.anchorDemos)',
    tests: ['test/train/pool.test.ts'],
  },
  {
    name: 'eval-progress-silent',
    kind: 'the start and final evaluations run without a progress hook, as before (train/train.ts)',
    claim:
      'docs/commands/train.md: "The start and final evaluations report their progress too: on a terminal a live line (tasks done, tasks/s, ETA), in a log a line as each starts, every 30 s, and as it ends with the time it took"',
    file: 'src/train/train.ts',
    search: '(done, total) => hooks.evaluation?.({ which, done, total }),',
    replace: 'undefined,',
    tests: ['test/train/evaluations.test.ts'],
  },
  {
    name: 'eta-without-final',
    kind: "the round's ETA leaves out the final evaluation (cli/train-progress.ts)",
    claim:
      'docs/commands/train.md: "The round\'s ETA includes the final evaluation, at the pace of the run\'s latest evaluation"',
    file: 'src/cli/train-progress.ts',
    search: 'const eta = `${minutes(roundsMs + finalMs())}${finalLeft()}`;',
    replace: 'const eta = `${minutes(roundsMs)}`;',
    tests: ['test/train-progress.test.ts', 'test/train/evaluations.test.ts'],
  },
  {
    name: 'eval-progress-log-throttle',
    kind: 'a log gets an evaluation line on every task instead of every 30 s (cli/train-progress.ts)',
    claim: 'docs/commands/train.md: "in a log a line as each starts, every 30 s, and as it ends"',
    file: 'src/cli/train-progress.ts',
    search: 'if (force || t - lastLogged >= everyMs) {',
    replace: 'if (force || t - lastLogged >= 0) {',
    tests: ['test/train-progress.test.ts'],
  },
  {
    name: 'report-one-accuracy-line',
    kind: "the validations drawn in the test evaluations' series, one line a run again (report/data.ts)",
    claim:
      'docs/commands/report.md: "They score different tasks, so they are never joined into one line, and the last round\'s validation is drawn beside the final evaluation"',
    file: 'src/report/data.ts',
    search: 'return { test, validation: new Map(run.validation.map((v) => [v.round, v.summary])) };',
    replace:
      'for (const v of run.validation) if (!test.has(v.round)) test.set(v.round, v.summary);\n  return { test, validation: new Map() };',
    tests: ['test/report/report.test.ts'],
  },
  {
    name: 'report-series-unlabelled',
    kind: 'an accuracy series named without its split and size (report/data.ts)',
    claim: 'docs/commands/report.md: "two series per run, each named with its split and size"',
    file: 'src/report/data.ts',
    search: 'label: `${pages[i]!.name}: ${seriesSplit(which, run, points[i]![which])}`,',
    replace: 'label: pages[i]!.name,',
    tests: ['test/report/report.test.ts'],
  },
  {
    name: 'report-abstention-share',
    kind: "the abstention panel's share over the wrong denominator (report/data.ts)",
    claim:
      'docs/commands/report.md: "the share of turns with nothing to call that each validation answered without a call, per category"',
    file: 'src/report/data.ts',
    search: 'return a && a.turns > 0 ? a.abstained / a.turns : null;',
    replace: 'return a && a.turns > 0 ? a.abstained / (a.turns + 1) : null;',
    tests: ['test/report/report.test.ts'],
  },
  {
    name: 'eval-resume-split',
    kind: 'a resume into a folder made with another --split accepted: its summary and results then disagree (bfcl/eval.ts)',
    claim:
      'docs/commands/eval.md: "A folder holding a run with other settings is refused rather than mixed, and left as it was (exit code 2): another suite, `--split`"',
    file: 'src/bfcl/eval.ts',
    search: "  'split',\n",
    replace: '',
    tests: ['test/eval/eval.test.ts'],
  },
  {
    name: 'eval-resume-tinker-rendering',
    kind: "a Tinker evaluation's chat format not recorded, so a resume with another renderer or thinking mixes (cli/eval-policy.ts)",
    claim:
      'docs/commands/eval.md: "or, for `--policy tinker`, another chat format (`--renderer`, resolved) or `--thinking`"',
    file: 'src/cli/eval-policy.ts',
    search: "...('renderer' in chosen ? { renderer: chosen.renderer, thinking: chosen.thinking } : {}),",
    replace: '',
    tests: ['test/train/tinker.test.ts', 'test/eval/tau2-tinker.test.ts'],
  },
  {
    name: 'eval-force-ignored',
    kind: '--force accepted but the earlier run kept: the folder is refused (or resumed) instead of started over (bfcl/eval.ts)',
    claim:
      'docs/commands/eval.md: "`--force`: it removes the earlier run\'s `run.json`, `results.jsonl`, `bfcl_result.jsonl`, `summary.json` and `summary.md` and starts the folder over"',
    file: 'src/bfcl/eval.ts',
    search: 'if (options.force) startOver(outDir, RUN_FOLDER_FILES);',
    replace: '',
    tests: ['test/eval/eval.test.ts'],
  },
  {
    name: 'episodes-orphan-adopted',
    kind: "episodes.jsonl without its run.json adopted as the new run's: the orphan check looks for BFCL's results file (eval/episodes.ts)",
    claim: 'docs/tau2.md: "refusal of other settings and of `episodes.jsonl` without its `run.json`"',
    file: 'src/eval/episodes.ts',
    search: '{ resultsFile: EPISODES_FILE }',
    replace: "{ resultsFile: 'results.jsonl' }",
    tests: ['test/eval/tau2-cli.test.ts'],
  },
  {
    name: 'eval-orphan-results',
    kind: "results.jsonl without its run.json adopted as the new run's (eval/folder.ts)",
    claim:
      'docs/commands/eval.md: "A folder with `results.jsonl` (τ², memory and web search: `episodes.jsonl`) but no `run.json` is refused too."',
    file: 'src/eval/folder.ts',
    search: 'if (existsSync(join(dir, options.resultsFile)))',
    replace: 'if (false)',
    tests: ['test/eval/eval.test.ts'],
  },
  {
    name: 'compare-mixed-folder',
    kind: 'seal compare prints a folder whose summary and results disagree (report/compare.ts)',
    claim:
      'docs/commands/compare.md: "A folder whose `results.jsonl` disagrees with its `summary.json` (a task twice, more or fewer tasks, another score) mixes runs, and is refused with exit code 2, naming the folder."',
    file: 'src/report/compare.ts',
    search: 'checkAgreement(dirs[i]!, d, runs[i]!.summary);',
    replace: '',
    tests: ['test/eval/eval.test.ts'],
  },
  {
    name: 'compare-task-twice',
    kind: 'a task twice in results.jsonl not named as such (report/compare.ts)',
    claim:
      'docs/commands/compare.md: "A folder whose `results.jsonl` disagrees with its `summary.json` (a task twice"',
    file: 'src/report/compare.ts',
    search: 'if (seen.has(r.id))',
    replace: 'if (false)',
    tests: ['test/eval/eval.test.ts'],
  },
  {
    name: 'paired-file-order',
    kind: "tasks paired and resampled in the first results file's line order (eval/paired.ts)",
    claim:
      'docs/commands/compare.md: "The task-by-task numbers do not depend on the order of the lines in `results.jsonl`: tasks are paired and resampled in the order of their ids (`seal experiment` does the same)."',
    file: 'src/eval/paired.ts',
    search: '.sort(byCodeUnits)',
    replace: '',
    tests: ['test/eval/eval.test.ts'],
  },
  {
    name: 'suggest-half',
    kind: 'the "did you mean" distance threshold loosened from a third to a half (util/suggest.ts)',
    claim:
      'docs/commands/README.md: "those within a third of the longer name\'s length in edits (at least one)"',
    file: 'src/util/suggest.ts',
    search: 'Math.floor(Math.max(w.length, n.length) / 3)',
    replace: 'Math.floor(Math.max(w.length, n.length) / 2)',
    tests: ['test/util/suggest.test.ts'],
  },
  {
    name: 'suggest-known-length',
    kind: "the threshold measured on the known name's length, not the longer one's (util/suggest.ts)",
    claim:
      'docs/commands/README.md: "those within a third of the longer name\'s length in edits (at least one)"',
    file: 'src/util/suggest.ts',
    search: 'Math.floor(Math.max(w.length, n.length) / 3)',
    replace: 'Math.floor(n.length / 3)',
    tests: ['test/util/suggest.test.ts'],
  },
  {
    name: 'suggest-first-only',
    kind: 'of two names equally close, only the first suggested (util/suggest.ts)',
    claim: 'docs/commands/README.md: "with a "did you mean" naming the closest known names"',
    file: 'src/util/suggest.ts',
    search: "names.join(' or ')",
    replace: 'names[0]',
    tests: ['test/util/suggest.test.ts'],
  },
  {
    name: 'suggest-config-dropped',
    kind: 'an unknown config key reported without its suggestion (util/settings.ts)',
    claim:
      'docs/commands/README.md: "A mistyped command, flag or config key is an error (exit code 2) with a "did you mean""',
    file: 'src/util/settings.ts',
    search: 'didYouMean(k, this.keys)',
    replace: "''",
    tests: ['test/cli-usage.test.ts'],
  },
  {
    name: 'suggest-keys-list-some',
    kind: 'the list of keys left out when any unknown key (not every one) had a suggestion (util/settings.ts)',
    claim:
      'docs/commands/README.md: "Nothing is guessed when no name is that close; a config file then gets the list of every key."',
    file: 'src/util/settings.ts',
    search: 'issue.keys.every((k) => suggest(k, this.keys).length > 0)',
    replace: 'issue.keys.some((k) => suggest(k, this.keys).length > 0)',
    tests: ['test/cli-usage.test.ts'],
  },
  {
    name: 'help-hint-group-path',
    kind: "a command of a group pointed at its group's help, not its own (cli/program.ts)",
    claim:
      'docs/commands/README.md: "The error ends with one line naming the command\'s `--help`, not the whole help."',
    file: 'src/cli/program.ts',
    search: `pointToHelpAfterErrors(sub, \`\${path} \${sub.name()}\`);`,
    replace: 'pointToHelpAfterErrors(sub, path);',
    tests: ['test/cli-usage.test.ts'],
  },
  {
    name: 'docs-flags-top-level-only',
    kind: 'npm run docs:flags rewrites only the docs directly under docs/, not docs/commands/ (scripts/docs-flags.ts)',
    claim:
      'docs/development.md: "after changing a flag, its help or its default, `npm run docs:flags` rewrites them"',
    file: 'scripts/docs-flags.ts',
    search: "readdirSync('docs', { recursive: true, encoding: 'utf8' })",
    replace: "readdirSync('docs', { encoding: 'utf8' })",
    tests: ['test/docs-flags.test.ts'],
  },
  {
    name: 'docs-flags-no-write',
    kind: 'npm run docs:flags says it rewrote a table but leaves the file as it was (scripts/docs-flags.ts)',
    claim:
      'docs/development.md: "after changing a flag, its help or its default, `npm run docs:flags` rewrites them"',
    file: 'scripts/docs-flags.ts',
    search: 'writeFileSync(path, after);',
    replace: '',
    tests: ['test/docs-flags.test.ts'],
  },
  {
    name: 'flag-table-no-default',
    kind: 'a flag table row printed without its default (cli/flag-docs.ts)',
    claim:
      'docs/development.md: "after changing a flag, its help or its default, `npm run docs:flags` rewrites them, and `test/docs-flags.test.ts` fails until it has"',
    file: 'src/cli/flag-docs.ts',
    search: 'cell(help.optionDescription(o))',
    replace: 'cell(o.description)',
    tests: ['test/docs-flags.test.ts'],
  },
  {
    name: 'flag-table-row-dropped',
    kind: "a command's first flag left out of its table (cli/flag-docs.ts)",
    claim:
      'docs/development.md: "after changing a flag, its help or its default, `npm run docs:flags` rewrites them, and `test/docs-flags.test.ts` fails until it has"',
    file: 'src/cli/flag-docs.ts',
    search: 'const rows = flagsOf(cmd)',
    replace: 'const rows = flagsOf(cmd).slice(1)',
    tests: ['test/docs-flags.test.ts'],
  },
  {
    name: 'flag-table-minus-unknown',
    kind: 'a table "less" a command there is not made as the whole table, not refused (cli/flag-docs.ts)',
    claim: 'docs/development.md: "`test/docs-flags.test.ts` fails until it has"',
    file: 'src/cli/flag-docs.ts',
    search: 'if (!cmd || (minusPath !== undefined && !minus))',
    replace: 'if (!cmd)',
    tests: ['test/docs-flags.test.ts'],
  },
  {
    name: 'eval-legacy-refused',
    kind: 'a folder of an earlier build (no policy recorded) refused for the settings it could not record (eval/folder.ts)',
    claim:
      'docs/commands/eval.md: "A folder made by an earlier build (its `run.json` names no `policy`) is checked on the settings it records."',
    file: 'src/eval/folder.ts',
    search: "const legacy = !('policy' in before);",
    replace: 'const legacy = false;',
    tests: ['test/eval/eval.test.ts'],
  },
  // ---- the LoRA export and the renderers' edges (issue 54, items 8-10) ----------------------------
  {
    name: 'lora-mxfp4-refused',
    kind: "gpt-oss's released MXFP4 expert weights not recognised: its adapter refused (peft/convert.ts)",
    claim:
      'docs/commands/checkpoints.md: "The released checkpoints keep those in MXFP4 ... their expert count and the [rows, inputs] they imply are checked against the adapter\'s"',
    file: 'src/tinker/peft/convert.ts',
    search: 'const packed = fused.found ? undefined : mxfp4Experts(base, fusedTarget);',
    replace: 'const packed = fused.found || base ? undefined : mxfp4Experts(base, fusedTarget);',
    tests: [PEFT],
  },
  {
    name: 'lora-mxfp4-shape',
    kind: "MXFP4 blocks of another width or height than the adapter's LoRA accepted (peft/convert.ts)",
    claim:
      'docs/commands/checkpoints.md: "their expert count and the [rows, inputs] they imply are checked against the adapter\'s"',
    file: 'src/tinker/peft/convert.ts',
    search: 'if (packed.rows !== undefined && (packed.rows !== rows || packed.inputs !== inA))',
    replace: 'if (packed.rows !== undefined && packed.rows < 0)',
    tests: [PEFT],
  },
  {
    name: 'lora-family-names-ignored',
    kind: "without a base model, gpt-oss's adapter converted by the standard names (attn kept) (peft/convert.ts)",
    claim: 'docs/commands/checkpoints.md: "It never converts by another family\'s names."',
    file: 'src/tinker/peft/convert.ts',
    search: 'const told = base ? undefined : familyOfPaths(pairs.map((p) => p.path));',
    replace: 'const told = base || true ? undefined : familyOfPaths(pairs.map((p) => p.path));',
    tests: [PEFT],
  },
  {
    name: 'lora-family-name-clash',
    kind: "an adapter whose names are gpt-oss's converted under a Qwen3 name's family, not refused (peft/convert.ts)",
    claim:
      'docs/commands/checkpoints.md: "when the name given is another family\'s, the conversion is refused (exit 2)"',
    file: 'src/tinker/peft/convert.ts',
    search: '    if (baseName !== undefined)\n',
    replace: "    if (baseName === '')\n",
    tests: [PEFT, CONVERT_CLI],
  },
  {
    name: 'lora-head-guessed',
    kind: 'the output head mapped to lm_head without the base model, a guess wrong for tied models (peft/convert.ts)',
    claim:
      'docs/commands/checkpoints.md: "So an adapter that trains the head (Tinker trains it by default) needs `--base-model-dir`; without it the conversion is refused (exit 2)."',
    file: 'src/tinker/peft/convert.ts',
    search: 'if (trainsHead && !base)',
    replace: 'if (trainsHead && !base && baseName === "")',
    tests: [PEFT],
  },
  {
    name: 'lora-tie-config-ignored',
    kind: "config.json's tie_word_embeddings ignored: the weights alone decide lm_head or embed_tokens (peft/convert.ts)",
    claim:
      'docs/commands/checkpoints.md: "Only the model tells which: its `config.json`\'s `tie_word_embeddings` (a vision model\'s in `text_config`), else whether its weights hold an `lm_head`."',
    file: 'src/tinker/peft/convert.ts',
    search: '? (tiesEmbeddings(base.config) ??',
    replace: '? (undefined ??',
    tests: [PEFT, CONVERT_CLI],
  },
  {
    name: 'lora-base-name-null',
    kind: 'base_model_name_or_path left null when only the base folder is given (peft/convert.ts)',
    claim:
      'docs/commands/checkpoints.md: "with none of these, the `_name_or_path` of the folder\'s `config.json`, else the folder\'s absolute path"',
    file: 'src/tinker/peft/convert.ts',
    search: 'baseName ?? (base ? (nonEmpty(base.config._name_or_path) ?? resolve(base.source)) : undefined);',
    replace: 'baseName;',
    tests: [PEFT, CONVERT_CLI],
  },
  {
    name: 'lora-expert-count-key',
    kind: "gpt-oss's and Mixtral's expert count (num_local_experts) not read from config.json (peft/families.ts)",
    claim:
      'docs/commands/checkpoints.md: "The number of experts must be the model\'s (`num_experts`, `num_local_experts`, `n_routed_experts` or `moe_num_experts` in its config.json"',
    file: 'src/tinker/peft/families.ts',
    search:
      "for (const key of ['num_experts', 'num_local_experts', 'n_routed_experts', 'moe_num_experts']) {",
    replace: "for (const key of ['num_experts', 'n_routed_experts', 'moe_num_experts']) {",
    tests: [PEFT],
  },
  {
    name: 'lora-expert-count-text-config',
    kind: "a vision MoE model's expert count (in text_config) not read (peft/families.ts expertCount)",
    claim:
      'docs/commands/checkpoints.md: "or in its `text_config`; else the first dimension of a fused 3-D expert weight"',
    file: 'src/tinker/peft/families.ts',
    search:
      "for (const c of [config, config.text_config as Record<string, unknown> | undefined])\n    if (c && typeof c === 'object')\n",
    replace: "for (const c of [config])\n    if (c && typeof c === 'object')\n",
    tests: [PEFT],
  },
  {
    name: 'lora-expert-count-fused',
    kind: "a fused 3-D expert weight's expert count not compared with the adapter's stacks (peft/convert.ts)",
    claim: 'docs/commands/checkpoints.md: "else the first dimension of a fused 3-D expert weight"',
    file: 'src/tinker/peft/convert.ts',
    search: 'if (fused.found && fused.shape && fused.shape[0] !== count)',
    replace: 'if (fused.found && fused.shape && fused.shape[0] < 0)',
    tests: [PEFT],
  },
  {
    name: 'lora-base-shape',
    kind: "a base model weight of another shape than the adapter's LoRA accepted (peft/convert.ts)",
    claim: 'docs/commands/checkpoints.md: "the shards\' headers give the shapes, which are compared too"',
    file: 'src/tinker/peft/convert.ts',
    search:
      'if (found.shape?.length === 2 && (found.shape[0] !== B.shape[0] || found.shape[1] !== A.shape[1]))',
    replace: 'if (found.shape?.length === 2 && found.shape[0] < 0)',
    tests: [PEFT],
  },
  {
    name: 'lora-convert-base-ignored',
    kind: 'seal checkpoints convert reads --base-model-dir, then converts without it (cli/checkpoints.ts)',
    claim:
      'docs/commands/checkpoints.md: "With `--base-model-dir` every name is looked up among the model\'s weights"',
    file: 'src/cli/checkpoints.ts',
    search: 'result = convertInto(rawDir, flags.out, { baseModel, baseModelName: flags.baseModel });',
    replace: 'result = convertInto(rawDir, flags.out, { baseModelName: flags.baseModel });',
    tests: [CONVERT_CLI],
  },
  {
    name: 'lora-rank-merged',
    kind: "--max-lora-rank from r, below a merged module's rank (cli/checkpoints.ts serveHint)",
    claim:
      'docs/commands/checkpoints.md: "`--max-lora-rank` is the largest rank (a merged module\'s may be larger than `r`)"',
    file: 'src/cli/checkpoints.ts',
    search: 'const limit = maxLoraRank(summary.maxRank);',
    replace: 'const limit = maxLoraRank(summary.rank);',
    tests: [CONVERT_CLI],
  },
  {
    name: 'lora-rank-above-512',
    kind: 'a vllm serve line printed for a rank vLLM does not serve (cli/checkpoints.ts)',
    claim:
      'docs/commands/checkpoints.md: "vLLM serves no LoRA of a rank above 512: for such an adapter the vLLM line is left out and says why."',
    file: 'src/cli/checkpoints.ts',
    search: 'export const VLLM_LORA_RANKS = [1, 8, 16, 32, 64, 128, 256, 320, 512] as const;',
    replace: 'export const VLLM_LORA_RANKS = [1, 8, 16, 32, 64, 128, 256, 320, 512, 1024] as const;',
    tests: [CONVERT_CLI],
  },
  {
    name: 'gptoss-outside-functions',
    kind: 'a gpt-oss call to a recipient outside functions. read as clean text (families/gpt-oss.ts)',
    claim:
      'docs/renderer.md: "A message to a recipient outside `functions` (`to=get_weather` without the namespace, or harmony\'s own `to=browser.search`, `to=python`) is `unparsed` with its raw text and `ok: false`"',
    file: 'src/render/families/gpt-oss.ts',
    search: "if (m.recipient !== null && !m.recipient.startsWith('functions.')) {",
    replace: "if (m.recipient !== null && m.recipient === '') {",
    tests: ['test/render/families/gpt-oss.test.ts'],
  },
  {
    name: 'family-tool-name',
    kind: "a tool result that names only its call's id written without the call's name: gpt-oss's functions.unknown (family-renderer.ts)",
    claim:
      'docs/renderer.md: "A `tool` message that names only the call it answers (its `tool_call_id`, as a rollout\'s tool results do) is written by a family renderer under that call\'s function name and id"',
    file: 'src/render/family-renderer.ts',
    search: 'const name = m.name ?? (m.tool_call_id ? callNames.get(m.tool_call_id) : undefined);',
    replace: 'const name = m.name;',
    tests: ['test/render/cli.test.ts'],
  },
  {
    name: 'family-tool-id',
    kind: "a tool result's call id dropped: Kimi's `## Return of` names no call (family-renderer.ts)",
    claim:
      "docs/renderer.md: \"is written by a family renderer under that call's function name and id: gpt-oss's `<|start|>functions.NAME to=assistant`, Kimi's `NAME` and `## Return of ID`\"",
    file: 'src/render/family-renderer.ts',
    search: '...(m.tool_call_id !== undefined ? { toolCallId: m.tool_call_id } : {}),',
    replace: '',
    tests: ['test/render/cli.test.ts'],
  },
  {
    name: 'version-text',
    kind: '--version prints the program name without the package version (cli/program.ts)',
    claim: 'docs/commands/README.md: "`seal --version` (or `-V`) prints the package version"',
    file: 'src/cli/program.ts',
    search: 'if (!checkout) return ',
    replace: "if (!checkout) return 'seal'; if (!checkout) return ",
    tests: ['test/cli-usage.test.ts'],
  },
  {
    name: 'dry-run-no-prompt-text',
    kind: 'the dry run counts each first prompt but prints none of its text (train/tinker.ts)',
    claim:
      'docs/recipes/tinker-hosted.md: "for each task of round 1 its first prompt\'s length in tokens and its text as the model reads it"',
    file: 'src/train/tinker.ts',
    search: 'promptExcerpt(renderer.decode(ids))',
    replace: "promptExcerpt('')",
    tests: ['test/train/dry-run.test.ts'],
  },
  {
    name: 'extend-equal-rounds',
    kind: '--resume --rounds N with N equal to the recorded rounds taken as a raise (train/train.ts)',
    claim:
      'docs/commands/train.md: "N must be above the rounds it has (a lower or equal N is refused, exit 2, nothing changed)"',
    file: 'src/train/train.ts',
    search: 'if (extend.rounds <= config.rounds)',
    replace: 'if (extend.rounds < config.rounds)',
    tests: ['test/train/extend.test.ts'],
  },
  {
    name: 'extend-unrecorded',
    kind: "a raise of the budget not added to run.json's extensions (train/train.ts)",
    claim: 'docs/commands/train.md: "and keeps the history in `extensions`"',
    file: 'src/train/train.ts',
    search: 'extensions: [...(manifest.extensions ?? []), extension],',
    replace: 'extensions: manifest.extensions ?? [],',
    tests: ['test/train/extend.test.ts'],
  },
  {
    name: 'extend-final-lost',
    kind: "a finished run's final evaluation deleted instead of moved aside when its budget is raised (train/train.ts)",
    claim:
      'docs/commands/train.md: "A finished run\'s final evaluation, made after its old last round, is moved to `eval-final-round-NNNN/`"',
    file: 'src/train/train.ts',
    search: 'renameSync(from, run.path(ext.evalFinal));',
    replace: 'rmSync(from, { recursive: true });',
    tests: ['test/train/extend.test.ts'],
  },
  {
    name: 'extend-pending-refused',
    kind: 'a raise cut short by a kill (finished.json still there) refused instead of completed (train/run-check.ts)',
    claim: 'docs/run-folder.md: "the next `--resume` completes the moves and goes on"',
    file: 'src/train/run-check.ts',
    search: 'const pendingExtension = finished && isPendingExtension(run, manifest, upTo);',
    replace: 'const pendingExtension = false as boolean;',
    tests: ['test/train/extend.test.ts'],
  },
  {
    name: 'track-failure-escapes',
    kind: "a tracker's failure rethrown instead of warned about: it ends the run (train/track/track.ts)",
    claim:
      'docs/commands/train.md: "a tracker that cannot start, or fails later, is warned about once on stderr and left out, and the run goes on"',
    file: 'src/train/track/track.ts',
    search: '.catch((e) => this.fail(t, e));',
    replace: '.catch((e) => { throw e; });',
    tests: ['test/train/track.test.ts'],
  },
  {
    name: 'track-step-off',
    kind: "a round's numbers tracked at the step before it (train/train.ts)",
    claim:
      'docs/commands/train.md: "numbers to Weights & Biases or an MLflow tracking server, with the round as the step"',
    file: 'src/train/train.ts',
    search: 'tracking.log(r.round, roundMetrics(r));',
    replace: 'tracking.log(r.round - 1, roundMetrics(r));',
    tests: ['test/train/track.test.ts'],
  },
  {
    name: 'mlflow-resume-new-run',
    kind: 'a resumed run starts a new MLflow run instead of the one tracking.json names (train/track/mlflow.ts)',
    claim: 'docs/commands/train.md: "so a resumed run logs into the same MLflow run"',
    file: 'src/train/track/mlflow.ts',
    search: 'if (kept && kept.uri === uri) {',
    replace: 'if (kept && kept.uri !== uri) {',
    tests: ['test/train/track.test.ts'],
  },
  {
    name: 'wandb-end-unseen',
    kind: "the W&B SDK's process ending on a refused run not taken as the tracker's failure: the run waits a minute, the warning says no why (train/track/wandb.ts)",
    claim:
      'docs/commands/train.md: "run in a child process, because a refusal from the server ends the process the SDK runs in"',
    file: 'src/train/track/wandb.ts',
    search: "child.on('exit', (code) =>",
    replace: "child.on('exit', (code) => code === 0 &&",
    tests: ['test/train/track.test.ts'],
  },
  {
    name: 'tau2-premature-scored',
    kind: 'a conversation that ended after too many errors is scored like a finished one (envs/tau2/evaluator/evaluate.ts)',
    claim:
      'docs/tau2-scoring.md: "A conversation that ended at the step limit or after too many errors scores 0, whatever it did"',
    file: 'src/envs/tau2/evaluator/evaluate.ts',
    search:
      "return conversation.termination_reason !== 'agent_stop' && conversation.termination_reason !== 'user_stop';",
    replace: "return conversation.termination_reason === 'max_steps';",
    tests: ['test/envs/tau2-evaluator.test.ts', 'test/envs/tau2-results.test.ts'],
  },
  {
    name: 'tau2-user-db-ignored',
    kind: "only the agent's database compared with the gold one (envs/tau2/evaluator/environment.ts)",
    claim: 'docs/tau2-scoring.md: "Both databases must be equal, the agent\'s and the user\'s"',
    file: 'src/envs/tau2/evaluator/environment.ts',
    search: "gold.dbText('user') === predicted.dbText('user');",
    replace: 'true;',
    tests: ['test/envs/tau2-evaluator.test.ts'],
  },
  {
    name: 'tau2-gold-synced',
    kind: 'the gold actions run through respond(), which syncs the tools after each (envs/tau2/evaluator/environment.ts)',
    claim:
      'docs/tau2-scoring.md: "Like the reference, the gold actions run without syncing the tools after each one"',
    file: 'src/envs/tau2/evaluator/environment.ts',
    search: 'gold.makeToolCall({',
    replace: 'gold.respond({',
    tests: ['test/envs/tau2-evaluator.test.ts'],
  },
  {
    name: 'tau2-replay-unchecked',
    kind: 'recorded tool results not compared with the replayed ones: a tampered conversation is scored (envs/tau2/evaluator/replay.ts)',
    claim:
      'docs/tau2-scoring.md: "A conversation whose recorded results the environment does not give again is refused"',
    file: 'src/envs/tau2/evaluator/replay.ts',
    search: 'if (!pyEquals(loadsOrText(replayed.content), loadsOrText(result.content)))',
    replace: 'if (false as boolean)',
    tests: ['test/envs/tau2-evaluator.test.ts', 'test/envs/tau2-results.test.ts'],
  },
  {
    name: 'tau2-replay-text',
    kind: 'recorded tool results compared as texts instead of JSON values (envs/tau2/evaluator/replay.ts)',
    claim: 'docs/tau2-scoring.md: "both read as JSON (text that is not JSON is compared as text)"',
    file: 'src/envs/tau2/evaluator/replay.ts',
    search: 'if (!pyEquals(loadsOrText(replayed.content), loadsOrText(result.content)))',
    replace: 'if (replayed.content !== result.content)',
    tests: ['test/envs/tau2-evaluator.test.ts'],
  },
  {
    name: 'tau2-comma-kept',
    kind: 'the communicate check looks for the information in the text with its commas (envs/tau2/evaluator/communicate.ts)',
    claim: 'docs/tau2-scoring.md: "after the commas of the message are removed"',
    file: 'src/envs/tau2/evaluator/communicate.ts',
    search: ".toLowerCase().replaceAll(',', '')",
    replace: '.toLowerCase()',
    tests: ['test/envs/tau2-evaluator.test.ts', 'test/envs/tau2-results.test.ts'],
  },
  {
    name: 'tau2-basis-ignored',
    kind: 'the communicate check counted whatever the reward basis says (envs/tau2/evaluator/evaluate.ts)',
    claim: 'docs/tau2-scoring.md: "A part outside the basis is reported but does not count"',
    file: 'src/envs/tau2/evaluator/evaluate.ts',
    search: "if (basis.has('COMMUNICATE')) include(communicate);",
    replace: 'include(communicate);',
    tests: ['test/envs/tau2-evaluator.test.ts'],
  },
  {
    name: 'tau2-action-keys',
    kind: "without compare_args the gold action's argument names are compared instead of the call's (envs/tau2/evaluator/actions.ts)",
    claim:
      'docs/tau2-scoring.md: "without `compare_args`, the arguments the call has are compared, so an argument only the gold action has is not"',
    file: 'src/envs/tau2/evaluator/actions.ts',
    search: 'action.compare_args ?? [...call.arguments.keys()]',
    replace: 'action.compare_args ?? [...action.arguments.keys()]',
    tests: ['test/envs/tau2-evaluator.test.ts'],
  },
  {
    name: 'tau2-passk-power',
    kind: 'pass^k as the success rate to the power k instead of C(c, k) / C(n, k) (envs/tau2/evaluator/metrics.ts)',
    claim: 'docs/tau2-scoring.md: "pass^k of a task with n trials and c successes is C(c, k) / C(n, k)"',
    file: 'src/envs/tau2/evaluator/metrics.ts',
    search: 'return ratioToDouble(comb(successes, k), comb(numTrials, k));',
    replace: 'return (successes / numTrials) ** k;',
    tests: ['test/envs/tau2-metrics.test.ts', 'test/envs/tau2-results.test.ts'],
  },
  {
    name: 'tau2-success-exact',
    kind: 'a success is a reward of exactly 1, not within 1e-6 (envs/tau2/evaluator/metrics.ts)',
    claim: 'docs/tau2-scoring.md: "A reward within 1e-6 of 1 is a success"',
    file: 'src/envs/tau2/evaluator/metrics.ts',
    search: 'return 1 - 1e-6 <= reward && reward <= 1 + 1e-6;',
    replace: 'return reward === 1;',
    tests: ['test/envs/tau2-metrics.test.ts'],
  },
  {
    name: 'tau2-k-uncapped',
    kind: "pass^k computed up to the run's trials even when a task has fewer (envs/tau2/evaluator/metrics.ts)",
    claim: 'docs/tau2-scoring.md: "for k from 1 to the fewest trials any task has"',
    file: 'src/envs/tau2/evaluator/metrics.ts',
    search: 'if (minCount < maxK) maxK = minCount;',
    replace: '',
    tests: ['test/envs/tau2-metrics.test.ts'],
  },
  {
    name: 'tau2-running-sum',
    kind: "averages by a running sum instead of numpy's pairwise sum (envs/tau2/evaluator/metrics.ts)",
    claim:
      'docs/tau2-scoring.md: "The sums are numpy\'s pairwise sums, so the figures agree with the reference\'s to the last bit"',
    file: 'src/envs/tau2/evaluator/metrics.ts',
    search: 'if (n < 8) {',
    replace: 'if (n > 0) {',
    tests: ['test/envs/tau2-metrics.test.ts'],
  },
  {
    name: 'tau2-task-order',
    kind: 'pass^k averaged in task-id order, not by the number of gold actions (envs/tau2/evaluator/metrics.ts)',
    claim: 'docs/tau2-scoring.md: "it sorts the tasks by their number of gold actions"',
    file: 'src/envs/tau2/evaluator/metrics.ts',
    search: 'keyed.sort((a, b) => a.n - b.n);',
    replace: '',
    tests: ['test/envs/tau2-metrics.test.ts'],
  },
  {
    name: 'tau2-results-int-floats',
    kind: 'a results file written with integral floats as ints (60.0 as 60) (envs/tau2/results.ts)',
    claim:
      'docs/tau2-scoring.md: "Tool-call arguments keep their Python values, so `60.0` is written back as `60.0`"',
    file: 'src/envs/tau2/results.ts',
    search: 'return dict({ id: c.id, name: c.name, arguments: c.arguments, requestor: c.requestor });',
    replace:
      'return dict({ id: c.id, name: c.name, arguments: fromPlain(Object.fromEntries(c.arguments)), requestor: c.requestor });',
    tests: ['test/envs/tau2-results.test.ts'],
  },
  {
    name: 'pull-corrupt-kept',
    kind: 'a downloaded file whose sha256 does not match the manifest is written anyway (util/pinned-files.ts)',
    claim: 'docs/commands/data.md: "A file that fails to download or to verify never replaces anything"',
    file: 'src/util/pinned-files.ts',
    search: 'if (sum !== expected)\n',
    replace: 'if (sum !== expected && false)\n',
    tests: ['test/envs/tau2/data.test.ts'],
  },
  {
    name: 'pull-refetch-all',
    kind: 'a rerun of the pull downloads every file again, the good ones too (util/pinned-files.ts)',
    claim: 'docs/commands/data.md: "running it again fetches only what is still missing"',
    file: 'src/util/pinned-files.ts',
    search: 'if (hasSum(target, f.sha256)) {',
    replace: 'if (hasSum(target, f.sha256) && false) {',
    tests: ['test/envs/tau2/data.test.ts'],
  },
  {
    name: 'tau2-data-incomplete-accepted',
    kind: 'a τ² data folder missing some of the pinned files is taken as the data (envs/tau2/data.ts)',
    claim:
      'docs/commands/data.md: "A folder that lacks any of the data files is refused with the list of what is missing and this command."',
    file: 'src/envs/tau2/data.ts',
    search: 'if (missing.length > 0)',
    replace: 'if (missing.length > 9)',
    tests: ['test/envs/tau2/data.test.ts'],
  },
  {
    name: 'tau2-docs-short-paragraph',
    kind: "a docstring's short description taken as its first paragraph, not its first line (envs/tau2/docstring.ts)",
    claim: 'docs/tau2.md: "the first line is the short description"',
    file: 'src/envs/tau2/docstring.ts',
    search: "const nl = descChunk.indexOf('\\n');",
    replace: "const nl = descChunk.indexOf('\\n\\n');",
    tests: ['test/envs/tau2/tool-docs.test.ts'],
  },
  {
    name: 'tau2-docs-continuation-spaces',
    kind: "an Args entry's continuation lines joined with spaces instead of line breaks (envs/tau2/docstring.ts)",
    claim: 'docs/tau2.md: "its continuation lines joined with line breaks"',
    file: 'src/envs/tau2/docstring.ts',
    search: "desc = stripChars(desc, '\\n');",
    replace: "desc = stripChars(desc, '\\n').replace(/\\n/g, ' ');",
    tests: ['test/envs/tau2/tool-docs.test.ts'],
  },
  {
    name: 'tau2-docs-google-only',
    kind: 'only the Google reading of a docstring: one Google refuses, or a reST one, splits otherwise than the reference (envs/tau2/docstring.ts)',
    claim: 'docs/tau2.md: "A docstring is split the way the reference\'s parser"',
    file: 'src/envs/tau2/docstring.ts',
    search: 'for (const style of [parseRest, parseGoogle])',
    replace: 'for (const style of [parseGoogle])',
    tests: ['test/envs/tau2/tool-docs.test.ts'],
  },
  {
    name: 'tau2-docs-annotation-first',
    kind: "a field's Annotated description preferred over the Field() assigned to it, which pydantic keeps (envs/tau2/tool-docs.ts)",
    claim: 'docs/tau2.md: "the `Field(description=...)` strings and docstrings of its pydantic models"',
    file: 'src/envs/tau2/tool-docs.ts',
    search: 'const own = assigned !== undefined ? assigned : fieldDescription(f.annotation);',
    replace: 'const own = fieldDescription(f.annotation) ?? assigned;',
    tests: ['test/envs/tau2/tool-docs.test.ts'],
  },
  {
    name: 'tau2-docs-escapes-raw',
    kind: 'string literals taken as written, escapes not decoded (envs/tau2/py-source.ts)',
    claim:
      'docs/tau2.md: "a string literal is read as Python reads it (its escapes decoded, adjacent literals joined)"',
    file: 'src/envs/tau2/py-source.ts',
    search: "return p.includes('r') ? body : decodeStrEscapes(body);",
    replace: 'return body;',
    tests: ['test/envs/tau2/tool-docs.test.ts'],
  },
  {
    name: 'tau2-docs-partial-sources',
    kind: 'some source files missing and the docs still claimed available, half the tools described (envs/tau2/tool-docs.ts)',
    claim: 'docs/tau2.md: "When the source files are missing, every tool is described by its name alone"',
    file: 'src/envs/tau2/tool-docs.ts',
    search: 'if (!paths.every((p) => existsSync(p))) return NO_TOOL_DOCS;',
    replace: 'if (!paths.some((p) => existsSync(p))) return NO_TOOL_DOCS;',
    tests: ['test/envs/tau2/tool-docs.test.ts'],
  },
  {
    name: 'telecom-sync-roaming',
    kind: "sync_tools never lets the phone roam: the line's roaming is not carried to the phone (tau2 telecom sync)",
    claim:
      'docs/tau2-telecom.md: "After every call, `sync_tools` carries the line\'s state to the phone: whether the line is active, whether roaming is allowed on it"',
    file: 'src/envs/tau2/domains/telecom/environment.ts',
    search: 'around.roaming_allowed = truthy(line.roaming_enabled);',
    replace: 'around.roaming_allowed = false;',
    tests: ['test/envs/tau2/telecom-gold.test.ts', 'test/envs/tau2/telecom-device.test.ts'],
  },
  {
    name: 'telecom-refuel-ignored',
    kind: 'the data allowance leaves out refuels, so a refuelled line stays without mobile data (tau2 telecom sync)',
    claim: 'docs/tau2-telecom.md: "whether its data allowance (plan plus refuels) is used up"',
    file: 'src/envs/tau2/domains/telecom/environment.ts',
    search: 'add(plan.data_limit_gb, line.data_refueling_gb),',
    replace: 'plan.data_limit_gb,',
    tests: ['test/envs/tau2/telecom-gold.test.ts', 'test/envs/tau2/telecom-device.test.ts'],
  },
  {
    name: 'telecom-payment-unsynced',
    kind: 'a paid request never marks its bill paid (tau2 telecom sync)',
    claim: 'docs/tau2-telecom.md: "a paid request marks its bill paid"',
    file: 'src/envs/tau2/domains/telecom/environment.ts',
    search: 'agent._set_bill_to_paid(request.bill_id);',
    replace: '',
    tests: ['test/envs/tau2/telecom-gold.test.ts', 'test/envs/tau2/telecom-device.test.ts'],
  },
  {
    name: 'telecom-airplane-signal',
    kind: 'airplane mode leaves the phone connected after a network search (tau2 telecom phone)',
    claim: 'docs/tau2-telecom.md: "Airplane mode cuts all service"',
    file: 'src/envs/tau2/domains/telecom/user-tools.ts',
    search: "if (truthy(this.d('airplane_mode'))) this.noService();",
    replace: '',
    tests: ['test/envs/tau2/telecom-gold.test.ts', 'test/envs/tau2/telecom-device.test.ts'],
  },
  {
    name: 'telecom-data-saver-speed',
    kind: 'data saver halves the speed instead of cutting it to a fifth (tau2 telecom speed test)',
    claim: 'docs/tau2-telecom.md: "a fifth with data saver on"',
    file: 'src/envs/tau2/domains/telecom/user-tools.ts',
    search: 'factor *= 0.2;',
    replace: 'factor *= 0.5;',
    tests: ['test/envs/tau2/telecom-gold.test.ts', 'test/envs/tau2/telecom-device.test.ts'],
  },
  {
    name: 'telecom-apn-reset-now',
    kind: 'a reboot ignores a pending APN reset, so a broken APN stays broken (tau2 telecom phone)',
    claim: 'docs/tau2-telecom.md: "An APN reset takes effect at the next reboot."',
    file: 'src/envs/tau2/domains/telecom/user-tools.ts',
    search: "if (truthy(this.apn('reset_at_reboot'))) {",
    replace: "if (truthy(this.apn('reset_at_reboot')) && false) {",
    tests: ['test/envs/tau2/telecom-gold.test.ts', 'test/envs/tau2/telecom-device.test.ts'],
  },
  {
    name: 'pydantic-shared-default',
    kind: "validation gives every instance the same default object: one bill's line items show on every new bill (tau2 base)",
    claim: 'docs/tau2-telecom.md: "Each new record gets its own copy of a default, as pydantic gives it"',
    file: 'src/envs/tau2/pydantic.ts',
    search: 'if (f.default) values[f.name] = freshCopy(f.default.value);',
    replace: 'if (f.default) values[f.name] = f.default.value;',
    tests: ['test/envs/tau2/pydantic-extras.test.ts'],
  },
  {
    name: 'tau2-binding-plural',
    kind: "Python's binding error miscounted: one missing argument named as several (tau2/toolkit.ts)",
    claim: "docs/tau2-domains.md: \"a missing one (`missing 2 required positional arguments: 'a' and 'b'`)\"",
    file: 'src/envs/tau2/toolkit.ts',
    search: 'const n = missing.length;',
    replace: 'const n = Math.max(2, missing.length);',
    tests: ['test/envs/tau2/toolkit.test.ts'],
  },
  {
    name: 'tau2-number-not-str',
    kind: "a bare number returned as a JSON number, not as the JSON string of Python's str() (tau2/toolkit.ts)",
    claim: 'docs/tau2-domains.md: "A bare number comes back as the JSON string of Python\'s `str()` of it."',
    file: 'src/envs/tau2/toolkit.ts',
    search: "if (typeof v === 'bigint' || typeof v === 'number' || typeof v === 'boolean') return str(v);",
    replace: "if (typeof v === 'bigint' || typeof v === 'number' || typeof v === 'boolean') return v;",
    tests: ['test/envs/tau2/toolkit.test.ts'],
  },
  {
    name: 'tau2-db-fields-unsorted',
    kind: 'the database text written in field order instead of sort_keys order (tau2/pydantic.ts)',
    claim:
      'docs/tau2-domains.md: "A domain\'s database text is `json.dumps(model_dump(), sort_keys=True)` of the pydantic models"',
    file: 'src/envs/tau2/pydantic.ts',
    search: 'names = v.$spec.fields.map((f) => f.name).sort(compareCodePoints);',
    replace: 'names = v.$spec.fields.map((f) => f.name);',
    tests: ['test/envs/tau2/toolkit.test.ts'],
  },
  {
    name: 'tau2-calc-floordiv',
    kind: "calculate's `//` computed as true division (tau2/calculate.ts)",
    claim:
      'docs/tau2-domains.md: "`calculate` is parsed, never evaluated: numbers, `+ - * / // **`, parentheses and signs, with Python\'s results"',
    file: 'src/envs/tau2/calculate.ts',
    search: ": op === '/' ? () => truediv(a(), b()) : () => floordiv(a(), b());",
    replace: ': () => truediv(a(), b());',
    tests: ['test/envs/tau2/calculate.test.ts'],
  },
  {
    name: 'tau2-own-variant',
    kind: "a modified pending order's items each priced by their own new variant, not the reference's last one (retail/tools.ts)",
    claim:
      'docs/tau2-domains.md: "Modifying a pending order gives every changed item the price and options of the last new item"',
    file: 'src/envs/tau2/domains/retail/tools.ts',
    search: 'item.price = variant!.price;',
    replace: 'item.price = getVariant(kit, item.product_id, newItemId).price;',
    tests: ['test/envs/tau2/retail.test.ts'],
  },
  {
    name: 'tau2-gift-card-unrounded',
    kind: 'a gift card charged by a modification left unrounded (retail/tools.ts)',
    claim: 'docs/tau2-domains.md: "Gift card balances are rounded to cents after each refund or charge"',
    file: 'src/envs/tau2/domains/retail/tools.ts',
    search: 'if (isGiftCard(method)) method.balance = pyRound(sub(method.balance, diff), 2n) as number;',
    replace: 'if (isGiftCard(method)) method.balance = sub(method.balance, diff) as number;',
    tests: ['test/envs/tau2/retail.test.ts'],
  },
  {
    name: 'tau2-airline-clock',
    kind: "a reservation's creation time not the reference's fixed now (airline/tools.ts)",
    claim: 'docs/tau2-domains.md: "Airline\'s clock is fixed at 2024-05-15T15:00:00, the reference\'s now."',
    file: 'src/envs/tau2/domains/airline/tools.ts',
    search: "export const AIRLINE_NOW = '2024-05-15T15:00:00';",
    replace: "export const AIRLINE_NOW = '2024-05-15 15:00:00';",
    tests: ['test/envs/tau2/airline.test.ts'],
  },
  {
    name: 'tau2-certificate-unsaved',
    kind: 'send_certificate answers but stores no certificate (airline/tools.ts)',
    claim: 'docs/tau2-domains.md: "the database changes exactly when a write tool ran"',
    file: 'src/envs/tau2/domains/airline/tools.ts',
    search: '        user.payment_methods.set(\n          paymentId,',
    replace: '        new Map().set(\n          paymentId,',
    tests: ['test/envs/tau2/replay.test.ts', 'test/envs/tau2/airline.test.ts'],
  },
  {
    name: 'agentic-ascii-boundary',
    kind: "the agentic checker's word boundary taken from JavaScript's ASCII \\w, not Python's Unicode one (envs/bfcl/agentic/checker.ts)",
    claim: 'docs/bfcl-agentic.md: "so `café` is not found in `cafés`"',
    file: 'src/envs/bfcl/agentic/checker.ts',
    search: 'const WORD = /^[\\p{L}\\p{N}_]$/u;',
    replace: 'const WORD = /^\\w$/;',
    tests: ['test/agentic/checker.test.ts'],
  },
  {
    name: 'agentic-quotes-kept',
    kind: 'the standardisation leaves single quotes as they are (envs/bfcl/agentic/checker.ts)',
    claim: 'docs/bfcl-agentic.md: "lower-cased, `\'` turned into `"`"',
    file: 'src/envs/bfcl/agentic/checker.ts',
    search: `.replaceAll("'", '"');`,
    replace: `.replaceAll("'", "'");`,
    tests: ['test/agentic/checker.test.ts'],
  },
  {
    name: 'agentic-first-answer',
    kind: 'the first step that is not a tool call checked instead of the last (envs/bfcl/agentic/checker.ts)',
    claim: 'docs/bfcl-agentic.md: "the response checked is the entry\'s last step that is not a tool call"',
    file: 'src/envs/bfcl/agentic/checker.ts',
    search: 'for (const step of steps) if (!isCallStep(step)) last = step;',
    replace: 'for (const step of steps) if (!isCallStep(step) && last === undefined) last = step;',
    tests: ['test/agentic/checker.test.ts'],
  },
  {
    name: 'bm25-ties-alphabetical',
    kind: 'BM25+ ties ordered by key name instead of memory order (envs/bfcl/agentic/bm25.ts)',
    claim: 'docs/bfcl-agentic.md: "ties keep the keys\' order"',
    file: 'src/envs/bfcl/agentic/bm25.ts',
    search: '.sort((a, b) => b[0] - a[0]);',
    replace: '.sort((a, b) => b[0] - a[0] || (a[1] < b[1] ? -1 : 1));',
    tests: ['test/agentic/memory.test.ts'],
  },
  {
    name: 'bm25-classic-idf',
    kind: "BM25's classic idf instead of BM25+'s log((N+1)/df) (envs/bfcl/agentic/bm25.ts)",
    claim:
      'docs/bfcl-agentic.md: "ranks keys with BM25+ exactly as the reference\'s library (`rank_bm25`, k1 1.5, b 0.75, delta 1) does"',
    file: 'src/envs/bfcl/agentic/bm25.ts',
    search: 'idf.set(w, Math.log((corpus.length + 1) / n));',
    replace: 'idf.set(w, Math.log(1 + (corpus.length - n + 0.5) / (n + 0.5)));',
    tests: ['test/agentic/memory.test.ts'],
  },
  {
    name: 'memory-questions-start-empty',
    kind: "memory questions start from an empty memory instead of their scenario's (envs/bfcl/agentic/suite.ts)",
    claim: 'docs/bfcl-agentic.md: "every question starts from the memory the last one left"',
    file: 'src/envs/bfcl/agentic/suite.ts',
    search: 'const start = task.scenario ? memory.get(memoryKey(task, play.trial)) : undefined;',
    replace: 'const start = task.prereq ? memory.get(memoryKey(task, play.trial)) : undefined;',
    tests: ['test/agentic/suite.test.ts'],
  },
  {
    name: 'resume-forgets-settled-state',
    kind: 'a resumed run does not hand the finished episodes back to the suite: memory is lost (eval/episodes.ts)',
    claim:
      'docs/bfcl-agentic.md: "a killed run, started again, plays only the rest, and rebuilds each scenario\'s memory from the prerequisite conversations in its folder"',
    file: 'src/eval/episodes.ts',
    search: 'if (row) suite.settle?.(e.taskId, { seed: row.seed, trial: e.trial }, row.record);',
    replace:
      'if (row && e.trial < 0) suite.settle?.(e.taskId, { seed: row.seed, trial: e.trial }, row.record);',
    tests: ['test/eval/agentic-cli.test.ts'],
  },
  {
    name: 'episodes-ignore-after',
    kind: 'the episodes runner opens a task before the tasks it comes after have ended (eval/episodes.ts)',
    claim: 'docs/architecture.md: "waiting for a task\'s `after` before it opens it"',
    file: 'src/eval/episodes.ts',
    search:
      'for (const dep of byId.get(taskId)?.after ?? []) await untilEnded(ended.get(key(dep, trial)), signal);',
    replace:
      'for (const dep of byId.get(taskId)?.after ?? []) void untilEnded(ended.get(key(dep, trial)), signal);',
    tests: ['test/eval/agentic-cli.test.ts'],
  },
  {
    name: 'prerequisites-scored',
    kind: "memory's prerequisite conversations count in the summary (eval/episodes.ts)",
    claim:
      'docs/bfcl-agentic.md: "The prerequisite conversations are played by the model under test and kept in the run folder, but not scored"',
    file: 'src/eval/episodes.ts',
    search: 'const mine = rows.filter((r) => r.group === group && r.scored !== false);',
    replace: 'const mine = rows.filter((r) => r.group === group);',
    tests: ['test/eval/agentic-cli.test.ts'],
  },
  {
    name: 'web-offline-fetches',
    kind: 'an offline run goes to the network for what its cache lacks (envs/bfcl/agentic/web.ts)',
    claim: 'docs/bfcl-agentic.md: "An *offline* run answers only from the cache"',
    file: 'src/envs/bfcl/agentic/web.ts',
    search: 'if (this.options.offline) {',
    replace: 'if (this.options.offline && path === undefined) {',
    tests: ['test/agentic/vector-web.test.ts'],
  },
  {
    name: 'web-no-snippet-ignored',
    kind: 'web_search_no_snippet shows the snippets anyway (envs/bfcl/apis/webSearch.ts)',
    claim: 'docs/bfcl-agentic.md: "the same questions; results without snippets"',
    file: 'src/envs/bfcl/apis/webSearch.ts',
    search: "if (typeof v === 'boolean') this.showSnippet = v;",
    replace: "if (typeof v === 'boolean') this.showSnippet = true;",
    tests: ['test/agentic/vector-web.test.ts'],
  },
  {
    name: 'pull-without-agentic',
    kind: 'seal data pull bfcl leaves out the memory and web search files (cli/data.ts)',
    claim: 'docs/commands/data.md: "The same command brings BFCL v4\'s memory and web search files"',
    file: 'src/cli/data.ts',
    search: 'agentic: true,',
    replace: 'agentic: false,',
    tests: ['test/agentic/pull.test.ts'],
  },
  {
    name: 'report-eval-summary-ignored',
    kind: "an evaluation's page scores every folder from its lines, summary.json or not (report/evaluation.ts)",
    claim:
      'docs/commands/report.md: "A folder whose evaluation is still running or was killed (no `summary.json` yet) is reported from the episodes finished so far, and the page says so"',
    file: 'src/report/evaluation.ts',
    search: 'if (e.summary) return { summary: e.summary, computed: false };',
    replace: 'if (e.summary && e.kind === "bfcl") return { summary: e.summary, computed: false };',
    tests: ['test/report/evaluation.test.ts'],
  },
  {
    name: 'report-eval-groups-by-finish',
    kind: "an evaluation's browser lists groups in the order their episodes ended (report/evaluation.ts)",
    claim: 'docs/commands/report.md: "an episode browser, per group"',
    file: 'src/report/evaluation.ts',
    search: 'return [...named, ...[...played].filter((g) => !named.includes(g))];',
    replace: 'return [...played];',
    tests: ['test/report/evaluation.test.ts'],
  },
  {
    name: 'episodes-resume-any-renderer',
    kind: 'a τ² or agentic evaluation resumes under another chat format (eval/episodes.ts)',
    claim: 'docs/tau2.md: "refusal of other settings"',
    file: 'src/eval/episodes.ts',
    search: "  'renderer',\n  'thinking',\n  'groups',",
    replace: "  'thinking',\n  'groups',",
    tests: ['test/eval/tau2-tinker.test.ts'],
  },
  {
    name: 'reveal-without-tools',
    kind: 'the agent loop shows a turn that reveals tools without them (agent/conversation.ts)',
    claim: 'docs/architecture.md: "has its user message shown with those tools as the format writes them"',
    file: 'src/agent/conversation.ts',
    search: 'content: added ? format.addedFunctionsMessage(added, i.content) : i.content',
    replace: 'content: i.content',
    tests: ['test/envs/suite.test.ts', 'test/bfcl/rollout.test.ts'],
  },
  {
    name: 'bfcl-runs-structured-copy',
    kind: "BFCL's episode runs the loop's structured copy of the calls, not what was written (envs/bfcl/suite.ts)",
    claim: 'docs/architecture.md: "so it judges what was written"',
    file: 'src/envs/bfcl/suite.ts',
    search: '(message.callText ?? message.calls.map(callStringOf))',
    replace: 'message.calls.map(callStringOf)',
    tests: ['test/bfcl/rollout.test.ts', 'test/eval/official-decoding.test.ts'],
  },
  {
    name: 'serve-parse-error-ends-turn',
    kind: "seal serve's training instances end the turn on output that did not parse (server/session.ts)",
    claim: 'docs/commands/serve.md: "the policy may retry; tries count toward the 20-step limit"',
    file: 'src/server/session.ts',
    search: "onUnparsed: options.onParseError === 'reply' ? 'reply' : 'end_turn',",
    replace: "onUnparsed: 'end_turn',",
    tests: ['test/server/protocol.test.ts'],
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

const squash = (text: string) => text.replace(/\s+/g, ' ');

/** why a claim is not what its page says (`...` between parts it leaves out), or undefined */
function claimProblem(claim: string): string | undefined {
  const m = /^(docs\/[\w./-]+\.md): "(.+)"$/s.exec(claim);
  if (!m) return 'its claim is not docs/PAGE.md: "sentence"';
  const page = join(REPO, m[1]!);
  if (!existsSync(page)) return `its claim's page ${m[1]} does not exist`;
  const text = squash(readFileSync(page, 'utf8'));
  let at = 0;
  for (const part of m[2]!.split('...').map((x) => squash(x).trim())) {
    const i = text.indexOf(part, at);
    if (i < 0) return `${m[1]} no longer says "${part}"`;
    at = i + part.length;
  }
  return undefined;
}

/** every search string is in its file exactly once and every claim on its page, or the list is out of date */
function checkBreaks(breaks: readonly Break[]): void {
  const problems: string[] = [];
  const names = new Set<string>();
  for (const b of breaks) {
    if (names.has(b.name)) problems.push(`${b.name}: two breaks of this name`);
    names.add(b.name);
    const claim = claimProblem(b.claim);
    if (claim) problems.push(`${b.name}: ${claim}`);
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
  // open to others, as a clone is: the run-folder test runs seal as nobody when it runs as root
  chmodSync(dir, 0o755);
  for (const entry of readdirSync(REPO)) {
    if (SKIP.has(entry)) continue;
    cpSync(join(REPO, entry), join(dir, entry), { recursive: true });
  }
  symlinkSync(realpathSync(join(REPO, 'node_modules')), join(dir, 'node_modules'), 'dir');
  return dir;
}

/** vitest on `files` in `dir`: whether every test passed, which files failed, how long it took */
function runTests(
  dir: string,
  files: readonly string[],
): Promise<{ passed: boolean; failed: string[]; seconds: number; tail: string }> {
  const t0 = Date.now();
  // the shared BFCL, BFCL agentic and τ² folders beside the repository, which the copy is not beside
  const shared = join(REPO, '..', 'shared', 'bfcl-v3');
  const agentic = join(REPO, '..', 'shared', 'bfcl-v4-agentic', 'data');
  const sharedTau2 = join(REPO, '..', 'shared', 'tau2', 'v0.2.0');
  const env = {
    ...process.env,
    ...(existsSync(shared) && !process.env.SEAL_SHARED_BFCL ? { SEAL_SHARED_BFCL: shared } : {}),
    ...(existsSync(agentic) && !process.env.SEAL_SHARED_BFCL_AGENTIC
      ? { SEAL_SHARED_BFCL_AGENTIC: agentic }
      : {}),
    ...(existsSync(sharedTau2) && !process.env.SEAL_SHARED_TAU2 ? { SEAL_SHARED_TAU2: sharedTau2 } : {}),
  };
  return new Promise((done) => {
    const report = join(dir, 'mutate-report.json');
    rmSync(report, { force: true });
    const child = spawn(
      'npx',
      ['vitest', 'run', '--reporter=default', '--reporter=json', `--outputFile.json=${report}`, ...files],
      { cwd: dir, env, detached: true },
    );
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
      done({
        passed: code === 0,
        failed: failedFiles(dir, report, files, code),
        seconds: (Date.now() - t0) / 1000,
        tail: out,
      });
    });
  });
}

/** the test files vitest's JSON report says failed; every file when there is no report (a hang, a crash) */
function failedFiles(dir: string, report: string, files: readonly string[], code: number | null): string[] {
  if (code === 0) return [];
  try {
    const r = JSON.parse(readFileSync(report, 'utf8')) as { testResults: { name: string; status: string }[] };
    const failed = r.testResults.filter((t) => t.status !== 'passed').map((t) => relative(dir, t.name));
    return failed.length > 0 ? failed : ['(vitest failed outside a test file)'];
  } catch {
    return files.map((f) => `${f}?`);
  }
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
    for (const b of breaks)
      console.log(`${b.name}  (${b.tests.join(' ')})\n  ${b.kind}\n  breaks ${b.claim}\n`);
    console.log(`${breaks.length} break(s)`);
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
    const results: { b: Break; caught: boolean; by: string[]; seconds: number }[] = [];
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
      results.push({ b, caught: !r.passed, by: r.failed, seconds: r.seconds });
      console.error(
        `mutate: ${b.name}: ${r.passed ? 'ESCAPED' : `caught by ${r.failed.join(' ')}`} (${r.seconds.toFixed(0)} s)`,
      );
    }
    const caught = results.filter((r) => r.caught).length;
    // each break, the sentence it breaks, and the test file(s) that caught it
    for (const r of results)
      console.log(
        [
          `${r.caught ? 'caught ' : 'ESCAPED'}  ${r.b.name} (${r.seconds.toFixed(0)} s): ${r.b.kind}`,
          `         breaks ${r.b.claim}`,
          r.caught
            ? `         caught by ${r.by.join(', ')}`
            : `         passed ${r.b.tests.join(', ')}${r.b.note ? ` (${r.b.note})` : ''}`,
        ].join('\n'),
      );
    console.log('');
    console.log(
      table([
        ['break', 'result', 's', 'caught by'],
        ...results.map((r) => [
          r.b.name,
          r.caught ? 'caught' : 'ESCAPED',
          r.seconds.toFixed(0),
          r.caught ? r.by.join(' ') : '-',
        ]),
      ]),
    );
    console.log(`caught ${caught}/${results.length} (control ${control.seconds.toFixed(0)} s)`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
