/**
 * The smallest `seal train` a test can run as a real process, and the record it leaves read
 * without what only the clock decides. Each test states only where its run differs.
 */
import { readFileSync } from 'node:fs';
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
