/**
 * The loop in process, with tiny configs and the real embedded learner: what each method switch
 * changes, that validation never sees the interface, and that the run record holds what section 9
 * of the method doc asks for.
 */
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CALL_SKELETONS, TOOL_CALL_FORMATS } from '../../src/agent/format.js';
import type { FunctionDoc } from '../../src/envs/bfcl/data/tasks.js';
import { loadMiniSuite } from '../../src/envs/mini/index.js';
import { EmbeddedLearner } from '../../src/learner/embedded/learner.js';
import { BASE_CHECKPOINT_DIR } from '../../src/nn/checkpoint.js';
import type { CompletionRequest } from '../../src/policy/policy.js';
import {
  decorateFunctions,
  decorateSystemPrompt,
  HINT_PREFIX,
  parseFailureHelp,
  REQUIRED_MARK,
  systemPromptLines,
  trainingContext,
} from '../../src/seal/interface.js';
import { resolveConfig, type TrainConfig } from '../../src/train/config.js';
import { initialTrainState, runRounds } from '../../src/train/loop.js';
import type { Method, RolloutRecord, RoundRecord } from '../../src/train/record.js';
import { RunFolder } from '../../src/train/run-folder.js';
import { mixSeed } from '../../src/util/rng.js';
import { fullInterfaceState } from '../support/interface-state.js';

const data = loadMiniSuite();

/**
 * What the interface adds to what a policy sees, derived from its own renderings with every
 * component on and every guideline active: the system prompt's lines, the schema cues' text on the
 * suite's tool docs (the phrase before the cue's values, e.g. "Allowed values:"), the first and
 * last line of the format help in every format, and the hint prefix. A change to a rendering
 * changes the detector with it.
 */
function interfaceMarkers(): string[] {
  const ctx = trainingContext('detector');
  const full = fullInterfaceState();
  const markers = new Set<string>(systemPromptLines(ctx, full));
  markers.add(decorateSystemPrompt(ctx, full, '').split('\n')[0]!);
  // schema cues: the text each cue adds to a description, up to the cue's own values
  const added = (before: string | undefined, after: string | undefined) => {
    if (!after || after === before) return;
    const piece = (before && after.startsWith(before) ? after.slice(before.length) : after).trim();
    // a cue is a mark in parentheses or a label before its values ("Allowed values: 'a', 'b'")
    for (const m of piece.matchAll(/\([a-z]+\)|[A-Z][A-Za-z ]*:/g)) markers.add(m[0]);
  };
  // the suite's docs, and one with an enum parameter (the mini suite may have none)
  const probe = {
    name: 'probe',
    description: 'Probe.',
    parameters: {
      type: 'dict',
      properties: { mode: { type: 'string', description: 'The mode.', enum: ['a', 'b'] } },
      required: ['mode'],
    },
  } as unknown as FunctionDoc;
  const docs = [...[...data.docs.values()].map((d) => d.doc), probe];
  decorateFunctions(ctx, full, docs).forEach((d, i) => {
    const plain = docs[i]!;
    added(plain.description, d.description);
    const props =
      (plain.parameters as { properties?: Record<string, { description?: string }> }).properties ?? {};
    const decorated =
      (d.parameters as { properties?: Record<string, { description?: string }> }).properties ?? {};
    for (const [k, v] of Object.entries(decorated)) added(props[k]?.description, v.description);
  });
  for (const format of TOOL_CALL_FORMATS) {
    const help = parseFailureHelp(ctx, full, { skeleton: CALL_SKELETONS[format], toolNames: ['x'] })!.split(
      '\n',
    );
    markers.add(help[0]!.replace(/\.$/, ''));
    markers.add(help.at(-1)!);
  }
  markers.add(HINT_PREFIX.trim());
  return [...markers];
}
const INTERFACE_TEXT = interfaceMarkers();
const hasInterface = (r: CompletionRequest) =>
  r.messages.some((m) => typeof m.content === 'string' && INTERFACE_TEXT.some((t) => m.content!.includes(t)));

interface Played {
  readonly rounds: RoundRecord[];
  readonly rollouts: RolloutRecord[];
  /** every request of the training rollouts and of validation, by round */
  readonly training: CompletionRequest[];
  readonly validation: CompletionRequest[];
  /** the sampling seed of every training request */
  readonly seeds: Set<number>;
  /** the training requests by their sampling seed */
  readonly bySeed: Map<number, CompletionRequest>;
  readonly run: RunFolder;
}

async function play(method: Method, over: Partial<TrainConfig> = {}): Promise<Played> {
  const { config } = resolveConfig(undefined, {
    method,
    rounds: 3,
    tasksPerRound: 2,
    groupSize: 3,
    maxTokens: 64,
    maxSteps: 3,
    validationTasks: 4,
    validateEvery: 2,
    gradientWorkers: 1,
    samplerWorkers: 1,
    lr: 1e-3,
    // the anchor's default eight demonstrations a round were most of these runs' time
    anchorDemos: 2,
    ...over,
  });
  const run = new RunFolder(join(mkdtempSync(join(tmpdir(), 'seal-loop-')), 'run'));
  run.create({ format: 'seal-train-run', version: 1, method, seed: config.seed } as never);
  const learner = EmbeddedLearner.open(BASE_CHECKPOINT_DIR, {
    gradientWorkers: 1,
    samplerWorkers: 1,
    samplerDir: run.path('sampler'),
    name: 'embedded:test',
  });
  const training: CompletionRequest[] = [];
  const validation: CompletionRequest[] = [];
  const bySeed = new Map<number, CompletionRequest>();
  let phase: 'sampling' | 'learning' | 'validating' = 'sampling';
  // the real learner; its samplers are watched, not replaced
  const watched = Object.create(learner) as EmbeddedLearner;
  watched.samplingPolicy = async () => {
    const p = await learner.samplingPolicy();
    return {
      name: p.name,
      close: () => p.close(),
      complete: (r, s) => {
        (phase === 'validating' ? validation : training).push(r);
        if (phase !== 'validating' && r.seed !== undefined) bySeed.set(r.seed, r);
        return p.complete(r, s);
      },
    };
  };
  try {
    await runRounds(
      { config, data, learner: watched, run, hooks: { log: () => {}, progress: (p) => (phase = p.phase) } },
      initialTrainState(config),
    );
  } finally {
    await learner.close();
  }
  const rounds = run.rounds();
  const rollouts = rounds.flatMap((r) =>
    readFileSync(run.path('rollouts', `round-${String(r.round).padStart(4, '0')}.jsonl`), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as RolloutRecord),
  );
  return { rounds, rollouts, training, validation, seeds: new Set(bySeed.keys()), bySeed, run };
}

describe('seal train loop (tiny config, shipped base)', { timeout: 600_000 }, () => {
  it('the interface-text detector holds what the renderings add, the schema cues and format help included', () => {
    for (const cue of [REQUIRED_MARK, 'Allowed values:', 'Type:', 'Hint:', 'Notes on using the tools:'])
      expect(INTERFACE_TEXT.some((m) => m.includes(cue) || cue.includes(m))).toBe(true);
    expect(
      INTERFACE_TEXT.some((m) => m.startsWith('Your last message could not be read as tool calls')),
    ).toBe(true);
  });

  it('seal: the interface evolves, w_j varies, validation never sees the interface, the record is whole', async () => {
    // schema cues forced on: the instruction line is then in every training prompt, whatever the
    // policy's failures evolve (the compact format's signatures already show what the always-on
    // marks would, so a policy that fails little may otherwise see no cue in three rounds)
    const p = await play('seal', { schemaCues: 'on' });
    expect(p.rounds.map((r) => r.round)).toEqual([1, 2, 3]);
    // training rollouts saw the interface (the always-on schema cues at least)
    expect(p.training.some(hasInterface)).toBe(true);
    // validation (rounds 2 and 3) saw none of it, not one request
    expect(p.validation.length).toBeGreaterThan(0);
    expect(p.validation.filter(hasInterface)).toEqual([]);
    expect(p.validation.every((r) => r.temperature === 0)).toBe(true);
    // each round's interface is the previous round's evolved one
    expect(p.rounds[1]!.interface).toEqual(p.rounds[0]!.nextInterface);
    expect(p.rounds[2]!.interface).toEqual(p.rounds[1]!.nextInterface);
    expect(p.rounds.map((r) => r.interface.round)).toEqual([0, 1, 2]);
    // section 9: profile, interface, labels, validation per category, learner stats, per-rollout records
    for (const r of p.rounds) {
      expect(r.profile.window.overall.rollouts).toBe(6);
      expect(Object.values(r.labels).reduce((a, b) => a + b!, 0)).toBe(r.profile.window.overall.turns);
      expect(r.rollouts.count).toBe(6);
      expect(r.timings.totalMs).toBeGreaterThan(0);
    }
    expect(p.rounds[1]!.validation?.summary.categories.base.n).toBe(1);
    expect(p.rounds[2]!.validation).toBeDefined();
    expect(existsSync(p.run.path('validation', 'round-0002', 'results.jsonl'))).toBe(true);
    expect(p.rollouts).toHaveLength(18);
    for (const r of p.rollouts) {
      expect(r.labels).toHaveLength(r.trajectory.turns.length);
      expect(r.weight).toBeGreaterThanOrEqual(0.5);
      expect(r.weight).toBeLessThanOrEqual(2);
      // the weight scales the advantage and never flips its sign
      expect(Math.sign(r.weightedAdvantage)).toBe(Math.sign(r.advantage));
    }
    // w_j varies: rollouts with different diagnoses get different weights
    expect(new Set(p.rollouts.map((r) => r.weight)).size).toBeGreaterThan(1);
    expect(p.rounds.some((r) => r.weights.min < r.weights.max)).toBe(true);
    const versions = p.rounds.map((r) => r.policyVersion);
    expect(versions[0]).toBe(0);
    expect(versions).toEqual([...versions].sort((a, b) => a - b));
  });

  it('no-reweight: w = 1 everywhere; the interface evolves as in seal', async () => {
    const p = await play('no-reweight', { rounds: 2, validateEvery: 0, schemaCues: 'on' });
    for (const r of p.rollouts) {
      expect(r.weight).toBe(1);
      expect(r.weightedAdvantage).toBe(r.advantage);
    }
    expect(p.training.some(hasInterface)).toBe(true);
    expect(p.rounds[1]!.interface).toEqual(p.rounds[0]!.nextInterface);
    // it evolves every round, as in seal: each round's next interface is one evolution further
    expect(p.rounds.map((r) => [r.interface.round, r.nextInterface.round])).toEqual([
      [0, 1],
      [1, 2],
    ]);
  });

  it('no-closed-loop: the interface evolves once, after round 1, then stays', async () => {
    const p = await play('no-closed-loop', { rounds: 2, validateEvery: 0 });
    expect(p.rounds[1]!.interface).toEqual(p.rounds[0]!.nextInterface);
    expect(p.rounds[1]!.nextInterface).toEqual(p.rounds[1]!.interface);
    // evolved once (a frozen-from-the-start interface would stay at round 0), then frozen
    expect(p.rounds.map((r) => [r.interface.round, r.nextInterface.round])).toEqual([
      [0, 1],
      [1, 1],
    ]);
    // w_j as in seal
    expect(new Set(p.rollouts.map((r) => r.weight)).size).toBeGreaterThan(1);
  });

  it('vanilla and no-env: no interface text reaches the policy; vanilla keeps w = 1, no-env reweights; seal on the same seed draws the same tasks and seeds', async () => {
    const v = await play('vanilla', { rounds: 1, validateEvery: 0 });
    expect(v.training.filter(hasInterface)).toEqual([]);
    for (const r of v.rollouts) expect(r.weight).toBe(1);
    const n = await play('no-env', { rounds: 1, validateEvery: 0 });
    expect(n.training.filter(hasInterface)).toEqual([]);
    // no-env: the interface off (every component), w_j on
    for (const r of n.rounds)
      for (const i of [r.interface, r.nextInterface])
        expect(Object.values(i.components)).toEqual(['off', 'off', 'off']);
    expect(n.rollouts.some((r) => r.weight !== 1)).toBe(true);
    // two methods on one seed, one with an interface and one without: the same tasks, rollout
    // slots and sampling seeds (what differs is only what the method switches)
    const n2 = await play('seal', { rounds: 1, validateEvery: 0, schemaCues: 'on' });
    expect(n2.training.some(hasInterface)).toBe(true);
    expect(n2.rounds[0]!.tasks).toEqual(v.rounds[0]!.tasks);
    const slots = (p: Played) => p.rollouts.map((r) => [r.taskId, r.group, r.sample]);
    expect(slots(n2)).toEqual(slots(v));
    const firstSteps = (p: Played) =>
      p.rollouts.map((r) => mixSeed(mixSeed(1, r.round, r.group, r.sample), 0)).sort();
    expect(firstSteps(n2)).toEqual(firstSteps(v));
    for (const s of firstSteps(v)) {
      expect(v.seeds.has(s)).toBe(true);
      expect(n2.seeds.has(s)).toBe(true);
    }
  });

  it('interfaceShare: the first rollouts of every group see the interface, the rest the original environment, and the records say which', async () => {
    const p = await play('seal', {
      rounds: 1,
      validateEvery: 0,
      groupSize: 4,
      schemaCues: 'on',
      interfaceShare: 0.5,
    });
    expect(p.rollouts).toHaveLength(8);
    for (const r of p.rollouts) {
      expect(r.interfaceShown).toBe(r.sample < 2);
      // the first request of the rollout, found by its sampling seed
      const first = p.bySeed.get(mixSeed(mixSeed(1, r.round, r.group, r.sample), 0));
      expect(first).toBeDefined();
      expect(hasInterface(first!)).toBe(r.sample < 2);
    }
    // a method without the interface shows it to none, whatever the share
    const v = await play('vanilla', { rounds: 1, validateEvery: 0, groupSize: 4, interfaceShare: 0.5 });
    expect(v.rollouts.map((r) => r.interfaceShown)).toEqual(v.rollouts.map(() => false));
  });

  it('the supervised anchor steps every round, with or without a policy-gradient signal', async () => {
    const p = await play('vanilla', {
      seed: 2,
      rounds: 2,
      tasksPerRound: 3,
      validateEvery: 0,
      anchorCoef: 1,
      anchorDemos: 2,
    });
    // with groups whose rewards vary (this seed's rounds have some) and with none: completions of
    // 8 tokens solve no task, so every group's rewards are all 0
    const none = await play('vanilla', {
      seed: 2,
      rounds: 1,
      tasksPerRound: 2,
      groupSize: 2,
      maxTokens: 8,
      validateEvery: 0,
      anchorCoef: 1,
      anchorDemos: 2,
    });
    expect(p.rounds.some((r) => r.learner.tokens > 0)).toBe(true);
    expect(none.rounds.map((r) => r.learner.tokens)).toEqual([0]);
    for (const r of [...p.rounds, ...none.rounds]) {
      expect(r.learner.steps).toBe(1);
      expect(r.learner.anchor!.sequences).toBeGreaterThanOrEqual(2);
      expect(r.learner.anchor!.tokens).toBeGreaterThan(0);
      expect(r.learner.anchor!.loss).toBeGreaterThan(0);
    }
  });

  it('policyGradient false: the anchor alone trains, on the rollouts and demonstrations of the run with reward', async () => {
    const over = { seed: 2, rounds: 2, tasksPerRound: 3, validateEvery: 0, anchorCoef: 1, anchorDemos: 2 };
    const withPg = await play('vanilla', over);
    const control = await play('vanilla', { ...over, policyGradient: false });
    // round 1 samples the same start weights: the same rollouts, and the same anchor batch
    const r1 = (p: Played) => p.rollouts.filter((r) => r.round === 1).map((r) => [r.taskId, r.reward]);
    expect(r1(control)).toEqual(r1(withPg));
    expect(control.rounds[0]!.learner.anchor).toEqual(withPg.rounds[0]!.learner.anchor);
    // the run with reward had a policy-gradient batch; the control trains on nothing else
    expect(withPg.rounds.some((r) => r.learner.tokens > 0)).toBe(true);
    for (const r of control.rounds) {
      expect(r.learner.tokens).toBe(0);
      expect(r.learner.sequences).toBe(0);
      expect(r.learner.steps).toBe(1);
      expect(r.learner.anchor!.tokens).toBeGreaterThan(0);
    }
  });
});
