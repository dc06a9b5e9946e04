/**
 * The run folder on disk (layout in record.ts). The commit point of a round is `state.json`: it is
 * written last, atomically, after the round's rollouts and checkpoint; resume continues from the
 * round it names. `rounds.jsonl` is appended after it, and resume repairs it from the state (a line
 * torn by a kill, or a line written past the state, is dropped; a missing last line is restored).
 */
import { existsSync, readdirSync, readFileSync, rmdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { lockRunFolder } from '../eval/folder.js';
import type { InterfaceState } from '../seal/interface/state.js';
import type { FailureProfileJSON } from '../seal/profile.js';
import { UserError } from '../util/errors.js';
import { appendJsonLine, readJsonLines, writeJsonAtomic, writeJsonLines } from '../util/files.js';
import { prepareOutDir } from '../util/out-dir.js';
import { crashPoint } from './crash-points.js';
import {
  type RolloutRecord,
  type RoundRecord,
  RUN_FILES,
  RUN_FORMAT,
  type RunManifest,
  roundName,
} from './record.js';
import type { TaskRates } from './tasks.js';

export class RunFolderError extends UserError {}

/** the file `seal eval`'s lock writes: the pid of the process that owns the folder */
export const LOCK_FILE = '.lock';

/** what resume needs beyond the checkpoint */
export interface TrainState {
  /** the last completed round (0: none yet) */
  readonly round: number;
  /** the checkpoint of the policy after `round`, relative to the run folder */
  readonly checkpoint: string | null;
  /** the interface the next round shows */
  readonly interface: InterfaceState;
  readonly profile: FailureProfileJSON;
  /** the latest group success rate of every task trained on (absent in runs older than `revisit`) */
  readonly taskRates?: TaskRates;
  /** the record of `round`, to restore a rounds.jsonl line a kill prevented */
  readonly lastRound: RoundRecord | null;
  /**
   * off-policy (maxStepsOffPolicy): the older weights the next round samples from, kept until it
   * is committed; absent: the next round samples from `checkpoint`
   */
  readonly nextSampler?: SamplerWeights;
}

/** weights a round samples from: a checkpoint of the run, or (null) the start weights */
export interface SamplerWeights {
  readonly checkpoint: string | null;
  /** optimiser steps the weights hold */
  readonly version: number;
}

/** removes the lock of `dir` if this process holds it (for an exit that skips the usual release) */
export function releaseOwnLock(dir: string): void {
  const path = join(dir, LOCK_FILE);
  try {
    if (readFileSync(path, 'utf8').trim() === String(process.pid)) rmSync(path);
  } catch {
    // not there, or not ours
  }
}

const isRound = (r: unknown): r is RoundRecord =>
  typeof r === 'object' && r !== null && Number.isInteger((r as RoundRecord).round);

export class RunFolder {
  constructor(readonly dir: string) {}

  path(...parts: string[]): string {
    return join(this.dir, ...parts);
  }

  get exists(): boolean {
    return existsSync(this.path(RUN_FILES.manifest));
  }

  /** throws unless the folder can be a new run's (checked as `--out`); writes nothing */
  checkNew(): void {
    prepareOutDir(this.dir, '--out', { create: false });
    if (existsSync(this.dir) && readdirSync(this.dir).length > 0) throw this.notEmpty();
  }

  private notEmpty(): RunFolderError {
    return new RunFolderError(
      existsSync(this.path(RUN_FILES.manifest))
        ? `${this.dir} already holds a seal train run; continue it with seal train --resume ${this.dir}, or give a new --out folder`
        : `${this.dir} is not empty; give a new --out folder`,
    );
  }

  /**
   * Makes the folder (checked as `--out`, before any work) and takes it for this process; throws
   * when it is not a new, empty folder. Returns the release of the lock.
   */
  claimNew(): () => void {
    const created = prepareOutDir(this.dir, '--out');
    const release = lockRunFolder(this.dir);
    const others = readdirSync(this.dir).filter((f) => f !== LOCK_FILE);
    if (others.length > 0) {
      release();
      throw this.notEmpty();
    }
    return () => {
      release();
      // a run that failed before its manifest leaves nothing behind
      if (existsSync(this.path(RUN_FILES.manifest))) return;
      for (const d of [...created].reverse())
        try {
          rmdirSync(d);
        } catch {
          // not empty: something else was put there meanwhile
        }
    };
  }

  /** takes an existing run folder for this process (one writer at a time); returns the release */
  claim(): () => void {
    return lockRunFolder(this.dir);
  }

  create(manifest: RunManifest): void {
    writeJsonAtomic(this.path(RUN_FILES.manifest), manifest);
  }

  manifest(): RunManifest {
    const p = this.path(RUN_FILES.manifest);
    if (!existsSync(p))
      throw new RunFolderError(`${this.dir} is not a seal train run folder (no ${RUN_FILES.manifest})`);
    let m: RunManifest;
    try {
      m = JSON.parse(readFileSync(p, 'utf8')) as RunManifest;
    } catch (e) {
      throw new RunFolderError(`${p} is not valid JSON (${(e as Error).message})`);
    }
    if (m?.format !== RUN_FORMAT) throw new RunFolderError(`${p} is not a seal train manifest`);
    return m;
  }

  state(): TrainState | null {
    const p = this.path(RUN_FILES.state);
    if (!existsSync(p)) return null;
    try {
      return JSON.parse(readFileSync(p, 'utf8')) as TrainState;
    } catch (e) {
      throw new RunFolderError(`${p} is damaged (${(e as Error).message}); the run cannot be resumed`);
    }
  }

  /** the round's rollouts, written whole before the round is committed */
  writeRollouts(round: number, rows: readonly RolloutRecord[]): void {
    writeJsonLines(this.path(RUN_FILES.rolloutsDir, `${roundName(round)}.jsonl`), rows);
  }

  commit(state: TrainState): void {
    writeJsonAtomic(this.path(RUN_FILES.state), state);
    crashPoint(state.round, 'state');
    if (state.lastRound) appendJsonLine(this.path(RUN_FILES.rounds), state.lastRound);
    crashPoint(state.round, 'line');
  }

  /** the completed rounds; with `state`, rounds.jsonl is first made to agree with it */
  rounds(state?: TrainState | null): RoundRecord[] {
    const p = this.path(RUN_FILES.rounds);
    const { rows } = readJsonLines(p, isRound);
    if (state === undefined) return rows;
    const upTo = state?.round ?? 0;
    const kept = rows.filter((r) => r.round <= upTo);
    if (state?.lastRound && !kept.some((r) => r.round === upTo)) kept.push(state.lastRound);
    if (kept.length !== rows.length || kept.some((r, i) => r !== rows[i])) writeJsonLines(p, kept);
    return kept;
  }

  checkpointDir(round: number): string {
    return join(RUN_FILES.checkpoints, roundName(round));
  }

  /** removes checkpoints other than those in `keep` (and anything a killed round left) */
  pruneCheckpoints(keep: readonly (string | null)[]): void {
    const root = this.path(RUN_FILES.checkpoints);
    if (!existsSync(root)) return;
    for (const name of readdirSync(root)) {
      if (keep.includes(join(RUN_FILES.checkpoints, name))) continue;
      rmSync(join(root, name), { recursive: true, force: true });
    }
  }
}
