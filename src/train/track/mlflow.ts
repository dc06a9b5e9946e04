/**
 * An MLflow tracking server through its REST API (experiments/get-by-name and create, runs/create,
 * runs/log-batch, runs/update, set-tag), with fetch: four routes do not need a client library (the
 * npm `mlflow` package is a third party's, and brings more than these). The server's address and
 * credentials come from MLflow's own variables: MLFLOW_TRACKING_URI, MLFLOW_EXPERIMENT_NAME,
 * MLFLOW_TRACKING_TOKEN (bearer) or MLFLOW_TRACKING_USERNAME and MLFLOW_TRACKING_PASSWORD (basic).
 *
 * A resumed run logs into the same MLflow run: its id is kept in the run folder (tracking.json).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeJsonAtomic } from '../../util/files.js';
import type { Tracker, TrackStart } from './track.js';

/** the run folder's file that names the tracked runs it logs into */
export const TRACKING_FILE = 'tracking.json';

/** a request that does not answer in this time fails (the tracker is then dropped) */
const REQUEST_MS = 15_000;
/** tries of a request that gets no answer at all */
const TRIES = 3;
/** MLflow's limits of one log-batch request */
const BATCH_METRICS = 1000;
const BATCH_PARAMS = 100;
/** MLflow refuses longer parameter values (500 characters on servers before 2.x) */
const PARAM_CHARS = 500;

interface Kept {
  readonly mlflow?: { readonly uri: string; readonly experimentId: string; readonly runId: string };
}

export function readKept(dir: string): Kept {
  const p = join(dir, TRACKING_FILE);
  if (!existsSync(p)) return {};
  try {
    return JSON.parse(readFileSync(p, 'utf8')) as Kept;
  } catch {
    return {}; // a damaged file costs a new tracked run, not the training run
  }
}

export class MlflowTracker implements Tracker {
  readonly name = 'MLflow';
  private constructor(
    private readonly base: string,
    private readonly headers: Record<string, string>,
    readonly runId: string,
  ) {}

  /** the tracked run: the one the run folder names (on resume), else a new one with the config as params */
  static async open(s: TrackStart): Promise<MlflowTracker> {
    const uri = s.env.MLFLOW_TRACKING_URI!.replace(/\/+$/, '');
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (s.env.MLFLOW_TRACKING_TOKEN) headers.authorization = `Bearer ${s.env.MLFLOW_TRACKING_TOKEN}`;
    else if (s.env.MLFLOW_TRACKING_USERNAME)
      headers.authorization = `Basic ${Buffer.from(`${s.env.MLFLOW_TRACKING_USERNAME}:${s.env.MLFLOW_TRACKING_PASSWORD ?? ''}`).toString('base64')}`;
    const kept = readKept(s.dir).mlflow;
    if (kept && kept.uri === uri) {
      const t = new MlflowTracker(uri, headers, kept.runId);
      await t.call('runs/update', { run_id: kept.runId, status: 'RUNNING' });
      await t.tag('seal.rounds', String(s.config.rounds));
      return t;
    }
    const probe = new MlflowTracker(uri, headers, '');
    const experiment = s.env.MLFLOW_EXPERIMENT_NAME || 'seal';
    const experimentId = await probe.experimentId(experiment);
    const created = (await probe.call('runs/create', {
      experiment_id: experimentId,
      run_name: s.name,
      start_time: Date.now(),
      tags: [
        { key: 'mlflow.runName', value: s.name },
        { key: 'seal.rounds', value: String(s.config.rounds) },
      ],
    })) as { run?: { info?: { run_id?: string } } };
    const runId = created.run?.info?.run_id;
    if (!runId) throw new Error('runs/create answered without a run id');
    writeJsonAtomic(join(s.dir, TRACKING_FILE), { ...readKept(s.dir), mlflow: { uri, experimentId, runId } });
    const t = new MlflowTracker(uri, headers, runId);
    const params = Object.entries(s.config).map(([key, v]) => ({
      key,
      value: (typeof v === 'string' ? v : JSON.stringify(v)).slice(0, PARAM_CHARS),
    }));
    for (let i = 0; i < params.length; i += BATCH_PARAMS)
      await t.call('runs/log-batch', { run_id: runId, params: params.slice(i, i + BATCH_PARAMS) });
    return t;
  }

  private async experimentId(name: string): Promise<string> {
    const found = (await this.call(
      `experiments/get-by-name?experiment_name=${encodeURIComponent(name)}`,
      undefined,
      true,
    )) as { experiment?: { experiment_id?: string } } | undefined;
    if (found?.experiment?.experiment_id) return found.experiment.experiment_id;
    const made = (await this.call('experiments/create', { name })) as { experiment_id?: string };
    if (!made.experiment_id) throw new Error('experiments/create answered without an experiment id');
    return made.experiment_id;
  }

  private tag(key: string, value: string): Promise<unknown> {
    return this.call('runs/set-tag', { run_id: this.runId, key, value });
  }

  /**
   * one REST call; `missingOk`: a 404 RESOURCE_DOES_NOT_EXIST is undefined, not a failure. A
   * request that got no answer is tried again (a kept-alive connection the server closed just as it
   * was reused fails so); an answer, even an error, is final.
   */
  private async call(route: string, body: unknown, missingOk = false): Promise<unknown> {
    const url = `${this.base}/api/2.0/mlflow/${route}`;
    let res: Response | undefined;
    for (let attempt = 1; !res; attempt++) {
      try {
        res = await fetch(url, {
          method: body === undefined ? 'GET' : 'POST',
          headers: this.headers,
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
          signal: AbortSignal.timeout(REQUEST_MS),
        });
      } catch (e) {
        if (attempt < TRIES) {
          await new Promise((r) => setTimeout(r, 500 * attempt));
          continue;
        }
        const cause = (e as { cause?: { code?: string } }).cause?.code;
        throw new Error(`${url} could not be reached${cause ? ` (${cause})` : ''}`);
      }
    }
    const text = await res.text();
    if (res.status === 404 && missingOk) return undefined;
    if (!res.ok) throw new Error(`${route.split('?')[0]} answered ${res.status} ${text.slice(0, 200)}`);
    return text ? (JSON.parse(text) as unknown) : {};
  }

  async log(step: number, metrics: Readonly<Record<string, number>>): Promise<void> {
    const timestamp = Date.now();
    const rows = Object.entries(metrics).map(([key, value]) => ({ key, value, timestamp, step }));
    for (let i = 0; i < rows.length; i += BATCH_METRICS)
      await this.call('runs/log-batch', { run_id: this.runId, metrics: rows.slice(i, i + BATCH_METRICS) });
  }

  async close(status: 'finished' | 'failed'): Promise<void> {
    await this.call('runs/update', {
      run_id: this.runId,
      status: status === 'finished' ? 'FINISHED' : 'FAILED',
      end_time: Date.now(),
    });
  }
}
