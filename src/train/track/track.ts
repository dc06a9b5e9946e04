/**
 * Experiment trackers (`--track wandb mlflow`): a copy of each round's numbers sent to Weights &
 * Biases or an MLflow tracking server while the run goes on. The run folder stays the record; a
 * tracker is a view of it, so a tracker that fails (unreachable, refused, slow) is said once and
 * left behind, and never stops, slows down much or changes a run.
 */
import type { Summary } from '../../bfcl/summary.js';
import { UsageError } from '../../util/errors.js';
import type { RoundRecord } from '../record.js';

export const TRACKERS = ['wandb', 'mlflow'] as const;
export type TrackerName = (typeof TRACKERS)[number];

/** what a tracker is told; every call may fail, and none is awaited by the round */
export interface Tracker {
  readonly name: string;
  /** numbers at a step (the round; 0 before training) */
  log(step: number, metrics: Readonly<Record<string, number>>): Promise<void>;
  /** the run ended (finished) or stopped with an error */
  close(status: 'finished' | 'failed'): Promise<void>;
  /** stop at once whatever it still runs (the run ends without waiting for it) */
  abandon?(): void;
}

/** where a run's tracking goes, and what it is called there */
export interface TrackStart {
  /** the run folder's name, the tracker run's display name */
  readonly name: string;
  readonly config: Readonly<Record<string, unknown>>;
  /** the run folder, for what a tracker keeps to continue the same tracked run on resume */
  readonly dir: string;
  /** the run continues after this round (0: a new run) */
  readonly resumedAfter: number;
  readonly env: NodeJS.ProcessEnv;
}

/** a number a tracker can take (JSON has no NaN or infinity) */
const finite = (x: unknown): x is number => typeof x === 'number' && Number.isFinite(x);

function put(out: Record<string, number>, key: string, value: unknown): void {
  if (finite(value)) out[key] = value;
}

/** a strict evaluation's average and per-category accuracy under `prefix` */
export function summaryMetrics(prefix: string, s: Summary): Record<string, number> {
  const out: Record<string, number> = {};
  put(out, `${prefix}/average`, s.average);
  for (const [category, c] of Object.entries(s.categories)) put(out, `${prefix}/${category}`, c?.accuracy);
  return out;
}

/** the numbers of a round record a tracker shows */
export function roundMetrics(r: RoundRecord): Record<string, number> {
  const out: Record<string, number> = {};
  const ro = r.rollouts;
  put(out, 'reward/mean', ro.meanReward);
  put(out, 'rollouts/group_success', ro.groupSuccess);
  put(out, 'rollouts/groups_with_signal', ro.groupsWithVariance);
  put(out, 'rollouts/parse_error_rate', ro.steps > 0 ? ro.parseErrors / ro.steps : 0);
  put(out, 'rollouts/completion_tokens', ro.meanCompletionTokens);
  const l = r.learner;
  put(out, 'learner/loss', l.loss);
  put(out, 'learner/pg_loss', l.pgLoss);
  put(out, 'learner/kl', l.kl);
  put(out, 'learner/clip_frac', l.clipFrac);
  put(out, 'learner/grad_norm', l.gradNorm);
  put(out, 'learner/lr', l.lr);
  put(out, 'learner/steps', l.steps);
  put(out, 'learner/tokens', l.tokens);
  put(out, 'learner/mean_ratio', l.meanRatio);
  put(out, 'learner/anchor_loss', l.anchor?.loss);
  put(out, 'weights/mean', r.weights.mean);
  put(out, 'advantages/mean_abs', r.advantages.meanAbs);
  put(out, 'advantages/mean_abs_weighted', r.advantages.meanAbsWeighted);
  for (const [label, n] of Object.entries(r.labels)) put(out, `labels/${label}`, n);
  put(out, 'time/round_s', r.timings.totalMs / 1000);
  if (r.usage) {
    put(out, 'tokens/prompt', r.usage.promptTokens);
    put(out, 'tokens/sampled', r.usage.sampledTokens);
    put(out, 'tokens/trained', r.usage.trainedTokens);
    put(out, 'cost/estimated_usd', r.usage.estimatedCostUsd);
  }
  if (r.validation) Object.assign(out, summaryMetrics('validation', r.validation.summary));
  return out;
}

/**
 * What a tracker needs from the environment, checked before a new run starts (a missing server
 * address is the user's to fix, exit 2); undefined when it has what it needs, else why not.
 */
export function trackerProblem(name: TrackerName, env: NodeJS.ProcessEnv): string | undefined {
  if (name === 'mlflow') {
    const uri = env.MLFLOW_TRACKING_URI;
    if (!uri)
      return '--track mlflow needs MLFLOW_TRACKING_URI, the http(s) URL of an MLflow tracking server (e.g. http://127.0.0.1:5000)';
    if (!/^https?:\/\//.test(uri))
      return `--track mlflow: MLFLOW_TRACKING_URI ${uri} is not an http(s) URL; seal talks to a tracking server (mlflow server), not to a local folder or database`;
    return undefined;
  }
  const mode = env.WANDB_MODE;
  if (mode !== undefined && mode !== '' && !['online', 'offline', 'disabled', 'dryrun', 'run'].includes(mode))
    return `--track wandb: WANDB_MODE ${mode} is not one W&B knows (online, offline, disabled)`;
  if (!env.WANDB_API_KEY && !isWandbOff(env))
    return '--track wandb needs WANDB_API_KEY (your key from https://wandb.ai/authorize), or WANDB_MODE=disabled to leave W&B out';
  return undefined;
}

/**
 * WANDB_MODE offline or disabled: W&B left out. (The W&B JS SDK keeps nothing locally in offline
 * mode, unlike the Python one: it would still call the server to create the run, then drop every
 * row. The run folder holds the numbers either way.)
 */
export const isWandbOff = (env: NodeJS.ProcessEnv): boolean =>
  env.WANDB_MODE === 'offline' || env.WANDB_MODE === 'disabled' || env.WANDB_MODE === 'dryrun';

/** every tracker's problem, as one UsageError: for a new run, before anything is written */
export function checkTracking(names: readonly TrackerName[], env: NodeJS.ProcessEnv): void {
  const problems = names.flatMap((n) => trackerProblem(n, env) ?? []);
  if (problems.length) throw new UsageError(problems.join('\n'));
}

/** how long the end of a run waits for a tracker to send what it holds */
export const CLOSE_WAIT_MS = 30_000;

/**
 * The run's trackers behind one face: calls are queued per tracker and never awaited by the
 * caller until `close`; the first failure of a tracker is said once (`warn`) and the tracker is
 * dropped.
 */
export class Tracking {
  private readonly queues = new Map<Tracker, Promise<void>>();
  private readonly dropped = new Set<Tracker>();

  constructor(
    trackers: readonly Tracker[],
    private readonly warn: (line: string) => void,
  ) {
    for (const t of trackers) this.queues.set(t, Promise.resolve());
  }

  private fail(t: Tracker, e: unknown): void {
    if (this.dropped.has(t)) return;
    this.dropped.add(t);
    t.abandon?.();
    const why = e instanceof Error ? e.message : String(e);
    this.warn(
      `warning: ${t.name} tracking stopped (${why}); the run goes on, and its folder keeps every number`,
    );
  }

  private enqueue(t: Tracker, call: () => Promise<void>): void {
    const next = this.queues
      .get(t)!
      .then(() => (this.dropped.has(t) ? undefined : call()))
      .catch((e) => this.fail(t, e));
    this.queues.set(t, next);
  }

  log(step: number, metrics: Readonly<Record<string, number>>): void {
    if (Object.keys(metrics).length === 0) return;
    for (const t of this.queues.keys()) this.enqueue(t, () => t.log(step, metrics));
  }

  /** sends what is queued and ends each tracked run, waiting at most CLOSE_WAIT_MS in all */
  async close(status: 'finished' | 'failed'): Promise<void> {
    for (const t of this.queues.keys()) this.enqueue(t, () => t.close(status));
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((r) => {
      timer = setTimeout(() => r('late'), CLOSE_WAIT_MS);
    });
    await Promise.all(
      [...this.queues].map(async ([t, q]) => {
        if ((await Promise.race([q.then(() => 'done' as const), late])) === 'late')
          this.fail(t, new Error(`it did not answer within ${CLOSE_WAIT_MS / 1000} s at the end of the run`));
        if (this.dropped.has(t)) t.abandon?.();
      }),
    );
    clearTimeout(timer);
  }
}

/**
 * The run's trackers, each opened (its tracked run created) as the run starts; one that cannot
 * be opened is said once and left out.
 */
export async function openTracking(
  names: readonly TrackerName[],
  start: TrackStart,
  warn: (line: string) => void,
  open: (name: TrackerName, s: TrackStart) => Promise<Tracker>,
): Promise<Tracking> {
  const opened: Tracker[] = [];
  for (const name of names) {
    const problem = trackerProblem(name, start.env);
    if (problem) {
      warn(`warning: ${problem}; the run goes on without it`);
      continue;
    }
    if (name === 'wandb' && isWandbOff(start.env)) {
      warn(`W&B left out (WANDB_MODE ${start.env.WANDB_MODE}); the run folder keeps every number`);
      continue;
    }
    try {
      opened.push(await open(name, start));
    } catch (e) {
      warn(
        `warning: ${name === 'wandb' ? 'W&B' : 'MLflow'} tracking could not start (${e instanceof Error ? e.message : String(e)}); the run goes on without it`,
      );
    }
  }
  return new Tracking(opened, warn);
}
