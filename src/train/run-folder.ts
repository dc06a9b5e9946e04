/**
 * The run folder on disk (layout in record.ts). The commit point of a round is `state.json`: it is
 * written last, atomically, after the round's rollouts and checkpoint; resume continues from the
 * round it names. `rounds.jsonl` is appended after it, and resume repairs it from the state (a line
 * torn by a kill, or a line written past the state, is dropped; a missing last line is restored).
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { InterfaceState } from '../seal/interface/state.js';
import type { FailureProfileJSON } from '../seal/profile.js';
import { UserError } from '../util/errors.js';
import { appendJsonLine, readJsonLines, writeJsonAtomic, writeJsonLines } from '../util/files.js';
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

  create(manifest: RunManifest): void {
    if (existsSync(this.dir) && readdirSync(this.dir).length > 0)
      throw new RunFolderError(
        `${this.dir} is not empty; give a new --out folder, or continue that run with seal train --resume ${this.dir}`,
      );
    mkdirSync(this.dir, { recursive: true });
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
    if (state.lastRound) appendJsonLine(this.path(RUN_FILES.rounds), state.lastRound);
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

  /** removes checkpoints of rounds other than `keep` (and anything a killed round left) */
  pruneCheckpoints(keep: string | null): void {
    const root = this.path(RUN_FILES.checkpoints);
    if (!existsSync(root)) return;
    for (const name of readdirSync(root)) {
      if (keep !== null && join(RUN_FILES.checkpoints, name) === keep) continue;
      rmSync(join(root, name), { recursive: true, force: true });
    }
  }
}
