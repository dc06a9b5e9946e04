/**
 * The run record of `seal train`: what a training run leaves in its folder, as plain JSON a person
 * can read and a tool can load (the report, `seal compare`, resume). Every file is written
 * atomically or appended a whole line at a time, so a run killed at any moment leaves a readable
 * record of its completed rounds.
 *
 *   run.json                      RunManifest: method, seed, config and overrides, code version, base
 *   rounds.jsonl                  one RoundRecord per completed round, in order
 *   rollouts/round-NNNN.jsonl     one RolloutRecord per rollout of round NNNN (1-based)
 *   validation/round-NNNN/        strict validation after round NNNN: an eval run folder
 *   eval-start/, eval-final/      strict evaluation of the start and final policy: eval run folders
 *                                 (summary.json in the `seal verify --json` shape, results.jsonl)
 *   checkpoints/round-NNNN/       the policy after the last completed round, with the optimiser state
 *   state.json                    what resume needs beyond the checkpoint: the commit point of a round
 *   .lock                         while a process writes the folder: its pid (run-folder.ts)
 *
 * An eval run folder is what `seal eval --out` writes (src/bfcl/eval.ts).
 *
 * The records of a round are built here, pure, from what the round's phases produced
 * (rolloutRecords, roundRecord); the loop (loop.ts) only measures, writes and commits them.
 */

import type { AbstentionCount } from '../bfcl/abstention.js';
import type { Summary } from '../bfcl/summary.js';
import type { Category, SuiteName } from '../envs/bfcl/data/tasks.js';
import type { BilledUsage } from '../learner/learner.js';
import type { InterfaceState } from '../seal/interface/state.js';
import type { Label } from '../seal/labels.js';
import type { ProfileSnapshot } from '../seal/profile.js';
import type { Trajectory } from '../seal/trajectory.js';
import type { RolloutCredit } from './credit.js';
import type { RoundUsage } from './usage.js';

export const RUN_FORMAT = 'seal-train-run' as const;
export const RUN_VERSION = 1 as const;

/**
 * The five methods of the paper's comparison (docs/method.md, sections 2 and 8): each switch changes
 * exactly what it names and nothing else.
 *   seal            the full loop: interface evolved every round, advantages scaled by w_j
 *   vanilla         plain GRPO: the base interface (no cues at all), w_j = 1
 *   no-env          no interface evolution: the base interface every round, w_j as in seal
 *   no-reweight     w_j = 1, the interface evolves as in seal
 *   no-closed-loop  the interface evolves once, after round 1, then stays frozen; w_j as in seal
 */
export const METHODS = ['seal', 'vanilla', 'no-env', 'no-reweight', 'no-closed-loop'] as const;
export type Method = (typeof METHODS)[number];

export const RUN_FILES = {
  manifest: 'run.json',
  rounds: 'rounds.jsonl',
  rolloutsDir: 'rollouts',
  validationDir: 'validation',
  evalStart: 'eval-start',
  evalFinal: 'eval-final',
  checkpoints: 'checkpoints',
  state: 'state.json',
  finished: 'finished.json',
  report: 'report.html',
} as const;

/** `rollouts/round-0007.jsonl`, `validation/round-0007` */
export const roundName = (round: number): string => `round-${String(round).padStart(4, '0')}`;

export interface RunManifest {
  readonly format: typeof RUN_FORMAT;
  readonly version: typeof RUN_VERSION;
  readonly method: Method;
  readonly seed: number;
  readonly suite: SuiteName;
  /** the whole resolved configuration (every key, defaults included) */
  readonly config: Readonly<Record<string, unknown>>;
  /** the keys the user set (config file or flags) and their values */
  readonly overrides: Readonly<Record<string, unknown>>;
  /** the command line that started the run */
  readonly command: string;
  readonly code: {
    readonly version: string;
    readonly git?: string;
    /** present and true when src/, bin/ or package.json differed from the commit `git` */
    readonly dirty?: boolean;
    readonly kernels?: string;
    /** the kernels training ran on (`--kernels` as resolved on the machine), when not wasm */
    readonly trainingKernels?: string;
    /** hash of the sources that decide rewards and scores (code-version.ts) */
    readonly sources?: string;
  };
  /** each resume on other code than the run last ran on: after which round, and the new code */
  readonly codeChanges?: readonly {
    readonly afterRound: number;
    readonly code: RunManifest['code'];
    readonly at: string;
  }[];
  /**
   * each `--resume --rounds N` that raised the budget: `config.rounds`, `overrides.rounds` and
   * `budget` hold the latest one, and these the history (absent: never extended)
   */
  readonly extensions?: readonly RunExtension[];
  readonly base: {
    /** checkpoint directory as given, and the sha256 of its weights */
    readonly checkpoint: string;
    readonly modelSha256: string;
  };
  readonly budget: {
    readonly rounds: number;
    readonly tasksPerRound: number;
    readonly groupSize: number;
    /** rounds x tasks x group size */
    readonly rollouts: number;
  };
  readonly sampling: { readonly temperature: number; readonly topP: number; readonly maxTokens: number };
  /** the learner when it is not the embedded one (absent: embedded) */
  readonly learner?: TinkerLearnerRecord;
  /** ISO time */
  readonly started: string;
}

/** what a `--learner tinker` run trained on */
export interface TinkerLearnerRecord {
  readonly kind: 'tinker';
  /** the service's URL */
  readonly service: string;
  readonly baseModel: string;
  readonly loraRank: number;
  /** the wire form asked for, and the one forward_backward went out in at the start */
  readonly wire: { readonly asked: string; readonly used: string };
  /** the tokenizer folder's name and the sha256 of its tokenizer.json and chat template */
  readonly tokenizer: { readonly name: string; readonly sha256: string };
  /** the renderer the run rendered with (a family's name, or hf_template; runs before it: absent) */
  readonly renderer?: string;
  readonly format: string;
  /** the KL term to the base: on (a base-model sampling session) or off, and why */
  readonly kl: { readonly on: boolean; readonly reason: string };
  /** the learning rate and where it came from: the LoRA rule, or the user (runs before it: absent) */
  readonly lr?: { readonly value: number; readonly source: string };
}

/** one raise of a run's round budget (`seal train --resume DIR --rounds N`) */
export interface RunExtension {
  /** the last committed round when the budget was raised */
  readonly afterRound: number;
  /** the budget before, and after */
  readonly fromRounds: number;
  readonly toRounds: number;
  /** ISO time */
  readonly at: string;
  /** the command line that raised it */
  readonly command: string;
  /** the run had finished: its finished.json of the budget before, kept here as it was */
  readonly finished?: RunFinished;
  /**
   * where the final evaluation of the budget before went (relative to the run folder): eval-final/
   * is the final evaluation of the latest budget, made after its last round
   */
  readonly evalFinal?: string;
}

/** where the final evaluation of a finished run goes when its budget is raised after round `round` */
export const earlierFinalDir = (round: number): string => `${RUN_FILES.evalFinal}-${roundName(round)}`;

/** `finished.json`: written once the last round and the final evaluation are done */
export interface RunFinished {
  /** ISO time */
  readonly finished: string;
  readonly rounds: number;
  /** wall time of the strict evaluations; `null` when the start one was reused from the cache */
  readonly evalStartMs?: number | null;
  readonly evalFinalMs?: number;
  /**
   * a remote learner's bill for the run's sessions as the service stated it when the run ended
   * (its data lags by hours: `unpriced` rows are not in the cost yet), or why it could not be read
   */
  readonly billing?: BilledUsage | { readonly unavailable: string };
}

/** aggregate statistics of one round's rollouts */
export interface RolloutStats {
  readonly count: number;
  readonly meanReward: number;
  /** share of tasks (groups) with at least one successful rollout */
  readonly groupSuccess: number;
  /** groups whose rewards differ (the only ones with a nonzero GRPO advantage) */
  readonly groupsWithVariance: number;
  readonly meanCompletionTokens: number;
  readonly steps: number;
  /** steps whose output did not parse into tool calls */
  readonly parseErrors: number;
}

/** summary of numbers across a round's rollouts */
export interface Distribution {
  readonly mean: number;
  readonly min: number;
  readonly max: number;
  /** counts over `edges.length - 1` equal bins */
  readonly histogram?: { readonly edges: readonly number[]; readonly counts: readonly number[] };
}

export interface LearnerStats {
  readonly loss: number;
  readonly pgLoss: number;
  /** token-mean k3 KL to the reference policy */
  readonly kl: number;
  readonly clipFrac: number;
  /** the mean ratio pi/pi_old over the trained tokens (1 when the sampler and trainer agree) */
  readonly meanRatio?: number;
  /** sampler against trainer where the learner says (ForwardBackwardResult) */
  readonly samplerKl?: number;
  readonly samplerEntropy?: number;
  readonly gradNorm: number;
  /** tokens that carried loss */
  readonly tokens: number;
  readonly sequences: number;
  readonly lr: number;
  /** optimiser steps taken this round (0 when no group had reward variance) */
  readonly steps: number;
  /** the supervised anchor's demonstrations in this round's update (`anchorCoef`), as first seen */
  readonly anchor?: { readonly loss: number; readonly tokens: number; readonly sequences: number };
  /**
   * the guided update (`guidedUpdate`): the trained tokens and sequences of the original-prompt
   * copies of rollouts sampled under the interface, part of `tokens` and `sequences`
   */
  readonly guided?: { readonly tokens: number; readonly sequences: number };
}

export interface ValidationRecord {
  /** the round after which the policy was validated (0: before training) */
  readonly round: number;
  readonly summary: Summary;
  /**
   * per category, the empty-ground-truth turns answered without a call (on miss_param: asking for
   * the missing value), the internalisation curve of a habit the interface speaks to; absent in
   * runs recorded before it
   */
  readonly abstention?: Partial<Record<Category, AbstentionCount>>;
  /** the eval run folder, relative to the run folder */
  readonly dir: string;
}

export interface RoundTimings {
  /** wall time of the policy's sampling */
  readonly samplingMs: number;
  /** environment, verifier and diagnosis */
  readonly envMs: number;
  readonly learnMs: number;
  readonly validationMs: number;
  readonly totalMs: number;
}

export interface RoundRecord {
  /** 1-based */
  readonly round: number;
  /** the policy version the rollouts were sampled from (0 = the base) */
  readonly policyVersion: number;
  readonly tasks: readonly string[];
  /** the ones among `tasks` trained on before (drawn again by `revisit`) */
  readonly revisited?: readonly string[];
  readonly rollouts: RolloutStats;
  /** label counts over every user turn of the round's rollouts */
  readonly labels: Readonly<Partial<Record<Label, number>>>;
  /** the failure profile after observing this round */
  readonly profile: ProfileSnapshot;
  /** the interface the round's rollouts were shown */
  readonly interface: InterfaceState;
  /** the interface for the next round, evolved from this round's profile (same as `interface` when frozen) */
  readonly nextInterface: InterfaceState;
  readonly weights: Distribution;
  /** |A_j| and |w_j A_j| over the round's rollouts */
  readonly advantages: { readonly meanAbs: number; readonly meanAbsWeighted: number };
  readonly learner: LearnerStats;
  readonly timings: RoundTimings;
  /** tokens, request times and estimated cost of the round (usage.ts) */
  readonly usage?: RoundUsage;
  readonly validation?: ValidationRecord;
  /** the code the round ran on (run.json's `code` without the kernel labels) */
  readonly code?: RunManifest['code'];
  /** ISO time the round was completed */
  readonly finished: string;
}

export interface RolloutRecord {
  readonly round: number;
  readonly policyVersion: number;
  readonly taskId: string;
  readonly category: Category;
  /** index of the task's group within the round, and of the rollout within its group */
  readonly group: number;
  readonly sample: number;
  readonly reward: 0 | 1;
  /** whether it saw the training interface (absent in records written before this was kept) */
  readonly interfaceShown?: boolean;
  /** one diagnosis label per user turn */
  readonly labels: readonly Label[];
  /** w_j (1 when the method does not reweight) */
  readonly weight: number;
  /** A_j, the group-relative advantage, and the w_j A_j the update used */
  readonly advantage: number;
  readonly weightedAdvantage: number;
  readonly completionTokens: number;
  readonly trajectory: Trajectory;
}

/** A rollout as the sampling and diagnosis phases left it: what its record is built from. */
export interface PlayedRollout {
  readonly task: { readonly id: string; readonly category: Category };
  readonly group: number;
  readonly sample: number;
  readonly trajectory: Trajectory;
  /** false where the method shows no interface, or beyond `interfaceShare` of the group */
  readonly interfaceShown: boolean;
  /** one diagnosis label per user turn */
  readonly labels: readonly Label[];
  /** the sampled completion of each step */
  readonly steps: readonly { readonly tokenIds: readonly number[] }[];
}

/** One record per rollout, in play order, with the credit the update gave it. */
export function rolloutRecords(
  round: number,
  policyVersion: number,
  played: readonly PlayedRollout[],
  credit: readonly RolloutCredit[],
): RolloutRecord[] {
  return played.map((p, i) => ({
    round,
    policyVersion,
    taskId: p.task.id,
    category: p.task.category,
    group: p.group,
    sample: p.sample,
    reward: p.trajectory.reward,
    interfaceShown: p.interfaceShown,
    labels: p.labels,
    weight: credit[i]!.weight,
    advantage: credit[i]!.advantage,
    weightedAdvantage: credit[i]!.weightedAdvantage,
    completionTokens: p.steps.reduce((s, st) => s + st.tokenIds.length, 0),
    trajectory: p.trajectory,
  }));
}

/** The rewards of each of a round's `groups` groups (one task each), in play order. */
export function groupRewards(
  groups: number,
  rows: readonly { readonly group: number; readonly reward: number }[],
): number[][] {
  return Array.from({ length: groups }, (_, g) => rows.filter((r) => r.group === g).map((r) => r.reward));
}

/** mean, range and a histogram of `bins` equal bins over [lo, hi] (values outside go to the end bins) */
export function distribution(xs: readonly number[], lo: number, hi: number, bins = 10): Distribution {
  if (xs.length === 0) return { mean: 0, min: 0, max: 0 };
  const counts = new Array<number>(bins).fill(0);
  for (const x of xs) counts[Math.min(bins - 1, Math.max(0, Math.floor(((x - lo) / (hi - lo)) * bins)))]!++;
  return {
    mean: xs.reduce((a, b) => a + b, 0) / xs.length,
    min: Math.min(...xs),
    max: Math.max(...xs),
    histogram: { edges: Array.from({ length: bins + 1 }, (_, i) => lo + ((hi - lo) * i) / bins), counts },
  };
}

/** What a round's phases produced, as the round record needs it. */
export interface RoundOutcome {
  readonly round: number;
  readonly policyVersion: number;
  /** the round's tasks, one group each, in group order */
  readonly tasks: readonly string[];
  readonly revisited: readonly string[];
  /** rolloutRecords of the round */
  readonly rows: readonly RolloutRecord[];
  readonly profile: ProfileSnapshot;
  /** the interface the rollouts were shown, and the next round's (as the method shows them) */
  readonly interface: InterfaceState;
  readonly nextInterface: InterfaceState;
  readonly credit: readonly RolloutCredit[];
  /** the clip range of w_j, the weights' histogram range */
  readonly weightRange: { readonly wMin: number; readonly wMax: number };
  readonly learner: LearnerStats;
  readonly timings: RoundTimings;
  readonly usage?: RoundUsage;
  readonly validation?: ValidationRecord;
  readonly code?: RunManifest['code'];
  /** ISO time */
  readonly finished: string;
}

/** The round's line of rounds.jsonl. */
export function roundRecord(o: RoundOutcome): RoundRecord {
  const { rows, credit } = o;
  const labelCounts: Partial<Record<Label, number>> = {};
  for (const r of rows) for (const l of r.labels) labelCounts[l] = (labelCounts[l] ?? 0) + 1;
  const rewardsByGroup = groupRewards(o.tasks.length, rows);
  const allSteps = rows.flatMap((r) => r.trajectory.turns.flatMap((t) => t.steps));
  const rollouts: RolloutStats = {
    count: rows.length,
    meanReward: rows.reduce((s, r) => s + r.trajectory.reward, 0) / rows.length,
    groupSuccess: rewardsByGroup.filter((g) => g.some((r) => r === 1)).length / o.tasks.length,
    groupsWithVariance: rewardsByGroup.filter((g) => new Set(g).size > 1).length,
    meanCompletionTokens: rows.reduce((s, r) => s + r.completionTokens, 0) / rows.length,
    steps: allSteps.length,
    parseErrors: allSteps.filter((s) => s.parseError !== undefined).length,
  };
  return {
    round: o.round,
    policyVersion: o.policyVersion,
    tasks: o.tasks,
    revisited: o.revisited,
    rollouts,
    labels: labelCounts,
    profile: o.profile,
    interface: o.interface,
    nextInterface: o.nextInterface,
    weights: distribution(
      credit.map((x) => x.weight),
      o.weightRange.wMin,
      o.weightRange.wMax,
    ),
    advantages: {
      meanAbs: credit.reduce((s, x) => s + Math.abs(x.advantage), 0) / credit.length,
      meanAbsWeighted: credit.reduce((s, x) => s + Math.abs(x.weightedAdvantage), 0) / credit.length,
    },
    learner: o.learner,
    timings: o.timings,
    ...(o.usage ? { usage: o.usage } : {}),
    ...(o.validation ? { validation: o.validation } : {}),
    ...(o.code ? { code: o.code } : {}),
    finished: o.finished,
  };
}
