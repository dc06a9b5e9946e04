/**
 * Measurements of a base with the guess-missing-value habit, for the recovery experiment
 * (docs/results-mechanism.md). Both play miss_param tasks at the training temperature as a
 * training rollout plays them (steps per turn, parse errors answered), `--samples` times each,
 * with the weights frozen; every sample has its own seed.
 *
 *   rates: on a split's miss_param tasks (default dev), how often the policy answers the turn that
 *     lacks a value without a call (it asks), once with no interface and once with the guideline
 *     the SEAL interface activates against calling without a value (`spurious_tool_call`'s) shown,
 *     same tasks and seeds; and the task success of both.
 *   pool: on the training split's miss_param tasks, how often the policy solves each task when the
 *     turn that lacks a value is answered for it by asking (text, no call): its success apart from
 *     the habit; and, same seeds, how often it solves it on its own (no interface). The checker
 *     does not check a turn with nothing to call, so a guess costs a task only through what its
 *     calls change; a task enters the pool when asking makes it solvable (share at least `--min`)
 *     and the policy alone does not solve it (share at most `--max-alone`). `--out` writes the
 *     file `seal train --train-pool` reads (ids one a line, the command and counts as comments).
 *   held: on the training split's tasks of another category (`--category`, default base), how
 *     often the policy solves each on its own (no interface); the tasks it solves in at least
 *     `--min` of the samples are ones where a habit spilling over (asking where a call is needed)
 *     costs reward, for a pool that should show that cost. `--out` writes them as `pool` does.
 *
 *   npx tsx scripts/recover/habit.ts rates --checkpoint DIR [--split dev] [--samples 4] [--seed 11]
 *   npx tsx scripts/recover/habit.ts pool --checkpoint DIR [--samples 8] [--min 0.5] [--max-alone 0.125]
 *                                         [--seed 41] [--out FILE]
 *   npx tsx scripts/recover/habit.ts held --checkpoint DIR [--category base] [--samples 8] [--min 0.5]
 *                                         [--seed 43] [--out FILE]
 */
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { formatAdapter } from '../../src/agent/formats/index.js';
import { abstentionByCategory, abstentionText } from '../../src/bfcl/abstention.js';
import { rollout, type TrainingInterface } from '../../src/bfcl/rollout.js';
import { type BfclTask, CATEGORIES } from '../../src/envs/bfcl/data/tasks.js';
import { loadMiniSuite } from '../../src/envs/mini/index.js';
import { loadCheckpoint } from '../../src/nn/checkpoint.js';
import { EMBEDDED_TOOL_FORMAT } from '../../src/policy/embedded/policy.js';
import { EmbeddedPolicyPool } from '../../src/policy/embedded/pool.js';
import type { Completion, CompletionRequest, Policy } from '../../src/policy/policy.js';
import { diagnose, labelsOf } from '../../src/seal/diagnosis.js';
import { initialInterfaceState, summarise, trainingContext } from '../../src/seal/interface.js';
import type { Trajectory } from '../../src/seal/trajectory.js';
import { TRAIN_DEFAULTS } from '../../src/train/config.js';
import { mixSeed } from '../../src/util/rng.js';
import { mapConcurrent } from '../../src/util/semaphore.js';

const { values: flags, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    checkpoint: { type: 'string' },
    split: { type: 'string', default: 'dev' },
    samples: { type: 'string' },
    min: { type: 'string', default: '0.5' },
    'max-alone': { type: 'string', default: '0.125' },
    seed: { type: 'string' },
    temperature: { type: 'string', default: String(TRAIN_DEFAULTS.temperature) },
    out: { type: 'string' },
    category: { type: 'string', default: 'base' },
  },
});
const mode = positionals[0];
if ((mode !== 'rates' && mode !== 'pool' && mode !== 'held') || !flags.checkpoint) {
  console.error('usage: habit.ts rates|pool|held --checkpoint DIR [options]  (see the file header)');
  process.exit(2);
}
const checkpoint = flags.checkpoint;
const samples = Number(flags.samples ?? (mode === 'rates' ? 4 : 8));
const seed = Number(flags.seed ?? { rates: 11, pool: 41, held: 43 }[mode]);
const temperature = Number(flags.temperature);
const ASK = 'Please tell me the missing value first; I will not guess it.';

/**
 * A sampler with a seed for each request (the rollout's, mixed with the step's index); with
 * `askOn`, the request that opens that turn (0-based; its user message is the last message) is
 * answered by asking instead.
 */
class SeededPolicy implements Policy {
  readonly name: string;
  private step = 0;
  constructor(
    private readonly inner: Policy,
    private readonly rolloutSeed: number,
    private readonly askOn?: number,
  ) {
    this.name = inner.name;
  }
  async complete(request: CompletionRequest, signal?: AbortSignal): Promise<Completion> {
    const users = request.messages.filter((m) => m.role === 'user').length;
    if (this.askOn !== undefined && users === this.askOn + 1 && request.messages.at(-1)?.role === 'user')
      return { text: ASK, finishReason: 'stop', latencyMs: 0 };
    return this.inner.complete({ ...request, seed: mixSeed(this.rolloutSeed, this.step++) }, signal);
  }
}

/** the turn whose ground truth is empty; the tasks here have one, and one user message a turn */
function missingTurn(task: BfclTask): number {
  const empty = task.groundTruth.flatMap((gt, t) => (gt.length === 0 ? [t] : []));
  if (empty.length !== 1 || !task.question.every((turn) => turn.length === 1))
    throw new Error(`${task.id}: not a one-missing-turn task this script can answer for`);
  return empty[0]!;
}

/** the interface with the guideline against calling without a value, as SEAL shows it once active */
function guidelineShown(): TrainingInterface {
  const base = initialInterfaceState();
  const state = {
    ...base,
    guidelines: [
      {
        label: 'spurious_tool_call' as const,
        pressure: 0.3,
        prevalence: 0.3,
        meanReward: 0,
        count: 10,
        activatedRound: 1,
      },
    ],
  };
  return { ctx: trainingContext('scripts/recover/habit.ts'), state: { ...state, summary: summarise(state) } };
}

const data = loadMiniSuite();
const split = mode === 'rates' ? flags.split! : 'train';
const ids = data.split[split as 'train' | 'test' | 'dev'];
if (!ids) throw new Error(`no split ${split}`);
const category = mode === 'held' ? flags.category! : 'miss_param';
if (!(CATEGORIES as readonly string[]).includes(category))
  throw new Error(`--category must be one of ${CATEGORIES.join(', ')}, got ${category}`);
const tasks = ids.map((id) => data.byId.get(id)!).filter((t) => t.category === category);
const { config } = loadCheckpoint(checkpoint);
const pool = await EmbeddedPolicyPool.start(checkpoint, { workers: 2 });
const format = formatAdapter(EMBEDDED_TOOL_FORMAT);
const classOf = (name: string) => data.docs.get(name)?.className;

/** every task `samples` times; `variant` says what the rollout is shown or given */
async function play(variant: {
  interface?: TrainingInterface;
  askForIt?: boolean;
}): Promise<Map<string, Trajectory[]>> {
  const jobs = tasks.flatMap((task, i) => Array.from({ length: samples }, (_, s) => ({ task, i, s })));
  const out = new Map<string, Trajectory[]>();
  await mapConcurrent(jobs, 64, async ({ task, i, s }) => {
    const policy = new SeededPolicy(
      pool,
      mixSeed(seed, i, s),
      variant.askForIt ? missingTurn(task) : undefined,
    );
    const trajectory = await rollout(task, data, policy, {
      format,
      sampling: { temperature, topP: 1, maxTokens: TRAIN_DEFAULTS.maxTokens },
      onParseError: 'reply',
      maxStepsPerTurn: TRAIN_DEFAULTS.maxSteps,
      ...(variant.interface ? { trainingInterface: variant.interface } : {}),
    });
    out.set(task.id, [...(out.get(task.id) ?? []), trajectory]);
  });
  return out;
}

const successShare = (ts: readonly Trajectory[]) => ts.filter((t) => t.reward === 1).length / ts.length;
const sha = config.modelSha256.slice(0, 12);
try {
  if (mode === 'rates') {
    for (const [name, variant] of [
      ['no interface', {}],
      ['guideline shown', { interface: guidelineShown() }],
    ] as const) {
      const played = await play(variant);
      const all = [...played.values()].flat();
      const asked = abstentionByCategory(
        all.map((t) => ({ category: 'miss_param' as const, labels: labelsOf(diagnose(t, classOf)) })),
      ).miss_param;
      // what the turns held back said, the commonest first: an ask, or a text that only looks done
      const said = new Map<string, number>();
      for (const t of all) {
        const turn = t.turns.find((u) => !u.check.checked);
        if (!turn || turn.steps.some((x) => x.calls.length > 0 || x.parseError)) continue;
        const text = turn.steps.map((x) => x.rawText ?? '').join(' | ');
        said.set(text, (said.get(text) ?? 0) + 1);
      }
      const top = [...said].sort((a, b) => b[1] - a[1]).slice(0, 4);
      console.log(
        `${checkpoint} (${sha}) ${split} miss_param, ${tasks.length} tasks x ${samples} at T=${temperature}, seed ${seed}, ${name}: asked ${abstentionText(asked)}; success ${(100 * successShare(all)).toFixed(1)}%`,
      );
      for (const [text, n] of top) console.log(`  ${n} x ${JSON.stringify(text.slice(0, 100))}`);
    }
  } else if (mode === 'held') {
    const alone = await play({});
    const min = Number(flags.min);
    const share = (id: string) => successShare(alone.get(id)!);
    const chosen = tasks.filter((t) => share(t.id) >= min);
    for (const t of tasks)
      console.log(`${t.id}\talone ${share(t.id).toFixed(3)}${share(t.id) >= min ? '\theld' : ''}`);
    const mean = (tasks.reduce((sum, t) => sum + share(t.id), 0) / tasks.length).toFixed(3);
    const summary = `${chosen.length} of ${tasks.length} ${category} training tasks solved alone in at least ${min * 100}% of ${samples} samples (mean success ${mean})`;
    console.log(summary);
    if (flags.out) {
      const header = [
        `# ${summary}.`,
        `# Base ${checkpoint} (model sha256 ${sha}...), temperature ${temperature}, seed ${seed}. Made with:`,
        `#   npx tsx scripts/recover/habit.ts held --checkpoint ${checkpoint} --category ${category} --samples ${samples} --min ${min} --seed ${seed} --out ${flags.out}`,
      ];
      writeFileSync(flags.out, `${[...header, ...chosen.map((t) => t.id)].join('\n')}\n`);
    }
  } else {
    const asked = await play({ askForIt: true });
    const alone = await play({});
    const min = Number(flags.min);
    const maxAlone = Number(flags['max-alone']);
    const share = (id: string) => successShare(asked.get(id)!);
    const shareAlone = (id: string) => successShare(alone.get(id)!);
    const inPool = (id: string) => share(id) >= min && shareAlone(id) <= maxAlone;
    const chosen = tasks.filter((t) => inPool(t.id));
    for (const t of tasks)
      console.log(
        `${t.id}\tasked ${share(t.id).toFixed(3)}\talone ${shareAlone(t.id).toFixed(3)}${inPool(t.id) ? '\tpool' : ''}`,
      );
    const mean = (f: (id: string) => number) =>
      (tasks.reduce((sum, t) => sum + f(t.id), 0) / tasks.length).toFixed(3);
    const summary = `${chosen.length} of ${tasks.length} miss_param training tasks solved in at least ${min * 100}% of ${samples} samples when the turn lacking a value is answered by asking, and in at most ${maxAlone * 100}% alone (mean success ${mean(share)} asked, ${mean(shareAlone)} alone)`;
    console.log(summary);
    if (flags.out) {
      const header = [
        `# The recovery experiment's training pool: ${summary}.`,
        `# Base ${checkpoint} (model sha256 ${sha}...), temperature ${temperature}, seed ${seed}. Made with:`,
        `#   npx tsx scripts/recover/habit.ts pool --checkpoint ${checkpoint} --samples ${samples} --min ${min} --max-alone ${maxAlone} --seed ${seed} --out ${flags.out}`,
      ];
      writeFileSync(flags.out, `${[...header, ...chosen.map((t) => t.id)].join('\n')}\n`);
    }
  }
} finally {
  await pool.close();
}
