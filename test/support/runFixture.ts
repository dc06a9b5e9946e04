/**
 * A realistic `seal train` run folder without the loop: mini-suite tasks played through the real
 * environment with scripted outputs (ground truth, or one of a few typical mistakes), diagnosed,
 * aggregated into profiles, interfaces evolved, GRPO advantages and w_j computed by the real code.
 * Only the learner statistics and timings are made up. The success rate rises over the rounds so
 * the charts have something to show.
 */
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { abstentionByCategory } from '../../src/bfcl/abstention.js';
import { type EvalResultRow, readFinished } from '../../src/bfcl/eval.js';
import { EpisodeRecorder } from '../../src/bfcl/recorder.js';
import { type Summary, summarise } from '../../src/bfcl/summary.js';
import { CallRecorder } from '../../src/bfcl/trajectory.js';
import type { BfclData, BfclTask } from '../../src/envs/bfcl/data/tasks.js';
import { loadMiniSuite } from '../../src/envs/mini/index.js';
import { grpoAdvantages } from '../../src/rl/advantages.js';
import { diagnose, labelsOf } from '../../src/seal/diagnosis.js';
import { evolve, type InterfaceState, initialInterfaceState } from '../../src/seal/interface/state.js';
import type { Label } from '../../src/seal/labels.js';
import { FailureProfile } from '../../src/seal/profile.js';
import type { Trajectory } from '../../src/seal/trajectory.js';
import { applyWeights, rolloutWeight } from '../../src/seal/weighting.js';
import {
  type Method,
  type RolloutRecord,
  type RoundRecord,
  RUN_FILES,
  RUN_FORMAT,
  RUN_VERSION,
  type RunManifest,
  roundName,
} from '../../src/train/record.js';
import type { RoundUsage } from '../../src/train/usage.js';
import { Rng } from '../../src/util/rng.js';

/** Model output that must stay text in the report: markup, a script, an image that would fetch. */
export const HOSTILE_TEXT =
  'I cannot do that. </pre></details><script>window.__pwned = 1</script><img src="x" onerror="window.__pwned = 2">';

export interface FixtureOptions {
  readonly method?: Method;
  readonly seed?: number;
  readonly rounds?: number;
  readonly tasksPerRound?: number;
  readonly groupSize?: number;
  /** validate after every k-th round */
  readonly validateEvery?: number;
  /** also write eval-final/ (a run that finished) */
  readonly finished?: boolean;
  /** end as if killed mid-round: a torn last line in rounds.jsonl and a half-written next round */
  readonly killedMidRound?: boolean;
  /**
   * the learner the record is shaped after: embedded (what it reports: a mean ratio within 1e-7 of
   * 1, no KL to the sampler, no request times) or Tinker (the sampler's cache hits, KL prefills,
   * request times, the KL to the sampler; a tinker learner in run.json)
   */
  readonly learner?: 'embedded' | 'tinker';
  /** as written before the record kept each turn's request and each round's usage: neither */
  readonly old?: boolean;
}

let suite: BfclData | undefined;
const miniSuite = (): BfclData => {
  suite ??= loadMiniSuite();
  return suite;
};

/** a seeded stream of floats in [0, 1), enough to make fixtures differ by seed */
function rng(seed: number): () => number {
  const r = new Rng(seed, 'mulberry32');
  return () => r.next();
}

type Mistake = 'silent' | 'malformed' | 'unknownArg' | 'invented';
const MISTAKES: readonly Mistake[] = ['silent', 'malformed', 'unknownArg', 'invented'];

function withBogusArgument(call: string): string {
  const open = call.indexOf('(');
  const inner = call.slice(open + 1, -1).trim();
  return `${call.slice(0, open)}(${inner ? `${inner}, ` : ''}verbose=True)`;
}

/** Play a task turn by turn: each turn is right with probability `skill`, else one typical mistake. */
function play(data: BfclData, recorder: CallRecorder, task: BfclTask, skill: number, r: () => number) {
  const rec = new EpisodeRecorder(task, data, { recorder });
  const usage = (n: number) => ({ promptTokens: 600 + Math.floor(r() * 200), completionTokens: n });
  let completionTokens = 0;
  do {
    const gt = task.groundTruth[rec.episode.turn] ?? [];
    const right = r() < skill;
    const mistake = MISTAKES[Math.floor(r() * MISTAKES.length)]!;
    const tokens = 10 + Math.floor(r() * 40);
    completionTokens += tokens;
    if (right && gt.length > 0) {
      rec.step({ kind: 'calls', calls: gt }, { rawText: `[${gt.join(', ')}]`, usage: usage(tokens) });
      rec.step({ kind: 'text' }, { rawText: 'Done.', usage: usage(2) });
    } else if (right || mistake === 'silent') {
      const text = gt.length > 0 ? HOSTILE_TEXT : 'None of the tools can do that; which file do you mean?';
      rec.step({ kind: 'text' }, { rawText: text, usage: usage(tokens) });
    } else if (mistake === 'malformed') {
      rec.step(
        { kind: 'parse_error', error: 'unterminated call list' },
        { rawText: "[cd(folder='docs'", usage: usage(tokens) },
      );
    } else {
      const calls =
        mistake === 'invented' || gt.length === 0 ? ['teleport(to="home")'] : gt.map(withBogusArgument);
      rec.step({ kind: 'calls', calls }, { rawText: `[${calls.join(', ')}]`, usage: usage(tokens) });
      rec.step({ kind: 'text' }, { rawText: 'Done.', usage: usage(2) });
    }
  } while (rec.nextTurn());
  return { trajectory: rec.finish(), completionTokens };
}

const skillAt = (round: number, rounds: number) => 0.45 + (0.4 * round) / Math.max(1, rounds);

function pick<T>(items: readonly T[], n: number, r: () => number): T[] {
  const pool = [...items];
  const out: T[] = [];
  while (out.length < n && pool.length > 0) out.push(pool.splice(Math.floor(r() * pool.length), 1)[0]!);
  return out;
}

/** An eval run folder as `seal eval --out` leaves it. */
function writeEval(
  dir: string,
  tasks: readonly BfclTask[],
  skill: number,
  r: () => number,
  split = 'test',
): Summary {
  const data = miniSuite();
  const recorder = new CallRecorder(data);
  const classOf = (name: string) => data.docs.get(name)?.className;
  mkdirSync(dir, { recursive: true });
  const rows: EvalResultRow[] = tasks.map((task) => {
    const { trajectory } = play(data, recorder, task, skill, r);
    const labels = labelsOf(diagnose(trajectory, classOf));
    return {
      id: task.id,
      category: task.category,
      valid: trajectory.reward === 1,
      labels,
      weight: rolloutWeight(labels),
      trajectory,
    };
  });
  const summary = summarise(rows);
  const config = { suite: 'mini', model: 'checkpoint', format: 'compact', split, sampling: {} };
  writeFileSync(join(dir, 'run.json'), `${JSON.stringify(config, null, 2)}\n`);
  writeFileSync(join(dir, 'results.jsonl'), rows.map((row) => `${JSON.stringify(row)}\n`).join(''));
  writeFileSync(join(dir, 'summary.json'), `${JSON.stringify(summary, null, 2)}\n`);
  return summary;
}

/** a trajectory as records had it before each turn kept its request */
function withoutRequests(t: Trajectory): Trajectory {
  return { ...t, turns: t.turns.map(({ request: _, ...turn }) => turn) };
}

/** a round's tokens as the loop counts them; a Tinker learner's running totals on top */
function usage(rollouts: readonly RolloutRecord[], tinker: boolean, r: () => number): RoundUsage {
  const steps = rollouts.flatMap((x) => x.trajectory.turns.flatMap((t) => t.steps));
  const promptTokens = steps.reduce((s, st) => s + (st.usage?.promptTokens ?? 0), 0);
  const sampledTokens = steps.reduce((s, st) => s + (st.usage?.completionTokens ?? 0), 0);
  const base = {
    promptTokens,
    sharedPrefixTokens: Math.floor(promptTokens * 0.7),
    sampledTokens,
    trainedTokens: Math.floor(sampledTokens * 0.6),
    trainReadTokens: promptTokens + sampledTokens,
  };
  if (!tinker) return { ...base, klPrefillTokens: 0 };
  const route = (count: number) => ({ count, ms: 400 * count * (1 + r()), afterAcceptMs: 300 * count });
  return {
    ...base,
    cachedPromptTokens: Math.floor(promptTokens * 0.5 * (1 + r()) * 0.6),
    klPrefillTokens: promptTokens + sampledTokens,
    session: 'session-1',
    requests: { forward_backward: route(1), optim_step: route(1), asample: route(rollouts.length) },
    estimatedCostUsd: 0.01 + 0.01 * r(),
  };
}

const NO_CUES = { components: { schemaCues: 'off', errorFeedback: 'off', guidelines: 'off' } } as const;

/** Writes a run folder into `dir` (created) and returns its manifest. */
export function writeRunFixture(dir: string, opts: FixtureOptions = {}): RunManifest {
  const {
    method = 'seal',
    seed = 1,
    rounds = 4,
    tasksPerRound = 4,
    groupSize = 4,
    validateEvery = 2,
    finished = !opts.killedMidRound,
    killedMidRound = false,
    learner = 'embedded',
    old = false,
  } = opts;
  const tinker = learner === 'tinker';
  const data = miniSuite();
  const recorder = new CallRecorder(data);
  const classOf = (name: string) => data.docs.get(name)?.className;
  const r = rng(seed);
  const train = data.split.train.map((id) => data.byId.get(id)!);
  const test = data.split.test.map((id) => data.byId.get(id)!);
  const evalTasks = pick(test, 24, rng(7));
  const validationTasks = evalTasks.slice(0, 12);

  const manifest: RunManifest = {
    format: RUN_FORMAT,
    version: RUN_VERSION,
    method,
    seed,
    suite: 'mini',
    config: { method, seed, rounds, tasksPerRound, groupSize, lr: 1e-4, kl: 0.001, clip: 0.2, validateEvery },
    overrides: { rounds, lr: 1e-4, note: '<b>not bold</b>' },
    command: `seal train --method ${method} --seed ${seed} --rounds ${rounds}`,
    code: { version: '0.1.0', git: 'fc70d39' },
    base: { checkpoint: 'checkpoints/base', modelSha256: 'ab'.repeat(32) },
    budget: { rounds, tasksPerRound, groupSize, rollouts: rounds * tasksPerRound * groupSize },
    sampling: { temperature: 0.5, topP: 1, maxTokens: 128 },
    ...(tinker
      ? {
          learner: {
            kind: 'tinker',
            service: 'http://127.0.0.1:1',
            baseModel: 'Qwen/Qwen3-8B',
            loraRank: 32,
            wire: { asked: 'auto', used: 'json' },
            tokenizer: { name: 'qwen3', sha256: 'cd'.repeat(32) },
            format: 'hermes',
            kl: { on: true, reason: 'klCoef > 0' },
          },
        }
      : {}),
    started: '2026-11-30T22:00:00.000Z',
  };
  mkdirSync(join(dir, RUN_FILES.rolloutsDir), { recursive: true });
  writeFileSync(join(dir, RUN_FILES.manifest), `${JSON.stringify(manifest, null, 2)}\n`);
  writeEval(join(dir, RUN_FILES.evalStart), evalTasks, skillAt(0, rounds), rng(seed + 100));

  const profile = new FailureProfile();
  const frozen = method === 'vanilla' || method === 'no-env';
  let shown: InterfaceState = frozen ? initialInterfaceState(NO_CUES) : initialInterfaceState();
  const roundsPath = join(dir, RUN_FILES.rounds);
  writeFileSync(roundsPath, '');

  for (let round = 1; round <= rounds; round++) {
    const skill = skillAt(round, rounds) - 0.1 * r();
    const tasks = pick(train, tasksPerRound, r);
    const played = tasks.flatMap((task, group) =>
      Array.from({ length: groupSize }, (_, sample) => {
        const { trajectory, completionTokens } = play(data, recorder, task, skill, r);
        const labels = labelsOf(diagnose(trajectory, classOf));
        return { task, group, sample, trajectory, completionTokens, labels };
      }),
    );
    const reweight = method !== 'vanilla' && method !== 'no-reweight';
    const weights = played.map((p) => (reweight ? rolloutWeight(p.labels) : 1));
    const advantages = grpoAdvantages(
      played.map((p) => p.trajectory.reward),
      played.map((p) => p.group),
    );
    const weighted = applyWeights(advantages, weights);
    const rollouts: RolloutRecord[] = played.map((p, i) => ({
      round,
      policyVersion: round - 1,
      taskId: p.task.id,
      category: p.task.category,
      group: p.group,
      sample: p.sample,
      reward: p.trajectory.reward,
      labels: p.labels,
      weight: weights[i]!,
      advantage: advantages[i]!,
      weightedAdvantage: weighted[i]!,
      completionTokens: p.completionTokens,
      trajectory: old ? withoutRequests(p.trajectory) : p.trajectory,
    }));
    const rolloutsPath = join(dir, RUN_FILES.rolloutsDir, `${roundName(round)}.jsonl`);
    writeFileSync(rolloutsPath, rollouts.map((x) => `${JSON.stringify(x)}\n`).join(''));

    for (const p of played) {
      profile.observe({
        taskId: p.task.id,
        category: p.task.category,
        reward: p.trajectory.reward,
        labels: p.labels,
      });
    }
    const snapshot = profile.snapshot();
    const evolves = !frozen && !(method === 'no-closed-loop' && round > 1);
    const next = evolves ? evolve(shown, snapshot) : shown;
    profile.resetWindow();

    const labels: Partial<Record<Label, number>> = {};
    for (const p of played) for (const l of p.labels) labels[l] = (labels[l] ?? 0) + 1;
    const steps = played.flatMap((p) => p.trajectory.turns.flatMap((t) => t.steps));
    const groupRewards = tasks.map((_, g) =>
      played.filter((p) => p.group === g).map((p) => p.trajectory.reward),
    );
    const mean = (xs: readonly number[]) => xs.reduce((s, x) => s + x, 0) / Math.max(1, xs.length);
    const edges = [0.5, 0.75, 1, 1.25, 1.5, 1.75, 2];
    const counts = edges
      .slice(1)
      .map((hi, b) => weights.filter((w) => w >= edges[b]! && (b === edges.length - 2 ? w <= hi : w < hi)));
    const validated = round % validateEvery === 0;
    const validationDir = join(dir, RUN_FILES.validationDir, roundName(round));
    const validation = validated
      ? {
          round,
          dir: `${RUN_FILES.validationDir}/${roundName(round)}`,
          summary: writeEval(
            validationDir,
            validationTasks,
            skillAt(round, rounds),
            rng(seed + round),
            `validation (${validationTasks.length} dev tasks, seed ${seed})`,
          ),
          // a run recorded before the count did not have it
          ...(old ? {} : { abstention: abstentionByCategory(readFinished(validationDir).values()) }),
        }
      : undefined;
    const record: RoundRecord = {
      round,
      policyVersion: round - 1,
      tasks: tasks.map((t) => t.id),
      rollouts: {
        count: rollouts.length,
        meanReward: mean(rollouts.map((x) => x.reward)),
        groupSuccess: mean(groupRewards.map((g) => (g.some((x) => x === 1) ? 1 : 0))),
        groupsWithVariance: groupRewards.filter((g) => new Set(g).size > 1).length,
        meanCompletionTokens: mean(rollouts.map((x) => x.completionTokens)),
        steps: steps.length,
        parseErrors: steps.filter((s) => s.parseError !== undefined).length,
      },
      labels,
      profile: snapshot,
      interface: shown,
      nextInterface: next,
      weights: {
        mean: mean(weights),
        min: Math.min(...weights),
        max: Math.max(...weights),
        histogram: { edges, counts: counts.map((c) => c.length) },
      },
      advantages: {
        meanAbs: mean(advantages.map(Math.abs)),
        meanAbsWeighted: mean(weighted.map(Math.abs)),
      },
      learner: {
        // the embedded learner's ratio differs from 1 by rounding only (a range its chart must draw)
        meanRatio: tinker ? 1 + 0.02 * (r() - 0.5) : 1 + 1e-8 * round,
        ...(tinker ? { samplerKl: 0.001 * r(), samplerEntropy: 0.5 + r() } : {}),
        loss: 0.05 - 0.01 * round + 0.02 * r(),
        pgLoss: 0.04 - 0.01 * round + 0.02 * r(),
        kl: 0.002 * round * (1 + r()),
        clipFrac: 0.05 * r(),
        gradNorm: 0.5 + r(),
        tokens: 2000 + Math.floor(r() * 500),
        sequences: rollouts.length * 3,
        lr: 1e-4,
        steps: 1,
      },
      timings: {
        samplingMs: 20000,
        envMs: 500,
        learnMs: 8000,
        validationMs: validated ? 3000 : 0,
        totalMs: 31500,
      },
      ...(old ? {} : { usage: usage(rollouts, tinker, r) }),
      ...(validation ? { validation } : {}),
      finished: new Date(Date.parse(manifest.started) + round * 31500).toISOString(),
    };
    appendFileSync(roundsPath, `${JSON.stringify(record)}\n`);
    shown = next;
  }

  if (killedMidRound) {
    const half = (row: unknown) => JSON.stringify(row).slice(0, 200);
    appendFileSync(roundsPath, half({ round: rounds + 1, policyVersion: rounds, tasks: [] }));
    const next = join(dir, RUN_FILES.rolloutsDir, `${roundName(rounds + 1)}.jsonl`);
    writeFileSync(next, half({ round: rounds + 1, taskId: 'torn' }));
  }
  if (finished)
    writeEval(join(dir, RUN_FILES.evalFinal), evalTasks, skillAt(rounds, rounds), rng(seed + 200));
  return manifest;
}
