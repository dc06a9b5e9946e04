/**
 * The SEAL loop (docs/method.md, section 2: The loop), one round at a time:
 *
 *   tasks -> G rollouts each through the current interface (training mode) -> verify + diagnose
 *   -> failure profile -> GRPO advantages x w_j -> one learner update -> evolve the interface
 *   -> (every k rounds) strict validation without any interface, on the development split
 *
 * `runRounds` reads as those phases, one function each (sampleRound, diagnoseRound, creditRound,
 * nextInterface, learnRound with the checkpoint, validateRound, recordRound, commitRound); the
 * credit math is credit.ts's and the round's record is built by record.ts, both pure.
 *
 * With `maxStepsOffPolicy` (a learner that samples saved weights: Tinker), round r+1 is sampled
 * while round r trains: it starts once round r is diagnosed, from the weights before round r's
 * update, and a kill before round r+1 commits samples it again from those weights.
 *
 * It knows the suite, the sampler and the learner only through their contracts. Each method of
 * the comparison changes exactly one thing (record.ts, METHODS). Everything a round produces is on
 * disk before the next one starts, and a killed run resumes from its last completed round with the
 * same results: tasks and sampling seeds are functions of (seed, round, task, sample, step), and
 * the learner's weights and optimiser state are saved exactly.
 */
import { mkdirSync } from 'node:fs';
import type { FormatAdapter } from '../agent/format.js';
import { formatAdapter } from '../agent/formats/index.js';
import { runEval } from '../bfcl/eval.js';
import { rollout } from '../bfcl/rollout.js';
import { CallRecorder } from '../bfcl/trajectory.js';
import type { BfclData, BfclTask } from '../envs/bfcl/data/tasks.js';
import type { EvalProgress } from '../eval/folder.js';
import type {
  ForwardBackwardResult,
  Learner,
  LearnerUsage,
  SamplingPolicy,
  TrainingDatum,
} from '../learner/learner.js';
import type { CompletionRequest, Policy } from '../policy/policy.js';
import { diagnose, labelsOf } from '../seal/diagnosis.js';
import {
  evolve,
  type InterfaceConfig,
  type InterfaceState,
  initialInterfaceState,
} from '../seal/interface/state.js';
import { type TrainingContext, trainingContext } from '../seal/interface.js';
import type { Label } from '../seal/labels.js';
import { FailureProfile, type ProfileSnapshot } from '../seal/profile.js';
import { mixSeed } from '../util/rng.js';
import { mapConcurrent } from '../util/semaphore.js';
import { anchorData } from './anchor.js';
import { type TrainConfig, toolFormat } from './config.js';
import { crashPoint } from './crash-points.js';
import { type RolloutCredit, roundCredit, stepAdvantages } from './credit.js';
import {
  groupRewards,
  type LearnerStats,
  type Method,
  type PlayedRollout,
  type RolloutRecord,
  type RoundRecord,
  RUN_FILES,
  rolloutRecords,
  roundName,
  roundRecord,
  type ValidationRecord,
} from './record.js';
import type { RunFolder, SamplerWeights, TrainState } from './run-folder.js';
import { RolloutSampler } from './sampler.js';
import { aggregateRollouts, dataTokens, packSteps, type SampledStep } from './sequences.js';
import {
  poolTasks,
  roundTasks,
  type TaskRates,
  trainingTasks,
  validationSource,
  validationTasks,
  withRevisits,
} from './tasks.js';
import { estimateCost, hasPrices, type RoundUsage, samplingTokens, timesSince } from './usage.js';

/** What each method switches (record.ts): whether rollouts see an interface, it evolves, w_j applies. */
export function methodSwitches(method: Method): {
  readonly interface: boolean;
  readonly evolve: 'every-round' | 'after-first-round' | 'never';
  readonly reweight: boolean;
} {
  switch (method) {
    case 'seal':
      return { interface: true, evolve: 'every-round', reweight: true };
    case 'vanilla':
      return { interface: false, evolve: 'never', reweight: false };
    case 'no-env':
      return { interface: false, evolve: 'never', reweight: true };
    case 'no-reweight':
      return { interface: true, evolve: 'every-round', reweight: false };
    case 'no-closed-loop':
      return { interface: true, evolve: 'after-first-round', reweight: true };
  }
}

export function interfaceConfig(c: TrainConfig): InterfaceConfig {
  return {
    components: { schemaCues: c.schemaCues, errorFeedback: c.errorFeedback, guidelines: c.guidelines },
    maxGuidelines: c.maxGuidelines,
  };
}

export const initialTrainState = (c: TrainConfig): TrainState => ({
  round: 0,
  checkpoint: null,
  interface: initialInterfaceState(interfaceConfig(c)),
  profile: new FailureProfile().toJSON(),
  taskRates: {},
  lastRound: null,
});

export interface RoundProgress {
  readonly round: number;
  readonly rounds: number;
  readonly phase: 'sampling' | 'learning' | 'validating';
  readonly done: number;
  readonly total: number;
}

/** the progress of a run's start or final evaluation on the test split */
export interface EvaluationProgress {
  readonly which: 'start' | 'final';
  readonly done: number;
  readonly total: number;
}

export interface LoopHooks {
  readonly log: (line: string) => void;
  readonly progress?: (p: RoundProgress) => void;
  /** the start and final evaluations, task by task (they take as long as several rounds) */
  readonly evaluation?: (p: EvaluationProgress) => void;
  /** a round was committed */
  readonly onRound?: (r: RoundRecord) => void;
}

export interface LoopContext {
  readonly config: TrainConfig;
  readonly data: BfclData;
  readonly learner: Learner;
  readonly run: RunFolder;
  readonly hooks: LoopHooks;
  /** the code the rounds run on, for their records */
  readonly code?: RoundRecord['code'];
  /** the task ids `trainPool` names (its file read by the caller); absent: the whole training split */
  readonly pool?: readonly string[];
}

/** what a method without the interface shows: every component off (the record keeps one shape) */
const NO_INTERFACE = initialInterfaceState({
  components: { schemaCues: 'off', errorFeedback: 'off', guidelines: 'off' },
});

/** what a validation subset is called in its eval record */
const validationSplit = (ctx: LoopContext, n: number): string =>
  `validation (${validationSource(ctx.data, n)}, seed ${ctx.config.seed})`;

/**
 * Strict evaluation (no interface, greedy) of the given tasks into an eval run folder; `split` is
 * what its record names them (a validation subset, or the test split).
 */
export async function validate(
  ctx: LoopContext,
  policy: SamplingPolicy,
  tasks: readonly BfclTask[],
  dir: string,
  round: number,
  split: string = validationSplit(ctx, tasks.length),
  report?: (done: number, total: number) => void,
): Promise<ValidationRecord> {
  const outcome = await runEval(
    ctx.data,
    tasks,
    policy,
    {
      suite: ctx.config.suite,
      model: policy.name,
      format: toolFormat(ctx.config),
      split,
      sampling: { temperature: 0, maxTokens: ctx.config.maxTokens },
    },
    ctx.run.path(dir),
    { concurrency: 8, ...(report ? { progress: taskCounter(report) } : {}) },
  );
  return { round, summary: outcome.summary, abstention: outcome.abstention, dir };
}

/** an evaluation's progress as (done, total) calls, tasks kept from an earlier try counted done */
function taskCounter(report: (done: number, total: number) => void): EvalProgress {
  let done = 0;
  let total = 0;
  return {
    start(t, already) {
      total = t;
      done = already;
      report(done, total);
    },
    tick() {
      report(++done, total);
    },
    stop() {},
  };
}

/** What stays fixed across a run's rounds. */
interface RunPlan {
  readonly switches: ReturnType<typeof methodSwitches>;
  readonly valTasks: readonly BfclTask[];
  readonly trainTasks: readonly BfclTask[];
  readonly format: FormatAdapter;
  readonly recorder: CallRecorder;
  readonly classOf: (name: string) => string | undefined;
  readonly tctx: TrainingContext;
  /** carried from round to round, restored from the state at the start */
  readonly profile: FailureProfile;
}

/** A rollout as sampling left it: its labels are filled in by the diagnosis. */
interface Played extends PlayedRollout {
  readonly task: BfclTask;
  readonly labels: Label[];
  readonly steps: readonly SampledStep[];
  /** guided update: each step's prompt as the original environment shows it (rollouts under the interface) */
  readonly originalPrompts?: readonly (readonly number[])[];
  /** guided update with a ratio floor: each step's completion logprobs after its original prompt, current weights */
  originalLogprobs?: readonly (readonly number[])[];
  /** the wall time it waited for the sampler, and its whole wall time */
  readonly sampleMs: number;
  readonly totalMs: number;
}

interface Sampled {
  /** the policy version the rollouts were sampled from */
  readonly version: number;
  readonly played: Played[];
  readonly wallMs: number;
}

/** Runs rounds `state.round + 1 .. config.rounds`; returns the state after the last one. */
export async function runRounds(ctx: LoopContext, start: TrainState): Promise<TrainState> {
  const { config: c, data, run } = ctx;
  const valTasks = validationTasks(data, c.seed, c.validationTasks);
  const train = trainingTasks(data, valTasks);
  const plan: RunPlan = {
    switches: methodSwitches(c.method),
    valTasks,
    trainTasks: ctx.pool ? poolTasks(train, ctx.pool, `trainPool ${c.trainPool}`) : train,
    format: formatAdapter(toolFormat(c)),
    recorder: new CallRecorder(data),
    classOf: (name: string) => data.docs.get(name)?.className,
    tctx: trainingContext(`seal train ${run.dir}`),
    profile: FailureProfile.fromJSON(start.profile),
  };
  let state = start;
  mkdirSync(run.path(RUN_FILES.rolloutsDir), { recursive: true });

  const offPolicy = c.maxStepsOffPolicy > 0;
  // the next round's sampling when it was started before this round trained
  let ahead: { readonly tasks: readonly BfclTask[]; readonly sampled: Promise<Sampled> } | undefined;
  let spent = ctx.learner.usage?.();
  for (let round = state.round + 1; round <= c.rounds; round++) {
    const t0 = performance.now();
    const rates = state.taskRates ?? {};
    const tasks = ahead?.tasks ?? planTasks(c, plan, data, round, rates);
    const sampled = await (ahead?.sampled ??
      sampleRound(ctx, plan, round, tasks, state.interface, offPolicy ? samplerOf(ctx, state) : 'current'));
    ahead = undefined;
    if (c.guidedUpdate && c.guidedRatioFloor > 0) await scoreOriginals(ctx, sampled.played);
    const diagnosed = diagnoseRound(plan, sampled.played);
    const credit = creditRound(c, plan.switches, sampled.played);
    const next = nextInterface(c, plan.switches, round, state.interface, diagnosed.snapshot);
    const taskRates = ratesAfter(tasks, rates, sampled.played);
    // off-policy: the next round samples now, while this one trains, through the interface this
    // round's diagnosis made and from the weights before this round's update: `passes` steps
    // behind those it will train (docs/method.md, section 2: timing)
    const before: SamplerWeights = { checkpoint: state.checkpoint, version: ctx.learner.version };
    if (offPolicy && round < c.rounds) {
      const nextTasks = planTasks(c, plan, data, round + 1, taskRates);
      const started = sampleRound(ctx, plan, round + 1, nextTasks, next, before);
      // a failure surfaces when the next round awaits it, not as an unhandled rejection meanwhile
      started.catch(() => undefined);
      ahead = { tasks: nextTasks, sampled: started };
    }
    // the anchor-only control trains on the anchor alone; its rollouts still say how it samples
    const checkpoint = run.checkpointDir(round);
    const learned = await learnRound(
      ctx,
      round,
      c.policyGradient ? credit.datums : [],
      c.policyGradient ? credit.guided : [],
      () => saveCheckpoint(ctx, round, checkpoint),
    );
    const saved = await validateRound(ctx, plan, round, checkpoint);
    const spentNow = ctx.learner.usage?.();
    const usage = roundUsage(c, sampled.played, learned, spent, spentNow);
    spent = spentNow;
    const recorded = recordRound(ctx, plan, {
      usage,
      round,
      t0,
      tasks,
      revisited: tasks.filter((t) => rates[t.id] !== undefined).map((t) => t.id),
      sampled,
      diagMs: diagnosed.ms,
      snapshot: diagnosed.snapshot,
      credit: credit.credit,
      learned,
      shown: state.interface,
      next,
      saved,
    });
    state = commitRound(ctx, plan, recorded, {
      checkpoint: saved.checkpoint,
      next,
      taskRates,
      ...(ahead ? { nextSampler: before } : {}),
    });
  }
  return state;
}

/** the round's tasks: a draw from the training split, with revisits of tasks seen before */
function planTasks(
  c: TrainConfig,
  plan: RunPlan,
  data: BfclData,
  round: number,
  rates: TaskRates,
): readonly BfclTask[] {
  return withRevisits(
    roundTasks(plan.trainTasks, c.seed, round, c.tasksPerRound),
    data.byId,
    rates,
    c.revisit,
    c.seed,
    round,
  );
}

/** the group success rate of every task of the round, over the rates before it */
function ratesAfter(tasks: readonly BfclTask[], rates: TaskRates, played: readonly Played[]): TaskRates {
  const out = { ...rates };
  const byGroup = groupRewards(
    tasks.length,
    played.map((p) => ({ group: p.group, reward: p.trajectory.reward })),
  );
  tasks.forEach((t, g) => {
    const rewards = byGroup[g]!;
    out[t.id] = rewards.filter((x) => x === 1).length / rewards.length;
  });
  return out;
}

/**
 * Off-policy, the weights the round after a commit samples from: those the state names (a round
 * sampled ahead and was not committed: a resume samples it again from the same weights), else the
 * last checkpoint's (or, before any, the start weights).
 */
function samplerOf(ctx: LoopContext, state: TrainState): SamplerWeights {
  return state.nextSampler ?? { checkpoint: state.checkpoint, version: ctx.learner.version };
}

/** 1. G rollouts per task through the current interface, all in flight at once. */
async function sampleRound(
  ctx: LoopContext,
  plan: RunPlan,
  round: number,
  tasks: readonly BfclTask[],
  iface: InterfaceState,
  from: SamplerWeights | 'current',
): Promise<Sampled> {
  const { config: c, data, learner, hooks, run } = ctx;
  const version = from === 'current' ? learner.version : from.version;
  const sampler = await (from === 'current' ? learner.samplingPolicy() : samplerAt(learner, run, from));
  const prepare = groupPrefetch(c, learner);
  // the first rollouts of every group see the interface, the rest the original environment
  const shownPerGroup = Math.round(c.groupSize * c.interfaceShare);
  const jobs = tasks.flatMap((task, group) =>
    Array.from({ length: c.groupSize }, (_, sample) => ({ task, group, sample })),
  );
  let done = 0;
  hooks.progress?.({ round, rounds: c.rounds, phase: 'sampling', done, total: jobs.length });
  const tSample = performance.now();
  // every rollout of the round in flight: the sampler decodes the requests waiting together
  const played = await mapConcurrent(jobs, jobs.length, async (job): Promise<Played> => {
    const r0 = performance.now();
    const rs = new RolloutSampler(sampler, mixSeed(c.seed, round, job.group, job.sample));
    const interfaceShown = plan.switches.interface && job.sample < shownPerGroup;
    const originalPrompts: (readonly number[])[] | undefined =
      interfaceShown && c.guidedUpdate ? [] : undefined;
    const trajectory = await rollout(job.task, data, rs, {
      format: plan.format,
      sampling: { temperature: c.temperature, topP: 1, maxTokens: c.maxTokens },
      onParseError: 'reply',
      onSampleFailure: 'end',
      maxStepsPerTurn: c.maxSteps,
      recorder: plan.recorder,
      ...(interfaceShown ? { trainingInterface: { ctx: plan.tctx, state: iface } } : {}),
      ...(originalPrompts
        ? { onOriginalRequest: (r: CompletionRequest) => originalPrompts.push(originalPromptIds(rs, r)) }
        : {}),
    });
    done++;
    hooks.progress?.({ round, rounds: c.rounds, phase: 'sampling', done, total: jobs.length });
    const p: Played = {
      ...job,
      trajectory,
      interfaceShown,
      labels: [],
      steps: rs.steps,
      // a sample that failed for good was asked for but never taken
      ...(originalPrompts ? { originalPrompts: originalPrompts.slice(0, rs.steps.length) } : {}),
      sampleMs: rs.waitedMs,
      totalMs: performance.now() - r0,
    };
    prepare(p);
    return p;
  });
  const failed = played.filter((p) => p.trajectory.sampleFailure !== undefined);
  if (failed.length > 0)
    hooks.log(
      `round ${round}: ${failed.length} rollout(s) ended by a sample the service refused, scored as forced quits (first: ${failed[0]!.trajectory.sampleFailure})`,
    );
  return { version, played, wallMs: performance.now() - tSample };
}

/** the prompt ids the sampler would condition on for the original environment's request */
function originalPromptIds(sampler: Policy, request: CompletionRequest): readonly number[] {
  if (!sampler.promptTokenIds)
    throw new Error(
      `guidedUpdate needs a sampler that renders its own prompts (the embedded model, a Tinker sampler); ${sampler.name} does not`,
    );
  return sampler.promptTokenIds(request);
}

/** a sampler on saved weights: a checkpoint of this run, or the start weights */
function samplerAt(learner: Learner, run: RunFolder, from: SamplerWeights): Promise<SamplingPolicy> {
  if (!learner.samplingPolicyAt)
    throw new Error('this learner cannot sample from saved weights (maxStepsOffPolicy needs learner tinker)');
  return learner.samplingPolicyAt(from.checkpoint === null ? null : run.path(from.checkpoint));
}

/**
 * The learner's head start on a group's update (the KL term's base-model prefills), given as soon
 * as the group's last rollout ends, while the rest of the round still samples. Only a group whose
 * rewards differ: one whose rewards agree has no advantage and trains nothing.
 */
function groupPrefetch(c: TrainConfig, learner: Learner): (p: Played) => void {
  const prepare = learner.prepare?.bind(learner);
  if (!prepare || c.klCoef === 0 || !c.policyGradient) return () => undefined;
  const groups = new Map<number, Played[]>();
  return (p) => {
    const group = groups.get(p.group) ?? [];
    group.push(p);
    groups.set(p.group, group);
    if (group.length < c.groupSize) return;
    if (group.every((q) => q.trajectory.reward === group[0]!.trajectory.reward)) return;
    prepare(
      group.flatMap((q) =>
        packSteps(
          q.steps,
          q.steps.map(() => 0),
        ),
      ),
    );
  };
}

/**
 * Guided update with a ratio floor: the current weights' logprobs of every copied completion after
 * its original prompt (the weights the round sampled from: the embedded learner is on-policy).
 */
async function scoreOriginals(ctx: LoopContext, played: readonly Played[]): Promise<void> {
  const { learner, config: c } = ctx;
  if (!learner.logprobs)
    throw new Error('guidedRatioFloor needs a learner that scores tokens (the embedded one)');
  const guided = played.filter((p) => p.originalPrompts);
  const sequences = guided.flatMap((p) =>
    p.steps.map((s, t) => ({
      tokens: [...p.originalPrompts![t]!, ...s.tokenIds],
      from: p.originalPrompts![t]!.length,
    })),
  );
  const scored = await learner.logprobs(sequences, c.temperature);
  let k = 0;
  for (const p of guided) p.originalLogprobs = p.steps.map(() => scored[k++]!);
}

/** 2. Labels for every user turn, and the failure profile after observing them. */
function diagnoseRound(plan: RunPlan, played: readonly Played[]): { snapshot: ProfileSnapshot; ms: number } {
  const t = performance.now();
  for (const p of played) p.labels.push(...labelsOf(diagnose(p.trajectory, plan.classOf)));
  plan.profile.resetWindow();
  for (const p of played)
    plan.profile.observe({
      taskId: p.task.id,
      category: p.task.category,
      reward: p.trajectory.reward,
      labels: p.labels,
    });
  const snapshot = plan.profile.snapshot();
  return { snapshot, ms: performance.now() - t };
}

/**
 * 3. Advantages x w_j (credit.ts), packed into training sequences. With the guided update, a
 * rollout sampled under the interface adds a second copy of its steps: the same completions and
 * sampling logprobs after the prompts the original environment shows, its advantages scaled by
 * `guidedCoef` (docs/method.md, "The guided update"); it counts as one more rollout of the batch.
 */
function creditRound(
  c: TrainConfig,
  sw: RunPlan['switches'],
  played: readonly Played[],
): { credit: RolloutCredit[]; datums: TrainingDatum[]; guided: readonly TrainingDatum[] } {
  const credit = roundCredit(
    played.map((p) => ({ group: p.group, reward: p.trajectory.reward, labels: p.labels })),
    {
      reweight: sw.reweight,
      weights: { wMin: c.wMin, wMax: c.wMax },
      mode: c.weightMode,
      budget: c.budget,
    },
  );
  const trained = (d: TrainingDatum) => d.advantages.some((a, t) => a !== 0 && d.weights[t]! > 0);
  const perRollout: TrainingDatum[][] = [];
  const guided: TrainingDatum[] = [];
  played.forEach((p, i) => {
    const wa = credit[i]!.weightedAdvantage;
    if (wa === 0) {
      perRollout.push([]); // no group-relative signal: only the KL term, not worth a pass
      return;
    }
    const advantages = stepAdvantages(p.trajectory, p.labels, wa, c.credit);
    if (advantages.length !== p.steps.length)
      throw new Error(
        `rollout of ${p.task.id}: ${advantages.length} recorded steps but ${p.steps.length} samples`,
      );
    perRollout.push(packSteps(p.steps, advantages).filter(trained));
    if (p.originalPrompts) {
      // the ratio floored where asked: q' = min(q, lp_current - ln floor), so exp(lp - q') >= floor
      const shift = c.guidedRatioFloor > 0 ? Math.log(c.guidedRatioFloor) : 0;
      const steps = p.steps.map((s, t) => ({
        ...s,
        promptTokenIds: p.originalPrompts![t]!,
        ...(p.originalLogprobs
          ? { logprobs: s.logprobs.map((q, k) => Math.min(q, p.originalLogprobs![t]![k]! - shift)) }
          : {}),
      }));
      const copy = packSteps(
        steps,
        advantages.map((a) => a * c.guidedCoef),
      ).filter(trained);
      guided.push(...copy);
      perRollout.push(copy);
    }
  });
  return { credit, datums: aggregateRollouts(perRollout, c.lossAgg), guided };
}

/**
 * 4. One learner update: `passes` optimiser steps over the round's data and the anchor, then the
 * checkpoint (`save`). A learner that queues calls gets the save right behind the last step, not
 * after its result: on a service that runs training in clock cycles the step and the save share one.
 */
async function learnRound(
  ctx: LoopContext,
  round: number,
  datums: readonly TrainingDatum[],
  /** the guided update's copies among `datums` (their share is recorded where the switch is on) */
  guided: readonly TrainingDatum[],
  save: () => Promise<void>,
): Promise<{ stats: LearnerStats; ms: number; read: number }> {
  const { config: c, learner } = ctx;
  ctx.hooks.progress?.({ round, rounds: c.rounds, phase: 'learning', done: 0, total: 1 });
  const tLearn = performance.now();
  const loss = { clipEps: c.clipEps, klCoef: c.klCoef, temperature: c.temperature };
  // the anchor steps every round, with or without a policy-gradient signal: the supervised
  // budget is then the same for every method and seed, not a function of how many groups varied
  const anchor =
    c.anchorCoef > 0 ? await anchorData(learner, c.seed, round, c.anchorDemos, c.anchorCategories) : [];
  // the first pass's loss statistics are the batch's as sampled; later passes see moved weights
  let fb: ForwardBackwardResult = { loss: 0, pgLoss: 0, kl: 0, clipFrac: 0, meanRatio: 1, tokens: 0 };
  let anchorStats: LearnerStats['anchor'];
  let step = null as { gradNorm: number } | null;
  let steps = 0;
  const passes = datums.length > 0 || anchor.length > 0 ? c.passes : 0;
  let saved = false;
  // a learner that queues calls gets a pass's requests back to back, awaited together; any other
  // finishes each before the next is made
  for (let pass = 0; pass < passes; pass++) {
    const pending: Promise<unknown>[] = [];
    const run = async <T>(call: () => Promise<T>, take: (v: T) => void) => {
      const p = call().then(take);
      if (learner.queuesCalls) pending.push(p);
      else await p;
    };
    if (datums.length > 0)
      await run(
        () => learner.forwardBackward(datums, loss),
        (stats) => {
          if (pass === 0) fb = stats;
        },
      );
    if (anchor.length > 0)
      await run(
        () => learner.forwardBackwardCrossEntropy(anchor, { coef: c.anchorCoef }),
        (a) => {
          if (pass === 0) anchorStats = { loss: a.loss, tokens: a.tokens, sequences: anchor.length };
        },
      );
    await run(
      () => learner.optimStep({ lr: c.lr, maxGradNorm: c.maxGradNorm }),
      (s) => {
        if (pass === 0) step = s;
      },
    );
    if (pass === passes - 1 && learner.queuesCalls) {
      pending.push(save());
      saved = true;
    }
    await Promise.all(pending);
    steps++;
  }
  if (!saved) await save();
  const ms = performance.now() - tLearn;
  const stats: LearnerStats = {
    loss: fb.loss,
    pgLoss: fb.pgLoss,
    kl: fb.kl,
    clipFrac: fb.clipFrac,
    ...(fb.tokens > 0 ? { meanRatio: fb.meanRatio } : {}),
    ...(fb.samplerKl !== undefined && fb.tokens > 0
      ? { samplerKl: fb.samplerKl, samplerEntropy: fb.samplerEntropy ?? 0 }
      : {}),
    gradNorm: step?.gradNorm ?? 0,
    tokens: dataTokens(datums).trained,
    sequences: datums.length,
    lr: c.lr,
    steps,
    ...(anchorStats ? { anchor: anchorStats } : {}),
    // recorded only where the switch is on: a run without it is byte for byte as before
    ...(c.guidedUpdate ? { guided: { tokens: dataTokens(guided).trained, sequences: guided.length } } : {}),
  };
  // every pass reads the round's sequences and the anchor's again
  const read = steps * (dataTokens(datums).read + anchor.reduce((n, d) => n + d.tokens.length, 0));
  return { stats, ms, read };
}

/** the round's tokens (the sampler's from its rollouts, the learner's from its running totals) and cost */
function roundUsage(
  c: TrainConfig,
  played: readonly Played[],
  learned: { readonly stats: LearnerStats; readonly read: number },
  before: LearnerUsage | undefined,
  after: LearnerUsage | undefined,
): RoundUsage {
  let promptTokens = 0;
  let sharedPrefixTokens = 0;
  let sampledTokens = 0;
  let cachedPromptTokens: number | undefined;
  for (const p of played) {
    const t = samplingTokens(p.steps);
    promptTokens += t.prompt;
    sharedPrefixTokens += t.shared;
    sampledTokens += t.sampled;
    if (t.cached !== undefined) cachedPromptTokens = (cachedPromptTokens ?? 0) + t.cached;
  }
  const tokens = {
    promptTokens,
    sharedPrefixTokens,
    ...(cachedPromptTokens !== undefined ? { cachedPromptTokens } : {}),
    sampledTokens,
    trainedTokens: learned.stats.tokens,
    trainReadTokens: learned.read,
    klPrefillTokens: after && before ? after.klPrefillTokens - before.klPrefillTokens : 0,
  };
  const prices = { prefill: c.pricePrefill, sample: c.priceSample, train: c.priceTrain };
  return {
    ...tokens,
    ...(after?.session !== undefined ? { session: after.session } : {}),
    ...(after ? { requests: timesSince(after.requests, before?.requests ?? {}) } : {}),
    ...(hasPrices(prices) ? { estimatedCostUsd: estimateCost(tokens, prices) } : {}),
  };
}

/** 5. The next round's interface, evolved from this round's profile when the method evolves it. */
function nextInterface(
  c: TrainConfig,
  sw: RunPlan['switches'],
  round: number,
  iface: InterfaceState,
  snapshot: ProfileSnapshot,
): InterfaceState {
  return sw.evolve === 'every-round' || (sw.evolve === 'after-first-round' && round === 1)
    ? evolve(iface, snapshot, interfaceConfig(c))
    : iface;
}

interface Saved {
  /** relative to the run folder */
  readonly checkpoint: string;
  readonly validation: ValidationRecord | undefined;
  readonly validationMs: number;
}

/** The round's checkpoint: what a resume needs. */
async function saveCheckpoint(ctx: LoopContext, round: number, checkpoint: string): Promise<void> {
  const { config: c, learner, run } = ctx;
  // only every saveEvery-th and the last outlive the run where the learner lets the others expire
  const keep = round % c.saveEvery === 0 || round === c.rounds;
  await learner.save(run.path(checkpoint), { keep });
  crashPoint(round, 'checkpoint');
}

/** 6. Validate the saved policy every k rounds (and after the last). */
async function validateRound(
  ctx: LoopContext,
  plan: RunPlan,
  round: number,
  checkpoint: string,
): Promise<Saved> {
  const { config: c, learner } = ctx;
  const due =
    c.validateEvery > 0 && c.validationTasks > 0 && (round % c.validateEvery === 0 || round === c.rounds);
  if (!due) return { checkpoint, validation: undefined, validationMs: 0 };
  const report = (done: number, total: number) =>
    ctx.hooks.progress?.({ round, rounds: c.rounds, phase: 'validating', done, total });
  report(0, plan.valTasks.length);
  const tVal = performance.now();
  const policy = await learner.samplingPolicy();
  const validation = await validate(
    ctx,
    policy,
    plan.valTasks,
    `${RUN_FILES.validationDir}/${roundName(round)}`,
    round,
    undefined,
    report,
  );
  crashPoint(round, 'validation');
  return { checkpoint, validation, validationMs: performance.now() - tVal };
}

/** What the phases of one round produced. */
interface RoundPhases {
  readonly round: number;
  /** when the round started */
  readonly t0: number;
  readonly tasks: readonly BfclTask[];
  readonly revisited: readonly string[];
  readonly sampled: Sampled;
  readonly diagMs: number;
  readonly snapshot: ProfileSnapshot;
  readonly credit: readonly RolloutCredit[];
  readonly learned: { readonly stats: LearnerStats; readonly ms: number };
  readonly usage: RoundUsage;
  /** the interface the rollouts were shown, and the next round's */
  readonly shown: InterfaceState;
  readonly next: InterfaceState;
  readonly saved: Saved;
}

/** 7. The rollouts' records written, and the round's record (record.ts) with its timings. */
function recordRound(
  ctx: LoopContext,
  plan: RunPlan,
  r: RoundPhases,
): { record: RoundRecord; rows: RolloutRecord[] } {
  const { config: c } = ctx;
  const { played } = r.sampled;
  const envMs = played.reduce((s, p) => s + (p.totalMs - p.sampleMs), 0) + r.diagMs;
  const rows = rolloutRecords(r.round, r.sampled.version, played, r.credit);
  ctx.run.writeRollouts(r.round, rows);
  crashPoint(r.round, 'rollouts');
  const shows = plan.switches.interface;
  const record = roundRecord({
    round: r.round,
    policyVersion: r.sampled.version,
    tasks: r.tasks.map((t) => t.id),
    revisited: r.revisited,
    rows,
    profile: r.snapshot,
    interface: shows ? r.shown : NO_INTERFACE,
    nextInterface: shows ? r.next : NO_INTERFACE,
    credit: r.credit,
    weightRange: { wMin: c.wMin, wMax: c.wMax },
    learner: r.learned.stats,
    usage: r.usage,
    timings: {
      samplingMs: Math.max(0, r.sampled.wallMs - (envMs - r.diagMs)),
      envMs,
      learnMs: r.learned.ms,
      validationMs: r.saved.validationMs,
      totalMs: performance.now() - r.t0,
    },
    ...(r.saved.validation ? { validation: r.saved.validation } : {}),
    ...(ctx.code ? { code: ctx.code } : {}),
    finished: new Date().toISOString(),
  });
  return { record, rows };
}

/** 8. The commit: the state the next round (or a resume) starts from, on disk. */
function commitRound(
  ctx: LoopContext,
  plan: RunPlan,
  { record }: { readonly record: RoundRecord },
  r: {
    readonly checkpoint: string;
    readonly next: InterfaceState;
    readonly taskRates: TaskRates;
    readonly nextSampler?: SamplerWeights;
  },
): TrainState {
  const state: TrainState = {
    round: record.round,
    checkpoint: r.checkpoint,
    interface: r.next,
    profile: plan.profile.toJSON(),
    taskRates: r.taskRates,
    lastRound: record,
    ...(r.nextSampler ? { nextSampler: r.nextSampler } : {}),
  };
  ctx.run.commit(state);
  ctx.run.pruneCheckpoints([r.checkpoint, r.nextSampler?.checkpoint ?? null]);
  crashPoint(record.round, 'pruned');
  ctx.hooks.onRound?.(record);
  return state;
}
