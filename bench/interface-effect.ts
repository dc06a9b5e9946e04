/**
 * The SEAL mechanism on its own: two `seal train` run folders of the same seed, one whose rollouts
 * saw the interface and one whose did not (e.g. `--method seal` and `--method vanilla`, both with
 * `--lr 0 --anchor-coef 0` so the weights stay the base's), compared group by group. A round's
 * tasks and sampling seeds are functions of (seed, round, group, sample), so the two runs sampled
 * the same tasks with the same seeds; only the prompt differs.
 *
 *   npx tsx bench/interface-effect.ts RUN_WITH_INTERFACE RUN_WITHOUT [--json FILE]
 *
 * Prints per run the mean reward, groups with reward variance, parse errors, completion tokens and
 * the first prompt's length against the window, the interface parts a budget-fitted interface left
 * out (`interfaceDropped` in the trajectories), then the paired comparison of the per-group mean
 * reward (won / lost groups, sign test, bootstrap interval of the mean difference).
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { bootstrapMean } from '../src/eval/bootstrap.js';
import { signTestP } from '../src/eval/paired.js';

interface Step {
  readonly usage?: { promptTokens?: number; completionTokens?: number };
  readonly calls?: unknown[];
  readonly parseError?: unknown;
}
interface Rollout {
  readonly round: number;
  readonly taskId: string;
  readonly group: number;
  readonly sample: number;
  readonly reward: number;
  readonly completionTokens: number;
  readonly trajectory: { turns: { steps: Step[] }[]; interfaceDropped?: string[] };
}

function rollouts(run: string): Rollout[] {
  const dir = join(run, 'rollouts');
  return readdirSync(dir)
    .filter((f) => f.endsWith('.jsonl'))
    .sort()
    .flatMap((f) =>
      readFileSync(join(dir, f), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Rollout),
    );
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.floor(s.length / 2)]! : Number.NaN;
};

function describeRun(rs: Rollout[], window: number) {
  const groups = groupMeans(rs);
  const first = rs.map(firstPrompt);
  const cut = rs.filter((r) => firstPrompt(r) >= window);
  const mean = (xs: Rollout[]) => xs.reduce((s, r) => s + r.reward, 0) / Math.max(1, xs.length);
  const prompts = rs.flatMap((r) =>
    r.trajectory.turns.flatMap((t) => t.steps.map((s) => s.usage?.promptTokens ?? 0)),
  );
  return {
    rollouts: rs.length,
    meanReward: rs.reduce((s, r) => s + r.reward, 0) / rs.length,
    groupsWithVariance: [...groups.values()].filter((g) => g.mean > 0 && g.mean < 1).length,
    groupsAnySuccess: [...groups.values()].filter((g) => g.mean > 0).length,
    groups: groups.size,
    meanCompletionTokens: rs.reduce((s, r) => s + r.completionTokens, 0) / rs.length,
    stepsPerRollout: prompts.length / rs.length,
    firstPromptMedian: median(first),
    firstPromptAtWindow: first.filter((n) => n >= window).length / first.length,
    promptsAtWindow: prompts.filter((n) => n >= window).length / prompts.length,
    meanRewardFirstPromptCut: mean(cut),
    meanRewardFirstPromptWhole: mean(rs.filter((r) => firstPrompt(r) < window)),
    // a budget-fitted interface: rollouts shown less than the whole interface, and which parts
    rolloutsWithDroppedParts: rs.filter((r) => r.trajectory.interfaceDropped?.length).length / rs.length,
    droppedParts: Object.fromEntries([...countParts(rs)].sort((x, y) => y[1] - x[1])),
  };
}

function countParts(rs: Rollout[]): Map<string, number> {
  const n = new Map<string, number>();
  for (const r of rs) for (const p of r.trajectory.interfaceDropped ?? []) n.set(p, (n.get(p) ?? 0) + 1);
  return n;
}

const firstPrompt = (r: Rollout) => r.trajectory.turns[0]?.steps[0]?.usage?.promptTokens ?? 0;

/** per (round, group): its task, mean reward and largest first prompt */
function groupMeans(rs: Rollout[]): Map<string, { task: string; mean: number; prompt: number }> {
  const acc = new Map<string, { task: string; sum: number; n: number; prompt: number }>();
  for (const r of rs) {
    const k = `${r.round}/${r.group}`;
    const a = acc.get(k) ?? { task: r.taskId, sum: 0, n: 0, prompt: 0 };
    a.sum += r.reward;
    a.n++;
    a.prompt = Math.max(a.prompt, firstPrompt(r));
    acc.set(k, a);
  }
  return new Map([...acc].map(([k, a]) => [k, { task: a.task, mean: a.sum / a.n, prompt: a.prompt }]));
}

const [withDir, withoutDir, ...rest] = process.argv.slice(2);
if (!withDir || !withoutDir) {
  console.error('usage: tsx bench/interface-effect.ts RUN_WITH_INTERFACE RUN_WITHOUT [--json FILE]');
  process.exit(2);
}
const jsonAt = rest.indexOf('--json');
// the embedded policy keeps this many prompt tokens (its window less the completion budget)
const WINDOW = 896;
// a run still under way is compared on the rounds both have finished
const key = (r: Rollout) => `${r.round}/${r.group}`;
const allA = rollouts(withDir);
const allB = rollouts(withoutDir);
const inA = new Set(allA.map(key));
const inB = new Set(allB.map(key));
const a = allA.filter((r) => inB.has(key(r)));
const b = allB.filter((r) => inA.has(key(r)));
const ga = groupMeans(a);
const gb = groupMeans(b);
/** the paired comparison over the groups `keep` admits (by the with-interface group) */
function paired(keep: (x: { prompt: number }, y: { prompt: number }) => boolean) {
  let won = 0;
  let lost = 0;
  const diffs: number[] = [];
  for (const [k, x] of ga) {
    const y = gb.get(k);
    if (!y) continue;
    if (x.task !== y.task)
      throw new Error(`group ${k}: ${x.task} against ${y.task}; not the same seed and tasks`);
    if (!keep(x, y)) continue;
    if (x.mean > y.mean) won++;
    if (x.mean < y.mean) lost++;
    diffs.push(x.mean - y.mean);
  }
  return { groups: diffs.length, won, lost, p: signTestP(won, lost), meanRewardDiff: bootstrapMean(diffs) };
}
const result = {
  with: describeRun(a, WINDOW),
  without: describeRun(b, WINDOW),
  paired: paired(() => true),
  // where the interface pushed the first prompt to the window (cut from the left) and where not
  pairedCut: paired((x, y) => x.prompt >= WINDOW && y.prompt < WINDOW),
  pairedUncut: paired((x) => x.prompt < WINDOW),
};
console.log(JSON.stringify(result, null, 2));
if (jsonAt >= 0 && rest[jsonAt + 1]) writeFileSync(rest[jsonAt + 1]!, `${JSON.stringify(result, null, 2)}\n`);
