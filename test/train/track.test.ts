/**
 * `seal train --track wandb mlflow` through real processes, against stand-ins on 127.0.0.1 that
 * speak the real protocols and record what they are sent: an MLflow tracking server (its REST
 * API) and a W&B server (the GraphQL and file-stream routes the official JS SDK calls; the SDK's
 * offline mode keeps nothing, so there is nothing local to read). Each round's numbers reach both
 * at the round as the step; a tracker that fails (MLflow answering 500, W&B refusing the run, which
 * ends the SDK's own process) is warned about once, and the run ends as without it; a tracker
 * without its server address is refused before anything is written.
 */
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDist, seal } from '../support/cli.js';
import { tinyTrainFlags } from '../support/tiny-run.js';

interface Seen {
  readonly method: string;
  readonly url: string;
  readonly auth: string | undefined;
  readonly body: Record<string, unknown>;
}

/** a stand-in: every request recorded, each answered by `answer` (status and JSON; null: the connection cut) */
async function standIn(
  answer: (s: Seen) => readonly [number, unknown] | null,
): Promise<{ url: string; seen: Seen[]; server: Server }> {
  const seen: Seen[] = [];
  const read = (req: IncomingMessage) =>
    new Promise<string>((r) => {
      let b = '';
      req.on('data', (d) => {
        b += d;
      });
      req.on('end', () => r(b));
    });
  const server = createServer(async (req, res) => {
    const text = await read(req);
    const s: Seen = {
      method: req.method ?? '',
      url: req.url ?? '',
      auth: req.headers.authorization,
      body: text ? (JSON.parse(text) as Record<string, unknown>) : {},
    };
    seen.push(s);
    const answered = answer(s);
    if (!answered) {
      req.socket.destroy();
      return;
    }
    const [status, body] = answered;
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen, server };
}

/** MLflow's answers to the routes seal calls */
function mlflow(s: Seen): readonly [number, unknown] {
  if (s.url.startsWith('/api/2.0/mlflow/experiments/get-by-name'))
    return [404, { error_code: 'RESOURCE_DOES_NOT_EXIST', message: 'no such experiment' }];
  if (s.url === '/api/2.0/mlflow/experiments/create') return [200, { experiment_id: '7' }];
  if (s.url === '/api/2.0/mlflow/runs/create')
    return [200, { run: { info: { run_id: 'r-1', experiment_id: '7' } } }];
  return [200, {}];
}

/** W&B's answers to what @wandb/sdk sends: GraphQL Viewer and UpsertBucket, the file stream */
function wandb(refuseRun: boolean) {
  return (s: Seen): readonly [number, unknown] => {
    const query = String(s.body.query ?? '');
    if (s.url === '/graphql' && query.includes('Viewer'))
      return [200, { data: { viewer: { id: 'u', entity: 'me', flags: '', teams: { edges: [] } } } }];
    if (s.url === '/graphql' && query.includes('UpsertBucket')) {
      if (refuseRun) return [403, { errors: [{ message: 'permission denied' }] }];
      const v = s.body.variables as Record<string, string>;
      return [
        200,
        {
          data: {
            upsertBucket: {
              bucket: {
                id: 'b',
                name: v.name,
                displayName: v.displayName,
                project: { id: 'p', name: v.project, entity: { id: 'e', name: 'me' } },
              },
              inserted: true,
            },
          },
        },
      ];
    }
    return [200, {}];
  };
}

const root = mkdtempSync(join(tmpdir(), 'seal-track-'));
const servers: Server[] = [];
const FLAGS = tinyTrainFlags({ kernels: 'wasm' });

describe('seal train --track', { timeout: 900_000 }, () => {
  beforeAll(buildDist, 600_000);
  afterAll(() => {
    for (const s of servers) s.close();
  });

  it('sends each round to MLflow and W&B, at the round as the step', async () => {
    // the first batch of numbers gets no answer (its connection cut): it is sent again
    let cut = false;
    const ml = await standIn((s) => {
      if (!s.body.metrics || cut) return mlflow(s);
      cut = true;
      return null;
    });
    const wb = await standIn(wandb(false));
    servers.push(ml.server, wb.server);
    const out = join(root, 'tracked', 'run');
    const env = {
      MLFLOW_TRACKING_URI: ml.url,
      MLFLOW_EXPERIMENT_NAME: 'seal-test',
      MLFLOW_TRACKING_TOKEN: 'tok',
      WANDB_BASE_URL: wb.url,
      WANDB_API_KEY: 'k'.repeat(40),
      WANDB_PROJECT: 'seal-test',
      WANDB_MODE: '',
    };
    const r = await seal(['train', '--out', out, ...FLAGS, '--track', 'wandb', 'mlflow'], env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).not.toContain('warning');

    // MLflow: the experiment made, one run with the config as params, each round at its step, ended
    const routes = ml.seen.map((s) => s.url.replace(/\?.*/, ''));
    expect(routes[0]).toBe('/api/2.0/mlflow/experiments/get-by-name');
    expect(ml.seen[0]!.url).toContain('experiment_name=seal-test');
    expect(ml.seen.every((s) => s.auth === 'Bearer tok')).toBe(true);
    expect(ml.seen.find((s) => s.url.endsWith('/runs/create'))!.body).toMatchObject({
      experiment_id: '7',
      run_name: 'run',
    });
    const batches = ml.seen.filter((s) => s.url.endsWith('/runs/log-batch')).map((s) => s.body);
    expect(batches.every((b) => b.run_id === 'r-1')).toBe(true);
    const sent = batches.filter((b) => b.metrics);
    expect(sent[1]).toEqual(sent[0]);
    const params = batches.flatMap((b) => (b.params as { key: string; value: string }[] | undefined) ?? []);
    expect(params).toContainEqual({ key: 'rounds', value: '2' });
    expect(params).toContainEqual({ key: 'track', value: '["wandb","mlflow"]' });
    const metrics = batches.flatMap(
      (b) => (b.metrics as { key: string; value: number; step: number }[]) ?? [],
    );
    const rounds = readFileSync(join(out, 'rounds.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    for (const rd of rounds) {
      expect(metrics).toContainEqual(
        expect.objectContaining({ key: 'reward/mean', value: rd.rollouts.meanReward, step: rd.round }),
      );
      expect(metrics).toContainEqual(
        expect.objectContaining({ key: 'learner/kl', value: rd.learner.kl, step: rd.round }),
      );
    }
    expect(metrics).toContainEqual(
      expect.objectContaining({
        key: 'validation/average',
        value: rounds[1].validation.summary.average,
        step: 2,
      }),
    );
    expect(ml.seen.at(-1)!.url).toBe('/api/2.0/mlflow/runs/update');
    expect(ml.seen.at(-1)!.body).toMatchObject({ run_id: 'r-1', status: 'FINISHED' });
    expect(JSON.parse(readFileSync(join(out, 'tracking.json'), 'utf8')).mlflow).toMatchObject({
      runId: 'r-1',
    });

    // W&B: the run created in the project with the config, history rows per round, the stream completed
    const upsert = wb.seen.find((s) => String(s.body.query).includes('UpsertBucket'))!;
    expect(upsert.body.variables).toMatchObject({ project: 'seal-test', displayName: 'run' });
    expect(JSON.parse((upsert.body.variables as { config: string }).config)).toMatchObject({ rounds: 2 });
    const streams = wb.seen.filter((s) => s.url.endsWith('/file_stream')).map((s) => s.body);
    const history = streams.flatMap((b) =>
      (
        (b.files as Record<string, { content: string[] }> | undefined)?.['wandb-history.jsonl']?.content ?? []
      ).map((l) => JSON.parse(l) as Record<string, number>),
    );
    for (const rd of rounds)
      expect(history).toContainEqual(
        expect.objectContaining({ _step: rd.round, 'reward/mean': rd.rollouts.meanReward }),
      );
    expect(streams.at(-1)).toMatchObject({ complete: true, exitcode: 0 });

    // raised to 3 rounds: the same MLflow run goes on (tracking.json), W&B gets a run of its own
    const [mlBefore, wbBefore] = [ml.seen.length, wb.seen.length];
    const more = await seal(['train', '--resume', out, '--rounds', '3', '--quiet'], env);
    expect(more.code, more.stderr).toBe(0);
    expect(more.stderr).not.toContain('warning');
    const later = ml.seen.slice(mlBefore);
    expect(later.some((s) => s.url.endsWith('/runs/create'))).toBe(false);
    expect(later[0]).toMatchObject({
      url: '/api/2.0/mlflow/runs/update',
      body: { run_id: 'r-1', status: 'RUNNING' },
    });
    expect(later.flatMap((s) => (s.body.metrics as { key: string; step: number }[]) ?? [])).toContainEqual(
      expect.objectContaining({ key: 'reward/mean', step: 3 }),
    );
    expect(later.at(-1)!.body).toMatchObject({ run_id: 'r-1', status: 'FINISHED' });
    const upserts = wb.seen.slice(wbBefore).filter((s) => String(s.body.query).includes('UpsertBucket'));
    expect(upserts.map((u) => (u.body.variables as { displayName: string }).displayName)).toEqual([
      'run (resumed after round 2)',
    ]);
  });

  it('a tracker that fails is warned about once; the run ends with its whole record', async () => {
    // MLflow fails once the rounds come (every metrics batch), W&B refuses the run outright
    const ml = await standIn((s) => (s.body.metrics ? [500, { message: 'down' }] : mlflow(s)));
    const wb = await standIn(wandb(true));
    servers.push(ml.server, wb.server);
    const out = join(root, 'failing', 'run');
    const r = await seal(['train', '--out', out, ...FLAGS, '--track', 'mlflow', 'wandb'], {
      MLFLOW_TRACKING_URI: ml.url,
      WANDB_BASE_URL: wb.url,
      WANDB_API_KEY: 'k'.repeat(40),
      WANDB_MODE: '',
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr.match(/MLflow tracking stopped \(runs\/log-batch answered 500/g)).toHaveLength(1);
    // after the failure nothing more is sent to it: one metrics batch, and no runs/update
    expect(ml.seen.filter((s) => s.body.metrics)).toHaveLength(1);
    // the SDK ends its own process on the refusal: said with the SDK's reason, at once
    expect(
      r.stderr.match(
        /W&B tracking could not start \(the W&B SDK's process ended \(exit 1\): Error: Failed to upsert run\)/g,
      ),
    ).toHaveLength(1);
    expect(r.stderr.match(/warning/g)).toHaveLength(2);
    expect(readFileSync(join(out, 'rounds.jsonl'), 'utf8').trim().split('\n')).toHaveLength(2);
    expect(existsSync(join(out, 'finished.json'))).toBe(true);
  });

  it('a tracker without its server or key is refused before anything is written', async () => {
    const out = join(root, 'refused', 'run');
    const r = await seal(['train', '--out', out, ...FLAGS, '--track', 'mlflow', 'wandb'], {
      MLFLOW_TRACKING_URI: '',
      WANDB_API_KEY: '',
      WANDB_MODE: '',
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--track mlflow needs MLFLOW_TRACKING_URI');
    expect(r.stderr).toContain('--track wandb needs WANDB_API_KEY');
    expect(existsSync(out)).toBe(false);
  });
});
