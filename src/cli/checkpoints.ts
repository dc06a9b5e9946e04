/**
 * `seal checkpoints`: a Tinker run's checkpoints on the service. `list` shows them (with their
 * expiry), `ttl` sets or clears the expiry, `delete` removes them, `download` fetches one's
 * archive through its signed URL, unpacks it (kept as it came, in `raw/`) and converts Tinker's
 * raw LoRA into a PEFT adapter folder (src/tinker/peft), checked (the config's fields, the
 * safetensors header) and ready for `vllm serve --enable-lora`; `convert` does that conversion
 * again on a raw folder already here.
 *
 * What to act on is a `seal train --learner tinker` run folder (the checkpoints its folder names),
 * one of its checkpoint folders (`checkpoints/round-NNNN`, whose `tinker.json` names the training
 * state and the sampler weights), or a `tinker://` path.
 */
import { existsSync, mkdirSync, readdirSync, rmSync, statSync, unlinkSync } from 'node:fs';
import { basename, join, relative, resolve } from 'node:path';
import type { Command } from 'commander';
import { z } from 'zod';
import { readTinkerCheckpoint, TINKER_CHECKPOINT_FILE } from '../learner/tinker/learner.js';
import {
  ADAPTER_CONFIG_FILE,
  ADAPTER_WEIGHTS_FILE,
  AdapterError,
  type AdapterSummary,
  checkLoraAdapter,
  unpackAdapter,
} from '../tinker/adapter.js';
import { parseRunId, parseTinkerPath } from '../tinker/checkpoints.js';
import { TinkerClient } from '../tinker/client.js';
import { TinkerError } from '../tinker/errors.js';
import { retryLine } from '../tinker/http.js';
import {
  type BaseModel,
  convertToPeft,
  type PeftAdapter,
  readBaseModelDir,
  readRawAdapter,
  writePeftAdapter,
} from '../tinker/peft/index.js';
import type { Checkpoint } from '../tinker/schemas.js';
import { RUN_FILES } from '../train/record.js';
import { UsageError, UserError } from '../util/errors.js';
import { Settings } from '../util/settings.js';
import { readTar } from '../util/tar.js';
import { addSettingOptions, parseUrlFlag } from './flags.js';

const SERVICE_SHAPE = {
  baseUrl: z.string().min(1).optional().meta({
    description: 'the Tinker service (default: $TINKER_BASE_URL, else the hosted one)',
    placeholder: 'url',
  }),
  retries: z
    .number()
    .int()
    .min(0)
    .max(100)
    .default(3)
    .describe('retries on 429, 5xx, timeouts and network errors'),
};

export const CHECKPOINTS_LIST_SETTINGS = new Settings(
  z
    .object({ ...SERVICE_SHAPE, json: z.literal(true).optional().describe('print the list as JSON') })
    .strict(),
  'flag',
);
export const CHECKPOINTS_TTL_SETTINGS = new Settings(
  z
    .object({
      ...SERVICE_SHAPE,
      seconds: z.number().int().min(1).optional().meta({
        description: 'the checkpoints expire this many seconds from now',
        placeholder: 'n',
      }),
      clear: z.literal(true).optional().describe('remove the expiry: kept (and billed) until deleted'),
    })
    .strict(),
  'flag',
);
export const CHECKPOINTS_DELETE_SETTINGS = new Settings(
  z
    .object({
      ...SERVICE_SHAPE,
      yes: z.literal(true).optional().describe('delete (without it: only say what would go)'),
    })
    .strict(),
  'flag',
);
const CONVERT_SHAPE = {
  baseModelDir: z.string().min(1).optional().meta({
    description:
      "the base model's folder (config.json and model.safetensors.index.json or model.safetensors): the adapter's names are mapped onto its weights and checked",
    placeholder: 'dir',
  }),
  baseModel: z.string().min(1).optional().meta({
    description:
      "the base model's Hugging Face name, when the target does not tell it (it picks the family's rules and fills base_model_name_or_path)",
    placeholder: 'name',
  }),
};

export const CHECKPOINTS_DOWNLOAD_SETTINGS = new Settings(
  z
    .object({
      ...SERVICE_SHAPE,
      out: z
        .string()
        .min(1)
        .meta({ description: 'the adapter folder to write (new or empty)', placeholder: 'dir' }),
      ...CONVERT_SHAPE,
      raw: z
        .literal(true)
        .optional()
        .describe('unpack the archive as it is into --out: no conversion to a PEFT adapter'),
    })
    .strict(),
  'flag',
);
export const CHECKPOINTS_CONVERT_SETTINGS = new Settings(
  z
    .object({
      out: z
        .string()
        .min(1)
        .meta({ description: 'the PEFT adapter folder to write (new or empty)', placeholder: 'dir' }),
      ...CONVERT_SHAPE,
    })
    .strict(),
  'flag',
);

/** where `download` keeps the archive's files, inside --out */
export const RAW_SUBDIR = 'raw';

const TARGET_HELP =
  'a seal train --learner tinker run folder, one of its checkpoints/round-NNNN folders, or a tinker:// path';

/** what a target names: checkpoint paths, the training runs they belong to, the base model if known */
export interface Target {
  readonly paths: readonly string[];
  readonly runs: readonly string[];
  readonly baseModel?: string;
  /** the sampler weights to download (the last round's, for a run folder) */
  readonly sampler?: string;
}

function checkpointFolders(runDir: string): string[] {
  const root = join(runDir, RUN_FILES.checkpoints);
  if (!existsSync(root)) return [];
  return readdirSync(root)
    .filter((n) => existsSync(join(root, n, TINKER_CHECKPOINT_FILE)))
    .sort()
    .map((n) => join(root, n));
}

function readRecord(dir: string) {
  try {
    return readTinkerCheckpoint(dir);
  } catch (e) {
    throw new UsageError(
      `${(e as Error).message}; give a checkpoint folder of a seal train --learner tinker run`,
    );
  }
}

/** a run folder, a checkpoint folder or a tinker:// path, as the checkpoints it names */
export function resolveTarget(value: string): Target {
  if (value.startsWith('tinker://')) {
    if (value.slice('tinker://'.length).includes('/')) {
      const p = parseTinkerPath(value);
      return {
        paths: [p.path],
        runs: [p.runId],
        ...(p.kind === 'sampler_weights' ? { sampler: p.path } : {}),
      };
    }
    return { paths: [], runs: [parseRunId(value)] };
  }
  if (!existsSync(value) || !statSync(value).isDirectory())
    throw new UsageError(`${value} is not a folder or a tinker:// path; give ${TARGET_HELP}.`);
  const folders = existsSync(join(value, TINKER_CHECKPOINT_FILE)) ? [value] : checkpointFolders(value);
  if (folders.length === 0)
    throw new UsageError(
      `${value} holds no Tinker checkpoint (no ${TINKER_CHECKPOINT_FILE} in it or under ${RUN_FILES.checkpoints}/); give ${TARGET_HELP}.`,
    );
  const records = folders.map(readRecord);
  const last = records.at(-1)!;
  return {
    paths: records.flatMap((r) => [r.state, r.sampler]),
    runs: [...new Set(records.map((r) => parseRunId(r.state)))],
    baseModel: last.baseModel,
    sampler: last.sampler,
  };
}

async function connect(flags: { baseUrl?: string | undefined; retries: number }): Promise<TinkerClient> {
  if (flags.baseUrl) parseUrlFlag('--base-url', flags.baseUrl, 'http://127.0.0.1:8000');
  return TinkerClient.connect({
    ...(flags.baseUrl ? { baseUrl: flags.baseUrl } : {}),
    retry: { maxRetries: flags.retries },
    onRetry: (e) => console.error(`tinker: ${retryLine(e)}`),
  });
}

async function withClient<T>(
  flags: { baseUrl?: string | undefined; retries: number },
  work: (client: TinkerClient) => Promise<T>,
): Promise<T> {
  const client = await connect(flags);
  try {
    return await work(client);
  } finally {
    client.close();
  }
}

/** what the service does not have is the user's to fix: a wrong, deleted or expired path or run */
async function notFoundIsUsage<T>(path: string, work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (e) {
    if (!(e instanceof TinkerError && e.status === 404)) throw e;
    if (!path.slice('tinker://'.length).includes('/'))
      throw new UsageError(
        `the service has no training run ${parseRunId(path)} (a wrong id, or a run of another account or service: check TINKER_API_KEY and --base-url).`,
      );
    throw new UsageError(
      `${path} is not on the service (a wrong path, or deleted or expired); seal checkpoints list tinker://${parseTinkerPath(path).runId} shows what is.`,
    );
  }
}

const needsCheckpoint = (value: string) =>
  new UsageError(
    `${value} names a training run, not a checkpoint; give tinker://RUN_ID/sampler_weights/NAME (seal checkpoints list ${value} shows them) or a checkpoint folder`,
  );

function sizeText(bytes: number | null | undefined): string {
  if (bytes === null || bytes === undefined) return '-';
  return bytes >= 1e9 ? `${(bytes / 1e9).toFixed(2)} GB` : `${(bytes / 1e6).toFixed(1)} MB`;
}

/** the list as a table: one row per checkpoint, the ones the target names marked */
export function checkpointTable(checkpoints: readonly Checkpoint[], named: ReadonlySet<string>): string {
  const rows = [
    ['path', 'type', 'saved', 'size', 'expires'],
    ...checkpoints.map((c) => [
      `${named.has(c.tinker_path) ? '* ' : '  '}${c.tinker_path}`,
      c.checkpoint_type,
      c.time,
      sizeText(c.size_bytes),
      c.expires_at ?? 'never',
    ]),
  ];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows
    .map((r) =>
      r
        .map((cell, i) => cell.padEnd(widths[i]!))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/** the values vLLM's `--max-lora-rank` takes (its LoRAConfig's MaxLoRARanks); none is above 512 */
export const VLLM_LORA_RANKS = [1, 8, 16, 32, 64, 128, 256, 320, 512] as const;

/** the smallest `--max-lora-rank` vLLM takes that holds the rank; undefined above 512, which vLLM does not serve */
export function maxLoraRank(rank: number): number | undefined {
  return VLLM_LORA_RANKS.find((r) => r >= rank);
}

/** how to serve the folder, for the closing lines */
export function serveHint(summary: AdapterSummary, name: string, baseModel: string | undefined): string {
  const base = summary.baseModel ?? baseModel ?? 'BASE_MODEL';
  const limit = maxLoraRank(summary.maxRank);
  return [
    limit === undefined
      ? `(not vLLM: it serves LoRA ranks up to ${VLLM_LORA_RANKS.at(-1)}, and this adapter's largest is ${summary.maxRank})`
      : `vllm serve ${base} --enable-lora --max-lora-rank ${limit} --lora-modules ${name}=${resolve(summary.dir)}`,
    `python -m sglang.launch_server --model-path ${base} --lora-paths ${name}=${resolve(summary.dir)}`,
    `seal eval --suite bfcl --split test --base-url http://127.0.0.1:8000/v1 --model ${name} --format hermes --out runs/eval-${name}`,
  ].join('\n');
}

async function download(
  target: Target,
  value: string,
  out: string,
  flags: ConvertFlags & { baseUrl?: string | undefined; retries: number; raw?: true | undefined },
) {
  const path = target.sampler ?? target.paths[0];
  if (!path) throw needsCheckpoint(value);
  checkNewFolder(out);
  if (flags.raw && (flags.baseModelDir || flags.baseModel))
    throw new UsageError(
      '--raw keeps the archive as it is; --base-model-dir and --base-model are for the conversion it skips.',
    );
  // a base model folder that cannot be read is found before anything is downloaded
  const baseModel = flags.baseModelDir ? readBaseModelDir(flags.baseModelDir) : undefined;
  const archive = await withClient(flags, (client) =>
    notFoundIsUsage(path, client.checkpointArchiveUrl(path)),
  );
  // the whole archive is held in memory: an adapter of an 8B model at rank 32 is some hundreds of MB
  let bytes: Uint8Array;
  if (archive.bytes) bytes = archive.bytes;
  else {
    console.error(
      `downloading the archive of ${path} (its URL is good until ${archive.expires.toISOString()})`,
    );
    try {
      // a signed URL carries its own authorisation: the API key is not sent to the storage host;
      // its redirects are followed (relative ones from the URL that gave them), 20 at most
      const res = await fetch(archive.url);
      if (!res.ok)
        throw new TinkerError('http', `the archive download answered HTTP ${res.status}`, {
          status: res.status,
        });
      if (/\btext\/html\b/i.test(res.headers.get('content-type') ?? ''))
        throw new TinkerError(
          'bad_response',
          `the archive download answered an HTML page, not an archive (${res.url}): something between here and the storage host (a proxy, a login page) answered instead`,
        );
      bytes = new Uint8Array(await res.arrayBuffer());
    } catch (e) {
      if (e instanceof TinkerError) throw e;
      const cause = (e as { cause?: { message?: string } }).cause?.message;
      // a redirect loop is the storage host's answer, not a network that failed
      throw new TinkerError(
        cause && /redirect/i.test(cause) ? 'bad_response' : 'unreachable',
        `the archive download failed (${(e as Error).message}${cause ? `: ${cause}` : ''})`,
      );
    }
  }
  let files: ReturnType<typeof readTar>;
  try {
    files = readTar(bytes);
  } catch (e) {
    throw new TinkerError(
      'bad_response',
      `the archive of ${path} cannot be unpacked: ${(e as Error).message}`,
    );
  }
  // what is not one usable adapter leaves --out as it was found: new, or empty
  const made = !existsSync(out);
  mkdirSync(out, { recursive: true });
  const clear = () => {
    if (made) rmSync(out, { recursive: true, force: true });
    else for (const entry of readdirSync(out)) rmSync(join(out, entry), { recursive: true, force: true });
  };
  // the checkpoint's own name (letters, digits, '_' and '-') serves as the LoRA's model name
  const name = parseTinkerPath(path).name;
  const fetched = `${bytes.length} bytes downloaded, ${files.length} file(s)`;
  if (flags.raw) {
    let dir: string;
    let summary: AdapterSummary;
    try {
      dir = unpackAdapter(files, out);
      summary = checkLoraAdapter(dir);
    } catch (e) {
      clear();
      throw e;
    }
    console.log(report(summary, { fetched, name, targetBase: target.baseModel }));
    if (relative(resolve(out), resolve(dir)) !== '')
      console.error(`(the archive unpacked into ${relative(out, dir)}/ inside --out)`);
    return;
  }
  let rawDir: string;
  try {
    rawDir = unpackAdapter(files, join(out, RAW_SUBDIR));
  } catch (e) {
    clear();
    throw e;
  }
  // from here on the archive's files stay, whatever the conversion makes of them
  const baseModelName = flags.baseModel ?? target.baseModel;
  const { summary, adapter } = convertInto(rawDir, out, { baseModel, baseModelName });
  console.log(
    report(summary, {
      fetched,
      name,
      targetBase: baseModelName,
      adapter,
      rawDir,
      baseModelDir: flags.baseModelDir,
    }),
  );
}

interface ConvertFlags {
  readonly baseModelDir?: string | undefined;
  readonly baseModel?: string | undefined;
}

function checkNewFolder(out: string): void {
  if (existsSync(out) && (!statSync(out).isDirectory() || readdirSync(out).length > 0))
    throw new UsageError(
      `--out ${out} exists and is not an empty folder; name a new folder for the adapter.`,
    );
}

/**
 * The raw adapter in `rawDir` converted into a PEFT adapter written to `out` and checked. A
 * failure leaves no half-written adapter in `out` and never touches `rawDir`: its message says
 * where the raw files are and how to convert them again.
 */
function convertInto(
  rawDir: string,
  out: string,
  opts: { baseModel?: BaseModel | undefined; baseModelName?: string | undefined },
): { summary: AdapterSummary; adapter: PeftAdapter } {
  try {
    const raw = readRawAdapter(rawDir);
    const adapter = convertToPeft({
      tensors: raw.tensors,
      config: raw.config,
      ...(opts.baseModel ? { baseModel: opts.baseModel } : {}),
      ...(opts.baseModelName ? { baseModelName: opts.baseModelName } : {}),
    });
    writePeftAdapter(out, adapter);
    return { summary: checkLoraAdapter(out), adapter };
  } catch (e) {
    for (const f of [ADAPTER_CONFIG_FILE, ADAPTER_WEIGHTS_FILE])
      if (existsSync(join(out, f))) unlinkSync(join(out, f));
    const kept = `; the raw adapter is kept in ${rawDir} (seal checkpoints convert ${rawDir} --out NEW_DIR converts it again)`;
    if (e instanceof AdapterError) throw new AdapterError(`${e.message}${kept}`);
    if (e instanceof UserError) throw new UserError(`${e.message.replace(/\.$/, '')}${kept}.`);
    throw e;
  }
}

/** what the folder holds and how to serve it, for the user */
function report(
  summary: AdapterSummary,
  how: {
    fetched?: string;
    name: string;
    targetBase: string | undefined;
    adapter?: PeftAdapter;
    rawDir?: string;
    baseModelDir?: string | undefined;
  },
): string {
  const a = how.adapter;
  return [
    `adapter: ${resolve(summary.dir)} (${[a ? 'PEFT, converted from the raw archive' : undefined, how.fetched].filter(Boolean).join('; ')})`,
    ...(how.rawDir ? [`  raw archive files kept in: ${resolve(how.rawDir)}`] : []),
    ...(a
      ? [
          a.checked
            ? `  converted by the ${a.family.label} rules; names checked against the weights of ${how.baseModelDir}`
            : `  converted by the ${a.family.label} rules alone; names NOT checked against the model (give --base-model-dir to check them)`,
          ...a.notes.map((n) => `  ${n}`),
        ]
      : []),
    `  base model: ${summary.baseModel ?? `${how.targetBase ?? 'not named'} (not in adapter_config.json)`}`,
    `  LoRA rank ${summary.rank}, alpha ${summary.alpha}; ${summary.pairs} adapted module(s) (${summary.modules.join(', ')}); ${summary.dtypes.join(', ')}`,
    ...summary.warnings.map((w) => `  warning: ${w}`),
    'serve it and score it:',
    serveHint(summary, how.name, how.targetBase)
      .split('\n')
      .map((l) => `  ${l}`)
      .join('\n'),
  ].join('\n');
}

/** `seal checkpoints convert`: a raw adapter folder already here, converted */
function convert(rawDir: string, flags: ConvertFlags & { out: string }): void {
  if (!existsSync(join(rawDir, ADAPTER_CONFIG_FILE)))
    throw new UsageError(
      `${rawDir} holds no ${ADAPTER_CONFIG_FILE}; give the raw/ folder a download kept (or one --raw unpacked).`,
    );
  checkNewFolder(flags.out);
  const baseModel = flags.baseModelDir ? readBaseModelDir(flags.baseModelDir) : undefined;
  const made = !existsSync(flags.out);
  mkdirSync(flags.out, { recursive: true });
  let result: ReturnType<typeof convertInto>;
  try {
    result = convertInto(rawDir, flags.out, { baseModel, baseModelName: flags.baseModel });
  } catch (e) {
    if (made) rmSync(flags.out, { recursive: true, force: true });
    throw e;
  }
  // the folder's name serves as the LoRA's model name, as a checkpoint's does for download
  const name = basename(resolve(flags.out)).replace(/[^A-Za-z0-9_-]/g, '-');
  console.log(
    report(result.summary, {
      name,
      targetBase: flags.baseModel,
      adapter: result.adapter,
      baseModelDir: flags.baseModelDir,
    }),
  );
}

/** `seal checkpoints list|ttl|delete|download|convert` */
export function registerCheckpoints(program: Command): void {
  const cmd = program
    .command('checkpoints')
    .description(
      "A Tinker run's checkpoints on the service: list, set or clear their expiry, delete, download as a LoRA adapter",
    );

  const list = cmd
    .command('list')
    .argument('<target>', TARGET_HELP)
    .description(
      'List the checkpoints of the training run(s) the target belongs to, with their expiry (* marks those it names)',
    );
  addSettingOptions(list, CHECKPOINTS_LIST_SETTINGS);
  list.action(async (value: string, raw: Record<string, unknown>) => {
    const flags = CHECKPOINTS_LIST_SETTINGS.ofFlags(raw);
    const target = resolveTarget(value);
    const all = await withClient(flags, async (client) => {
      const found: Checkpoint[] = [];
      for (const run of target.runs)
        found.push(...(await notFoundIsUsage(`tinker://${run}`, client.listCheckpoints(run))));
      return found;
    });
    if (flags.json) console.log(JSON.stringify(all, null, 2));
    else if (all.length === 0) console.log(`no checkpoints on the service for ${target.runs.join(', ')}`);
    else console.log(checkpointTable(all, new Set(target.paths)));
  });

  const ttl = cmd
    .command('ttl')
    .argument('<target>', TARGET_HELP)
    .description('Set (--seconds N) or clear (--clear) the expiry of the checkpoints the target names');
  addSettingOptions(ttl, CHECKPOINTS_TTL_SETTINGS);
  ttl.action(async (value: string, raw: Record<string, unknown>) => {
    const flags = CHECKPOINTS_TTL_SETTINGS.ofFlags(raw);
    if ((flags.seconds === undefined) === (flags.clear === undefined))
      throw new UsageError('give one of --seconds N (expire N seconds from now) or --clear (never expire).');
    const target = resolveTarget(value);
    if (target.paths.length === 0) throw needsCheckpoint(value);
    const seconds = flags.seconds ?? null;
    await withClient(flags, async (client) => {
      for (const path of target.paths) {
        await notFoundIsUsage(path, client.setCheckpointTtl(path, seconds));
        console.log(`${path}: ${seconds === null ? 'never expires' : `expires in ${seconds} s`}`);
      }
    });
  });

  const del = cmd
    .command('delete')
    .argument('<target>', TARGET_HELP)
    .description('Delete the checkpoints the target names from the service (only with --yes)');
  addSettingOptions(del, CHECKPOINTS_DELETE_SETTINGS);
  del.action(async (value: string, raw: Record<string, unknown>) => {
    const flags = CHECKPOINTS_DELETE_SETTINGS.ofFlags(raw);
    const target = resolveTarget(value);
    if (target.paths.length === 0) throw needsCheckpoint(value);
    if (!flags.yes)
      throw new UsageError(
        `this would delete ${target.paths.join(', ')} from the service for good; add --yes to delete.`,
      );
    await withClient(flags, async (client) => {
      for (const path of target.paths) {
        await notFoundIsUsage(path, client.deleteCheckpoint(path));
        console.log(`deleted ${path}`);
      }
    });
  });

  const dl = cmd
    .command('download')
    .argument('<target>', `${TARGET_HELP} (a folder: its last sampler weights)`)
    .description(
      "Download a checkpoint's archive and unpack it as a LoRA adapter folder (checked) for vllm --enable-lora",
    );
  addSettingOptions(dl, CHECKPOINTS_DOWNLOAD_SETTINGS);
  dl.action(async (value: string, raw: Record<string, unknown>) => {
    const flags = CHECKPOINTS_DOWNLOAD_SETTINGS.ofFlags(raw);
    await download(resolveTarget(value), value, flags.out, flags);
  });

  const conv = cmd
    .command('convert')
    .argument('<raw-dir>', 'a raw Tinker adapter folder (the raw/ a download keeps, or what --raw unpacked)')
    .description(
      'Convert a raw Tinker LoRA folder into a PEFT adapter folder (vLLM --lora-modules, SGLang --lora-paths)',
    );
  addSettingOptions(conv, CHECKPOINTS_CONVERT_SETTINGS);
  conv.action((rawDir: string, raw: Record<string, unknown>) => {
    convert(rawDir, CHECKPOINTS_CONVERT_SETTINGS.ofFlags(raw));
  });
}
