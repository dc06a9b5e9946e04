/**
 * What `seal train` and `seal experiment` print while a run goes: a line per round, a live status
 * line on a terminal, and in a log a line every 30 s, through the rounds and through the start and
 * final evaluations (each of which takes as long as several rounds). The ETA counts the final
 * evaluation too, at the pace the run's last evaluation went.
 */

import { abstentionText } from '../bfcl/abstention.js';
import { CATEGORIES } from '../envs/bfcl/data/tasks.js';
import type { EvaluationProgress, LoopHooks, RoundProgress } from '../train/loop.js';
import type { RoundRecord } from '../train/record.js';

/** What the ETA needs to know of the run, read when it is known (after the config is loaded). */
export interface RunPlan {
  readonly rounds: number;
  /** tasks of the final evaluation; 0 without one */
  readonly finalTasks: number;
}

export interface ProgressOptions {
  readonly quiet: boolean;
  /** a live line that is redrawn in place (a terminal), or lines appended now and then (a log) */
  readonly tty: boolean;
  readonly write: (text: string) => void;
  readonly now?: () => number;
  /** how often a log gets a progress line */
  readonly everyMs?: number;
}

const minutes = (ms: number) => `${(ms / 60_000).toFixed(1)} min`;

const count = (n: number) =>
  n >= 10_000 ? `${(n / 1000).toFixed(0)}k` : n >= 1000 ? `${(n / 1000).toFixed(1)}k` : `${n}`;

/** the round's tokens, the sampler/trainer agreement and the estimated cost, where recorded */
function usageText(r: RoundRecord): string {
  const u = r.usage;
  if (!u) return '';
  const pct = (n: number) => Math.round((100 * n) / u.promptTokens);
  const cached =
    u.promptTokens === 0
      ? ''
      : u.cachedPromptTokens !== undefined
        ? ` (${pct(u.cachedPromptTokens)}% cached)`
        : ` (${pct(u.sharedPrefixTokens)}% a shared prefix)`;
  const kl = u.klPrefillTokens > 0 ? `, ${count(u.klPrefillTokens)} KL prefill` : '';
  const ratio = r.learner.meanRatio !== undefined ? ` | ratio ${r.learner.meanRatio.toFixed(3)}` : '';
  const cost = u.estimatedCostUsd !== undefined ? ` | ~$${u.estimatedCostUsd.toFixed(4)}` : '';
  return ` | tokens ${count(u.promptTokens)} prompt${cached}, ${count(u.sampledTokens)} sampled, ${count(u.trainedTokens)} trained${kl}${ratio}${cost}`;
}

function roundLine(r: RoundRecord, rounds: number, eta: string): string {
  const ro = r.rollouts;
  const labels = Object.entries(r.labels)
    .sort((a, b) => b[1]! - a[1]!)
    .slice(0, 3)
    .map(([l, n]) => `${l} ${n}`)
    .join(', ');
  const rps = ro.count / (r.timings.totalMs / 1000);
  const asked = r.validation?.abstention?.miss_param;
  const val = r.validation
    ? ` | validation ${r.validation.summary.average.toFixed(2)}${asked ? ` (asked for a missing value ${abstentionText(asked)})` : ''}`
    : '';
  return `round ${r.round}/${rounds} | ${rps.toFixed(1)} rollouts/s | reward ${ro.meanReward.toFixed(3)} | groups with signal ${ro.groupsWithVariance} | parse errors ${ro.parseErrors}/${ro.steps} | KL ${r.learner.kl.toFixed(4)} | ${labels}${val}${usageText(r)} | ETA ${eta}`;
}

const roundProgressLine = (p: RoundProgress) =>
  `round ${p.round}/${p.rounds} ${p.phase} ${p.done}/${p.total}`;

/** the live progress of a run: what LoopHooks calls, turned into lines */
export function trainHooks(plan: () => RunPlan, o: ProgressOptions): Required<LoopHooks> {
  const now = o.now ?? Date.now;
  const everyMs = o.everyMs ?? 30_000;
  const clearLive = () => {
    if (o.tty) o.write('\r\x1b[2K');
  };
  const log = (s: string) => {
    clearLive();
    o.write(`${s}\n`);
  };
  let lastLogged = Number.NEGATIVE_INFINITY;
  /** a live line on a terminal; in a log the same text at most every `everyMs` (and `force`) */
  const status = (text: string, force = false) => {
    if (o.quiet) return;
    if (o.tty) {
      o.write(`\r\x1b[2K${text}`);
      return;
    }
    const t = now();
    if (force || t - lastLogged >= everyMs) {
      lastLogged = t;
      o.write(`${text}\n`);
    }
  };

  // the ETA of the rounds counts from the first round, not from the start evaluation
  let roundsFrom = 0;
  let roundsDone = 0;
  /** wall time per task of the run's latest evaluation (start, validation or final) */
  let msPerTask: number | undefined;
  const finalLeft = (): string => {
    const tasks = plan().finalTasks;
    if (tasks === 0) return '';
    return msPerTask === undefined ? ' + the final evaluation' : '';
  };
  const finalMs = () => (msPerTask === undefined ? 0 : plan().finalTasks * msPerTask);

  let evaluation: { which: string; from: number; startedDone: number } | undefined;
  return {
    log,
    progress(p) {
      if (roundsFrom === 0) roundsFrom = now();
      status(roundProgressLine(p));
    },
    evaluation(p: EvaluationProgress) {
      const t = now();
      if (!evaluation || evaluation.which !== p.which) {
        evaluation = { which: p.which, from: t, startedDone: p.done };
        lastLogged = Number.NEGATIVE_INFINITY;
      }
      const ran = p.done - evaluation.startedDone;
      const secs = (t - evaluation.from) / 1000;
      const rate = ran > 0 && secs > 0 ? ran / secs : undefined;
      const finished = p.done === p.total;
      const eta =
        rate === undefined
          ? ''
          : finished
            ? ` | took ${minutes(t - evaluation.from)}`
            : ` | ETA ${minutes(((p.total - p.done) / rate) * 1000)}`;
      const line = `${p.which} evaluation ${p.done}/${p.total} tasks${rate === undefined ? '' : ` | ${rate.toFixed(2)} tasks/s`}${eta}`;
      if (finished && ran > 0) msPerTask = (t - evaluation.from) / ran;
      if (finished) {
        evaluation = undefined;
        if (o.tty) clearLive();
        else status(line, true);
      } else status(line, p.done === evaluation.startedDone);
    },
    onRound(r: RoundRecord) {
      roundsDone++;
      if (roundsFrom === 0) roundsFrom = now();
      const n = r.validation ? CATEGORIES.reduce((s, c) => s + r.validation!.summary.categories[c].n, 0) : 0;
      if (n > 0 && r.timings.validationMs > 0) msPerTask = r.timings.validationMs / n;
      const { rounds } = plan();
      const roundsMs = ((now() - roundsFrom) / roundsDone) * (rounds - r.round);
      const eta = `${minutes(roundsMs + finalMs())}${finalLeft()}`;
      clearLive();
      if (!o.quiet) o.write(`${roundLine(r, rounds, eta)}\n`);
    },
  };
}
