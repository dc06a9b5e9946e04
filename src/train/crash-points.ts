/**
 * Crash points, for the kill tests: with `SEAL_TEST_KILL_AT=ROUND:WRITE` in the environment, a
 * `seal train` process kills itself with SIGKILL right after that write of that round, leaving the
 * run folder exactly as a kill at that write boundary leaves it (the writes are whole files, by
 * rename, in the order of ROUND_WRITES). Unset, as everywhere outside the tests, nothing happens.
 */

/** the writes of a round, in the order they happen (validation only in a validated round) */
export const ROUND_WRITES = ['checkpoint', 'validation', 'rollouts', 'state', 'line', 'pruned'] as const;
export type RoundWrite = (typeof ROUND_WRITES)[number];

export const KILL_AT_ENV = 'SEAL_TEST_KILL_AT';

/**
 * the writes of `--resume --rounds N` raising a finished run's budget, in order: run.json, the
 * final evaluation moved aside, finished.json removed (not a round's: ROUND_WRITES leaves them out)
 */
export const EXTENSION_WRITES = ['extension', 'eval-final-moved'] as const;

/** called right after `write` of `round` is on disk */
export function crashPoint(round: number, write: RoundWrite | (typeof EXTENSION_WRITES)[number]): void {
  if (process.env[KILL_AT_ENV] === `${round}:${write}`) process.kill(process.pid, 'SIGKILL');
}
