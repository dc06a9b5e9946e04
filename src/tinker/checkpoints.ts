/**
 * A training run's checkpoints on the service, through its REST routes (answered at once, no
 * future): list them, set or clear their expiry, delete one, and get the signed URL its archive
 * downloads from. Checkpoints are named by their `tinker://<run>/<weights|sampler_weights>/<name>`
 * path; the routes take the run and `<weights|sampler_weights>/<name>` as path segments, as the SDK
 * sends them.
 */
import { TinkerError } from './errors.js';
import { describeBody, parseJsonBody, type SendOptions, type TinkerTransport } from './http.js';
import { json } from './requests.js';
import { ArchiveUrlSchema, type Checkpoint, CheckpointsListSchema, parseWire } from './schemas.js';

export type CheckpointKind = 'weights' | 'sampler_weights';

export interface TinkerPath {
  readonly path: string;
  /** the training run (model) id, e.g. `sess_...:train:0` */
  readonly runId: string;
  readonly kind: CheckpointKind;
  readonly name: string;
  /** `<kind>/<name>`: what the routes call the checkpoint */
  readonly checkpointId: string;
}

/** run ids and names the routes can carry as path segments unescaped */
const RUN_ID = /^[A-Za-z0-9][A-Za-z0-9:._-]*$/;
const NAME = /^[A-Za-z0-9_-]{1,255}$/;

/** `tinker://<run>/<weights|sampler_weights>/<name>` in parts; anything else is a usage error */
export function parseTinkerPath(path: string): TinkerPath {
  const m = /^tinker:\/\/([^/]+)\/(weights|sampler_weights)\/([^/]+)$/.exec(path);
  if (!m || !RUN_ID.test(m[1]!) || !NAME.test(m[3]!))
    throw new TinkerError(
      'usage',
      `'${path}' is not a Tinker checkpoint path; it looks like tinker://RUN_ID/sampler_weights/NAME (or /weights/NAME)`,
    );
  const kind = m[2] as CheckpointKind;
  return { path, runId: m[1]!, kind, name: m[3]!, checkpointId: `${kind}/${m[3]!}` };
}

/** a training run id as given, or taken from `tinker://<run>` / any checkpoint path of it */
export function parseRunId(value: string): string {
  const run = value.startsWith('tinker://') ? value.slice('tinker://'.length).split('/')[0]! : value;
  if (!RUN_ID.test(run))
    throw new TinkerError(
      'usage',
      `'${value}' names no training run; give tinker://RUN_ID or a checkpoint path under it`,
    );
  return run;
}

const route = (p: TinkerPath) => `training_runs/${p.runId}/checkpoints/${p.checkpointId}`;

/** every checkpoint of a training run, as the service lists them */
export async function listCheckpoints(
  transport: TinkerTransport,
  runId: string,
  opts: SendOptions = {},
): Promise<Checkpoint[]> {
  const r = `training_runs/${parseRunId(runId)}/checkpoints`;
  const answer = await transport.send('GET', r, undefined, { what: 'list checkpoints', ...opts });
  return parseWire(CheckpointsListSchema, parseJsonBody(answer, 'list checkpoints'), 'list checkpoints')
    .checkpoints;
}

/** the checkpoint expires `ttlSeconds` from now; `null` removes its expiry */
export async function setCheckpointTtl(
  transport: TinkerTransport,
  path: string,
  ttlSeconds: number | null,
  opts: SendOptions = {},
): Promise<void> {
  if (ttlSeconds !== null && (!Number.isInteger(ttlSeconds) || ttlSeconds < 1))
    throw new TinkerError('usage', `a checkpoint's TTL is a whole number of seconds >= 1, got ${ttlSeconds}`);
  const p = parseTinkerPath(path);
  const r = `${route(p)}/ttl`;
  await transport.send('PUT', r, json(r, { ttl_seconds: ttlSeconds }), {
    what: `set the TTL of ${path}`,
    ...opts,
  });
}

export async function deleteCheckpoint(
  transport: TinkerTransport,
  path: string,
  opts: SendOptions = {},
): Promise<void> {
  await transport.send('DELETE', route(parseTinkerPath(path)), undefined, {
    what: `delete ${path}`,
    ...opts,
  });
}

export interface ArchiveUrl {
  readonly url: string;
  /** when the signed URL stops working */
  readonly expires: Date;
  /** the archive itself, when the route answered with it instead of a URL (older services) */
  readonly bytes?: Uint8Array;
}

/** a signed URL gives this long when its answer does not say (the SDK's assumption) */
const DEFAULT_URL_LIFE_MS = 15 * 60_000;

/**
 * The signed URL of a checkpoint's archive: the route answers 302 with it in Location (not
 * followed: the URL is the answer), or 200 `{url, expires}`, or (as SDKs before the signed URL
 * saw it) 200 with the archive itself. A 503 (the archive is still being built) is retried like
 * any 5xx.
 */
export async function checkpointArchiveUrl(
  transport: TinkerTransport,
  path: string,
  opts: SendOptions = {},
): Promise<ArchiveUrl> {
  const what = `archive of ${path}`;
  const archiveRoute = `${route(parseTinkerPath(path))}/archive`;
  const answer = await transport.send('GET', archiveRoute, undefined, {
    what,
    headers: { Accept: 'application/gzip' },
    ...opts,
    redirect: 'manual',
  });
  const fallback = () => new Date(Date.now() + DEFAULT_URL_LIFE_MS);
  if (answer.status >= 300) {
    const location = answer.headers.get('location');
    if (!location)
      throw new TinkerError('bad_response', `${what}: HTTP ${answer.status} without a Location`, {
        status: answer.status,
        body: describeBody(answer),
      });
    const expires = Date.parse(answer.headers.get('expires') ?? '');
    // a relative Location is relative to the URL it answered, as a browser reads it (RFC 9110)
    return {
      url: new URL(location, transport.url(archiveRoute)).toString(),
      expires: Number.isFinite(expires) ? new Date(expires) : fallback(),
    };
  }
  if (!answer.contentType.includes('json'))
    return {
      url: transport.url(archiveRoute),
      expires: fallback(),
      bytes: answer.body,
    };
  const parsed = parseWire(ArchiveUrlSchema, parseJsonBody(answer, what), what);
  const expires = Date.parse(parsed.expires ?? '');
  return { url: parsed.url, expires: Number.isFinite(expires) ? new Date(expires) : fallback() };
}
