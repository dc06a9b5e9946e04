/**
 * The smallest `seal train` a test can run as a real process, and the record it leaves read
 * without what only the clock decides. Each test states only where its run differs.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { flagOf } from '../../src/util/settings.js';

/**
 * two rounds of 2 tasks x 2 rollouts, a 4-task validation, no full evaluations, one thread each;
 * the supervised anchor on one demonstration a round (the default's eight were most of a tiny
 * run's time, and they still move the weights where no group has a reward signal)
 */
const TINY_RUN: Readonly<Record<string, string | number | boolean>> = {
  rounds: 2,
  tasksPerRound: 2,
  groupSize: 2,
  maxTokens: 16,
  anchorDemos: 1,
  validationTasks: 4,
  validateEvery: 2,
  evalStart: false,
  evalFinal: false,
  gradientWorkers: 1,
  samplerWorkers: 1,
};

/** the flags of the tiny run with `over` (setting keys) changed or added; `--quiet` always */
export function tinyTrainFlags(over: Readonly<Record<string, string | number | boolean>> = {}): string[] {
  return [...Object.entries({ ...TINY_RUN, ...over }).flatMap(([k, v]) => [flagOf(k), String(v)]), '--quiet'];
}

/** a record's JSON without its wall-clock fields */
export function timeless(text: string): unknown {
  return JSON.parse(text, (k, v) =>
    k === 'latencyMs' || k === 'timings' || k === 'finished' || k === 'started' ? undefined : v,
  );
}

/** a JSON-lines record, line by line, without its wall-clock fields */
export const timelessLines = (path: string): unknown[] =>
  readFileSync(path, 'utf8').trim().split('\n').map(timeless);

/**
 * `seal train --learner tinker` of Qwen3-8B's template and tokenizer (the dev dependency's files)
 * on the mini suite, into `out`, with `over` (setting keys) added: the run the Tinker tests and
 * benches vary. No full evaluations and no validation unless `over` asks; `--quiet` always.
 */
export function tinkerTrainArgs(
  out: string,
  tokenizer: string,
  over: Readonly<Record<string, string | number | boolean>> = {},
): string[] {
  const flags = {
    learner: 'tinker',
    baseModel: 'Qwen/Qwen3-8B',
    tokenizer,
    suite: 'mini',
    validateEvery: 0,
    evalStart: false,
    evalFinal: false,
    ...over,
  };
  return [
    'train',
    ...Object.entries(flags).flatMap(([k, v]) => [flagOf(k), String(v)]),
    '--quiet',
    '--out',
    out,
  ];
}

/** a file's sha256, hex */
export const sha256 = (path: string): string => createHash('sha256').update(readFileSync(path)).digest('hex');

/** every file under `dir` (relative path -> sha256): a folder compared byte for byte */
export function fileHashes(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else out[relative(dir, p)] = sha256(p);
    }
  };
  walk(dir);
  return out;
}

/**
 * What two runs of the same seed and rounds must share, up to the clock: the round records, the
 * rollouts, the state, and the weights and Adam moments of the round-`last` checkpoint.
 */
export function trainedRecord(dir: string, last: string) {
  return {
    rounds: timelessLines(join(dir, 'rounds.jsonl')),
    rollouts: readdirSync(join(dir, 'rollouts'))
      .sort()
      .map((f) => timelessLines(join(dir, 'rollouts', f))),
    state: timeless(readFileSync(join(dir, 'state.json'), 'utf8')),
    model: sha256(join(dir, 'checkpoints', last, 'model.bin')),
    optimizer: sha256(join(dir, 'checkpoints', last, 'optimizer.bin')),
  };
}
