/**
 * Records a live episode into a trajectory: each step's raw text, its parsed calls or parse
 * error, every call's evidence, and at the end the official verdict per turn. BFCL's suite
 * episode tells it each step it plays (`played`, the rollout's and `seal serve`'s path); tests drive
 * it with scripted outputs (`step`, `nextTurn`).
 */

import type { DecodedStep } from '../agent/format.js';
import type { BfclData, BfclTask } from '../envs/bfcl/data/tasks.js';
import { BfclEpisode, type EpisodeOptions, type StepOutcome } from '../envs/bfcl/episode.js';
import type { PlayedStep } from '../envs/bfcl/suite.js';
import type { MessageMeta } from '../envs/suite.js';
import type { StepRecord, Trajectory } from '../seal/trajectory.js';
import { assembleTrajectory, CallRecorder, checkerFailure, checkWithDetail } from './trajectory.js';

export type StepMeta = MessageMeta;

export class EpisodeRecorder {
  readonly episode: BfclEpisode;
  private readonly recorder: CallRecorder;
  private readonly steps: StepRecord[][] = [[]];
  /** training only: the interface parts left out of the episode's prompts (see Trajectory) */
  interfaceDropped: readonly string[] = [];
  /** why the rollout ended early: a sample that failed for good (the episode was aborted) */
  sampleFailure: string | undefined;

  constructor(
    readonly task: BfclTask,
    private readonly data: BfclData,
    options: EpisodeOptions & { recorder?: CallRecorder } = {},
  ) {
    this.episode = new BfclEpisode(task, data, {
      ...(options.modelName ? { modelName: options.modelName } : {}),
      ...(options.maxStepsPerTurn !== undefined ? { maxStepsPerTurn: options.maxStepsPerTurn } : {}),
    });
    this.recorder = options.recorder ?? new CallRecorder(data);
  }

  /**
   * Play one step. Calls run; a text answer or a parse error ends the turn (as in the official
   * inference loop), but the parse error is kept as evidence.
   */
  step(decoded: DecodedStep, meta: StepMeta = {}): StepOutcome {
    const turn = this.episode.turn;
    const available = new Set(this.episode.functions.map((f) => f.name));
    const calls = decoded.kind === 'calls' ? decoded.calls : [];
    const outcome = this.episode.act(calls);
    this.played({
      turn,
      calls,
      results: outcome.results,
      available,
      ...(decoded.kind === 'parse_error' ? { unparsed: decoded.error } : {}),
      meta,
    });
    return outcome;
  }

  /**
   * Record a step the episode played (`BfclSuiteEpisode`'s `onStep`): its calls' evidence, the
   * sampler's facts, and output that did not decode.
   */
  played(step: PlayedStep): void {
    const record: StepRecord = {
      ...step.meta,
      ...(step.unparsed !== undefined ? { parseError: step.unparsed } : {}),
      calls: step.calls.map((c, i) => this.recorder.record(c, step.results[i]!, step.available)),
    };
    while (this.steps.length <= step.turn) this.steps.push([]);
    this.steps[step.turn]!.push(record);
  }

  /** The step recorded last in the current turn. */
  lastStep(): StepRecord | undefined {
    return this.steps[this.episode.turn]?.at(-1);
  }

  /** Advance to the next user turn; false when the dialogue is over. */
  nextTurn(): boolean {
    const more = this.episode.nextTurn();
    if (more) while (this.steps.length <= this.episode.turn) this.steps.push([]);
    return more;
  }

  /** The trajectory with the official verdict (replayed on fresh instances, as the evaluator does). */
  finish(): Trajectory {
    const t = this.assemble();
    return {
      ...t,
      ...(this.interfaceDropped.length > 0 ? { interfaceDropped: this.interfaceDropped } : {}),
      ...(this.sampleFailure !== undefined ? { sampleFailure: this.sampleFailure } : {}),
    };
  }

  private assemble(): Trajectory {
    let checked: ReturnType<typeof checkWithDetail>;
    try {
      checked = checkWithDetail(this.task, this.episode.modelResult(), this.data);
    } catch (e) {
      return checkerFailure(this.task, this.data, e);
    }
    return assembleTrajectory({
      task: this.task,
      data: this.data,
      recorder: this.recorder,
      ...checked,
      forceQuit: this.episode.forceQuitted,
      stepsFor: (t) => this.steps[t.turn] ?? [],
    });
  }
}
