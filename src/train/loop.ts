/**
 * The SEAL loop (method doc section 2), one round at a time:
 *
 *   tasks -> G rollouts each through the current interface (training mode) -> verify + diagnose
 *   -> failure profile -> GRPO advantages x w_j -> one learner update -> evolve the interface
 *   -> (every k rounds) strict validation without any interface
 *
 * It knows the suite, the sampler and the learner only through their contracts. Each method of
 * the comparison changes exactly one thing (record.ts, METHODS). Everything a round produces is on
 * disk before the next one starts, and a killed run resumes from its last completed round with the
 * same results: tasks and sampling seeds are functions of (seed, round, task, sample, step), and
 * the learner's weights and optimiser state are saved exactly.
 */
import { mkdirSync } from 'node:fs';
import { formatAdapter } from '../agent/formats/index.js';
import { mapConcurrent, rollout } from '../agent/rollout.js';
import { CallRecorder } from '../agent/trajectory.js';
import type { BfclData, BfclTask } from '../envs/bfcl/data/tasks.js';
import { mixSeed } from '../envs/mini/index.js';
import { runEval } from '../eval/run.js';
import type { Learner, SamplingPolicy } from '../learner/learner.js';
import { diagnose, labelsOf } from '../seal/diagnosis.js';
import { evolve, type InterfaceConfig, initialInterfaceState } from '../seal/interface/state.js';
import { trainingContext } from '../seal/interface.js';
import type { Label } from '../seal/labels.js';
import { FailureProfile } from '../seal/profile.js';
import type { Trajectory } from '../seal/trajectory.js';
import { anchorData } from './anchor.js';
import { type TrainConfig, toolFormat } from './config.js';
import { roundCredit, turnAdvantages } from './credit.js';
import type {
  Distribution,
  LearnerStats,
  Method,
  RolloutRecord,
  RolloutStats,
  RoundRecord,
  ValidationRecord,
} from './record.js';
import { RUN_FILES, roundName } from './record.js';
import type { RunFolder, TrainState } from './run-folder.js';
import { RolloutSampler } from './sampler.js';
import { aggregateRollouts, dataTokens, packSteps, type SampledStep } from './sequences.js';
import { roundTasks, validationTasks, withRevisits } from './tasks.js';

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

export interface LoopHooks {
  readonly log: (line: string) => void;
  readonly progress?: (p: RoundProgress) => void;
  /** a round was committed */
  readonly onRound?: (r: RoundRecord) => void;
}

export interface LoopContext {
  readonly config: TrainConfig;
  readonly data: BfclData;
  readonly learner: Learner;
  readonly run: RunFolder;
  readonly hooks: LoopHooks;
}

/** what a method without the interface shows: every component off (the record keeps one shape) */
const NO_INTERFACE = initialInterfaceState({
  components: { schemaCues: 'off', errorFeedback: 'off', guidelines: 'off' },
});

interface PlayedRollout {
  readonly task: BfclTask;
  readonly group: number;
  readonly sample: number;
  readonly trajectory: Trajectory;
  readonly labels: Label[];
  readonly steps: readonly SampledStep[];
  readonly sampleMs: number;
  readonly totalMs: number;
}

function distribution(xs: readonly number[], lo: number, hi: number, bins = 10): Distribution {
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

/** The step index -> user turn index map of a trajectory (steps in play order). */
function stepTurns(t: Trajectory): number[] {
  return t.turns.flatMap((turn, i) => turn.steps.map(() => i));
}

/** Strict validation: no interface, greedy, the given tasks, into an eval run folder. */
export async function validate(
  ctx: LoopContext,
  policy: SamplingPolicy,
  tasks: readonly BfclTask[],
  dir: string,
  round: number,
): Promise<ValidationRecord> {
  const outcome = await runEval(
    ctx.data,
    tasks,
    policy,
    {
      suite: ctx.config.suite,
      model: policy.name,
      format: toolFormat(ctx.config),
      split: `validation (${tasks.length} test tasks, seed ${ctx.config.seed})`,
      sampling: { temperature: 0, maxTokens: ctx.config.maxTokens },
    },
    ctx.run.path(dir),
    { concurrency: 8 },
  );
  return { round, summary: outcome.summary, dir };
}

/** Runs rounds `state.round + 1 .. config.rounds`; returns the state after the last one. */
export async function runRounds(ctx: LoopContext, start: TrainState): Promise<TrainState> {
  const { config: c, data, learner, run, hooks } = ctx;
  const sw = methodSwitches(c.method);
  const trainTasks = data.split.train.map((id) => data.byId.get(id)!).filter(Boolean);
  const valTasks = validationTasks(data, c.seed, c.validationTasks);
  const format = formatAdapter(toolFormat(c));
  const recorder = new CallRecorder(data);
  const classOf = (name: string) => data.docs.get(name)?.className;
  const tctx = trainingContext(`seal train ${run.dir}`);
  const profile = FailureProfile.fromJSON(start.profile);
  let state = start;
  mkdirSync(run.path(RUN_FILES.rolloutsDir), { recursive: true });

  for (let round = state.round + 1; round <= c.rounds; round++) {
    const t0 = performance.now();
    const iface = state.interface;
    const rates = state.taskRates ?? {};
    const tasks = withRevisits(
      roundTasks(trainTasks, c.seed, round, c.tasksPerRound),
      data.byId,
      rates,
      c.revisit,
      c.seed,
      round,
    );
    const revisited = tasks.filter((t) => rates[t.id] !== undefined).map((t) => t.id);
    const sampler = await learner.samplingPolicy();
    const version = learner.version;

    // 1. G rollouts per task through the current interface
    const jobs = tasks.flatMap((task, group) =>
      Array.from({ length: c.groupSize }, (_, sample) => ({ task, group, sample })),
    );
    let done = 0;
    hooks.progress?.({ round, rounds: c.rounds, phase: 'sampling', done, total: jobs.length });
    const tSample = performance.now();
    // every rollout of the round in flight: the sampler decodes the requests waiting together
    const played = await mapConcurrent(jobs, jobs.length, async (job): Promise<PlayedRollout> => {
      const r0 = performance.now();
      const rs = new RolloutSampler(sampler, mixSeed(c.seed, round, job.group, job.sample));
      const trajectory = await rollout(job.task, data, rs, {
        format,
        sampling: { temperature: c.temperature, topP: 1, maxTokens: c.maxTokens },
        onParseError: 'reply',
        maxStepsPerTurn: c.maxSteps,
        recorder,
        ...(sw.interface ? { trainingInterface: { ctx: tctx, state: iface } } : {}),
      });
      done++;
      hooks.progress?.({ round, rounds: c.rounds, phase: 'sampling', done, total: jobs.length });
      return {
        ...job,
        trajectory,
        labels: [],
        steps: rs.steps,
        sampleMs: rs.waitedMs,
        totalMs: performance.now() - r0,
      };
    });
    const rolloutWallMs = performance.now() - tSample;

    // 2. diagnose, profile
    const tDiag = performance.now();
    for (const p of played) p.labels.push(...labelsOf(diagnose(p.trajectory, classOf)));
    profile.resetWindow();
    for (const p of played)
      profile.observe({
        taskId: p.task.id,
        category: p.task.category,
        reward: p.trajectory.reward,
        labels: p.labels,
      });
    const snapshot = profile.snapshot();
    const diagMs = performance.now() - tDiag;

    // 3. advantages x w_j, packed into training sequences
    const credit = roundCredit(
      played.map((p) => ({ group: p.group, reward: p.trajectory.reward, labels: p.labels })),
      {
        reweight: sw.reweight,
        weights: { wMin: c.wMin, wMax: c.wMax },
        mode: c.weightMode,
        budget: c.budget,
      },
    );
    const perRollout = played.map((p, i) => {
      const wa = credit[i]!.weightedAdvantage;
      if (wa === 0) return []; // no group-relative signal: only the KL term, not worth a pass
      const perTurn = turnAdvantages(p.labels, wa, c.credit);
      const turns = stepTurns(p.trajectory);
      if (turns.length !== p.steps.length)
        throw new Error(
          `rollout of ${p.task.id}: ${turns.length} recorded steps but ${p.steps.length} samples`,
        );
      return packSteps(
        p.steps,
        turns.map((t) => perTurn[t] ?? 0),
      ).filter((d) => d.advantages.some((a, t) => a !== 0 && d.weights[t]! > 0));
    });
    const datums = aggregateRollouts(perRollout, c.lossAgg);

    // 4. one learner update
    hooks.progress?.({ round, rounds: c.rounds, phase: 'learning', done: 0, total: 1 });
    const tLearn = performance.now();
    const loss = { clipEps: c.clipEps, klCoef: c.klCoef, temperature: c.temperature };
    // the anchor steps every round, with or without a policy-gradient signal: the supervised
    // budget is then the same for every method and seed, not a function of how many groups varied
    const anchor = c.anchorCoef > 0 ? await anchorData(learner, c.seed, round, c.anchorDemos) : [];
    // the first pass's loss statistics are the batch's as sampled; later passes see moved weights
    let fb = { loss: 0, pgLoss: 0, kl: 0, clipFrac: 0, meanRatio: 1, tokens: 0 };
    let anchorStats: LearnerStats['anchor'];
    let step: { gradNorm: number } | null = null;
    let steps = 0;
    for (let pass = 0; pass < c.passes && (datums.length > 0 || anchor.length > 0); pass++) {
      if (datums.length > 0) {
        const stats = await learner.forwardBackward(datums, loss);
        if (pass === 0) fb = stats;
      }
      if (anchor.length > 0) {
        const a = await learner.forwardBackwardCrossEntropy(anchor, { coef: c.anchorCoef });
        if (pass === 0) anchorStats = { loss: a.loss, tokens: a.tokens, sequences: anchor.length };
      }
      const s = await learner.optimStep({ lr: c.lr, maxGradNorm: c.maxGradNorm });
      if (pass === 0) step = s;
      steps++;
    }
    const learnMs = performance.now() - tLearn;

    // 5. the next interface
    const next =
      sw.evolve === 'every-round' || (sw.evolve === 'after-first-round' && round === 1)
        ? evolve(iface, snapshot, interfaceConfig(c))
        : iface;

    // 6. save the policy; validate every k rounds (and after the last)
    const checkpoint = run.checkpointDir(round);
    await learner.save(run.path(checkpoint));
    let validation: ValidationRecord | undefined;
    let validationMs = 0;
    if (
      c.validateEvery > 0 &&
      c.validationTasks > 0 &&
      (round % c.validateEvery === 0 || round === c.rounds)
    ) {
      hooks.progress?.({ round, rounds: c.rounds, phase: 'validating', done: 0, total: valTasks.length });
      const tVal = performance.now();
      const policy = await learner.samplingPolicy();
      validation = await validate(
        ctx,
        policy,
        valTasks,
        `${RUN_FILES.validationDir}/${roundName(round)}`,
        round,
      );
      validationMs = performance.now() - tVal;
    }

    // 7. the record, then the commit
    const envMs = played.reduce((s, p) => s + (p.totalMs - p.sampleMs), 0) + diagMs;
    const rows: RolloutRecord[] = played.map((p, i) => ({
      round,
      policyVersion: version,
      taskId: p.task.id,
      category: p.task.category,
      group: p.group,
      sample: p.sample,
      reward: p.trajectory.reward,
      labels: p.labels,
      weight: credit[i]!.weight,
      advantage: credit[i]!.advantage,
      weightedAdvantage: credit[i]!.weightedAdvantage,
      completionTokens: p.steps.reduce((s, st) => s + st.tokenIds.length, 0),
      trajectory: p.trajectory,
    }));
    run.writeRollouts(round, rows);
    const labelCounts: Partial<Record<Label, number>> = {};
    for (const p of played) for (const l of p.labels) labelCounts[l] = (labelCounts[l] ?? 0) + 1;
    const rewardsByGroup = tasks.map((_, g) =>
      played.filter((p) => p.group === g).map((p) => p.trajectory.reward),
    );
    const allSteps = played.flatMap((p) => p.trajectory.turns.flatMap((t) => t.steps));
    const rollouts: RolloutStats = {
      count: played.length,
      meanReward: played.reduce((s, p) => s + p.trajectory.reward, 0) / played.length,
      groupSuccess: rewardsByGroup.filter((g) => g.some((r) => r === 1)).length / tasks.length,
      groupsWithVariance: rewardsByGroup.filter((g) => new Set(g).size > 1).length,
      meanCompletionTokens: rows.reduce((s, r) => s + r.completionTokens, 0) / rows.length,
      steps: allSteps.length,
      parseErrors: allSteps.filter((s) => s.parseError !== undefined).length,
    };
    const tokens = dataTokens(datums);
    const record: RoundRecord = {
      round,
      policyVersion: version,
      tasks: tasks.map((t) => t.id),
      revisited,
      rollouts,
      labels: labelCounts,
      profile: snapshot,
      interface: sw.interface ? iface : NO_INTERFACE,
      nextInterface: sw.interface ? next : NO_INTERFACE,
      weights: distribution(
        credit.map((x) => x.weight),
        c.wMin,
        c.wMax,
      ),
      advantages: {
        meanAbs: credit.reduce((s, x) => s + Math.abs(x.advantage), 0) / credit.length,
        meanAbsWeighted: credit.reduce((s, x) => s + Math.abs(x.weightedAdvantage), 0) / credit.length,
      },
      learner: {
        loss: fb.loss,
        pgLoss: fb.pgLoss,
        kl: fb.kl,
        clipFrac: fb.clipFrac,
        gradNorm: step?.gradNorm ?? 0,
        tokens: tokens.trained,
        sequences: datums.length,
        lr: c.lr,
        steps,
        ...(anchorStats ? { anchor: anchorStats } : {}),
      },
      timings: {
        samplingMs: Math.max(0, rolloutWallMs - (envMs - diagMs)),
        envMs,
        learnMs,
        validationMs,
        totalMs: performance.now() - t0,
      },
      ...(validation ? { validation } : {}),
      finished: new Date().toISOString(),
    };
    const taskRates = { ...rates };
    tasks.forEach((t, g) => {
      const rs = rewardsByGroup[g]!;
      taskRates[t.id] = rs.filter((r) => r === 1).length / rs.length;
    });
    state = { round, checkpoint, interface: next, profile: profile.toJSON(), taskRates, lastRound: record };
    run.commit(state);
    run.pruneCheckpoints(checkpoint);
    hooks.onRound?.(record);
  }
  return state;
}
