/**
 * A training run's checkpoints through the service's REST routes, over real HTTP against the
 * Tinker-protocol test server: listed with their expiry, an expiry set and cleared, a checkpoint
 * deleted (and gone for sampling), the archive's signed URL in both answer forms (302 and JSON),
 * a 503 while the archive is built waited out; the archive unpacked and checked as a LoRA adapter
 * (the config's fields, the safetensors header against the file), and broken archives and adapters
 * refused with what is wrong.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import {
  AdapterError,
  checkLoraAdapter,
  readSafetensorsHeader,
  unpackAdapter,
} from '../../src/tinker/adapter.js';
import { parseRunId, parseTinkerPath } from '../../src/tinker/checkpoints.js';
import { TinkerClient } from '../../src/tinker/client.js';
import { TinkerError } from '../../src/tinker/errors.js';
import { readTar, TarError } from '../../src/util/tar.js';
import { safetensorsOf, TEST_ADAPTER_LAYERS, tarOf, testAdapterFiles } from '../support/adapter-files.js';
import {
  type Fault,
  fastOptions,
  startTinkerServer,
  type TinkerServerOptions,
  type TinkerTestServer,
} from '../support/tinker-server.js';

const BASE = 'Qwen/Qwen3-8B';
const dir = mkdtempSync(join(tmpdir(), 'seal-checkpoints-'));
const servers: TinkerTestServer[] = [];
const clients: TinkerClient[] = [];

async function serve(
  opts: TinkerServerOptions = {},
): Promise<{ server: TinkerTestServer; client: TinkerClient }> {
  const server = await startTinkerServer(opts);
  servers.push(server);
  const client = await TinkerClient.connect(fastOptions(server.url));
  clients.push(client);
  return { server, client };
}

/** a LoRA of rank 4 after one step, saved as training state (expiring) and as sampler weights */
async function trainedRun(client: TinkerClient) {
  const training = await client.createTrainingClient({ baseModel: BASE, loraRank: 4 });
  await training.optimStep({ learningRate: 2e-4 });
  const state = await training.saveWeights('round-0001', { ttlSeconds: 3600 });
  const sampler = await training.saveWeightsForSampler('round-0001');
  return { runId: training.modelId, state, sampler };
}

afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  for (const s of servers.splice(0)) await s.close();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('tinker:// checkpoint paths', () => {
  it('split into the run, the kind and the name the routes take', () => {
    expect(parseTinkerPath('tinker://sess_1:train:0/sampler_weights/round-0002')).toEqual({
      path: 'tinker://sess_1:train:0/sampler_weights/round-0002',
      runId: 'sess_1:train:0',
      kind: 'sampler_weights',
      name: 'round-0002',
      checkpointId: 'sampler_weights/round-0002',
    });
    expect(parseRunId('tinker://model_ab12/weights/x')).toBe('model_ab12');
    expect(parseRunId('model_ab12')).toBe('model_ab12');
    for (const bad of [
      'tinker://run/other/x',
      'tinker://run/weights',
      'runs/x',
      'tinker://run/weights/a/../b',
    ])
      expect(() => parseTinkerPath(bad)).toThrow(/not a Tinker checkpoint path/);
    expect(() => parseRunId('../etc')).toThrow(TinkerError);
  });
});

describe('the checkpoint routes', { timeout: 60_000 }, () => {
  it('list a run, set and clear an expiry, and delete a checkpoint', async () => {
    const { server, client } = await serve();
    const { runId, state, sampler } = await trainedRun(client);
    const listed = await client.listCheckpoints(`tinker://${runId}`);
    expect(listed.map((c) => [c.tinker_path, c.checkpoint_type, c.checkpoint_id])).toEqual([
      [state, 'training', 'weights/round-0001'],
      [sampler, 'sampler', 'sampler_weights/round-0001'],
    ]);
    expect(listed[0]!.expires_at).toBe(server.checkpoints.get(state)!.expiresAt);
    expect(Date.parse(listed[0]!.expires_at!) - Date.now()).toBeGreaterThan(3500_000);
    expect(listed[1]!.expires_at).toBeNull();
    expect(listed[1]!.size_bytes).toBeGreaterThan(0);

    await client.setCheckpointTtl(sampler, 600);
    expect(server.checkpoints.get(sampler)).toMatchObject({ ttlSeconds: 600 });
    const put = server.requests.find((r) => r.route.endsWith('/ttl'))!;
    expect(put).toMatchObject({
      method: 'PUT',
      route: `training_runs/${runId}/checkpoints/sampler_weights/round-0001/ttl`,
    });
    expect(put.idempotencyKey).toMatch(/^seal-retry-/);
    await client.setCheckpointTtl(state, null);
    expect(server.checkpoints.get(state)!.expiresAt).toBeUndefined();
    await expect(client.setCheckpointTtl(state, 0)).rejects.toMatchObject({ kind: 'usage' });

    await client.deleteCheckpoint(sampler);
    expect(server.checkpoints.has(sampler)).toBe(false);
    expect((await client.listCheckpoints(runId)).map((c) => c.tinker_path)).toEqual([state]);
    // what is deleted is gone: sampling from it and deleting it again are refused
    await expect(client.createSamplingClient({ modelPath: sampler })).rejects.toMatchObject({ status: 404 });
    await expect(client.deleteCheckpoint(sampler)).rejects.toMatchObject({ kind: 'http', status: 404 });
  });

  it('answers the signed URL of a 302 without following it, and the JSON form too', async () => {
    for (const [form, location] of [
      ['redirect', 'absolute'],
      ['redirect', 'relative'],
      ['json', 'absolute'],
    ] as const) {
      // a relative Location is read from the archive route's URL, where the server put it
      const { server, client } = await serve({ archive: { form, location } });
      const { sampler } = await trainedRun(client);
      const { url, expires } = await client.checkpointArchiveUrl(sampler);
      expect(url).toBe(server.signedUrls.at(-1));
      expect(expires.getTime() - Date.now()).toBeGreaterThan(10 * 60_000);
      // only the route was asked: the archive itself is the caller's to fetch
      expect(server.requests.filter((r) => r.route.startsWith('signed/'))).toEqual([]);
      const files = readTar(new Uint8Array(await (await fetch(url)).arrayBuffer()));
      expect(files.map((f) => f.path)).toEqual(['adapter_config.json', 'adapter_model.safetensors']);
    }
  });

  it('takes the archive itself when the route answers with it instead of a URL', async () => {
    const { server, client } = await serve({ archive: { form: 'bytes' } });
    const { sampler } = await trainedRun(client);
    const archive = await client.checkpointArchiveUrl(sampler);
    expect(server.signedUrls).toEqual([]);
    expect(readTar(archive.bytes!).map((f) => f.path)).toEqual([
      'adapter_config.json',
      'adapter_model.safetensors',
    ]);
  });

  it('waits out a 503 while the archive is being built', async () => {
    let building = 2;
    const { server, client } = await serve({
      fault: (c): Fault | undefined =>
        c.route.endsWith('/archive') && building-- > 0
          ? { status: 503, body: { detail: 'archive is being built' }, headers: { 'retry-after-ms': '5' } }
          : undefined,
    });
    const { sampler } = await trainedRun(client);
    const { url } = await client.checkpointArchiveUrl(sampler);
    expect(url).toMatch(/\/signed\//);
    expect(server.requests.filter((r) => r.route.endsWith('/archive'))).toHaveLength(3);
  });
});

describe('the archive as an adapter folder', { timeout: 60_000 }, () => {
  it('unpacks a gzipped archive into a PEFT LoRA folder whose header matches the file', async () => {
    const { client } = await serve({ archive: { gzip: true } });
    const { sampler } = await trainedRun(client);
    const bytes = new Uint8Array(
      await (await fetch((await client.checkpointArchiveUrl(sampler)).url)).arrayBuffer(),
    );
    expect([bytes[0], bytes[1]]).toEqual([0x1f, 0x8b]);
    const out = join(dir, 'gz');
    const folder = unpackAdapter(readTar(bytes), out);
    expect(folder).toBe(join(out, '.'));
    const summary = checkLoraAdapter(folder);
    expect(summary).toMatchObject({
      baseModel: BASE,
      rank: 4,
      alpha: 32,
      targetModules: ['q_proj', 'v_proj'],
      modules: ['q_proj', 'v_proj'],
      pairs: TEST_ADAPTER_LAYERS * 2,
      dtypes: ['F32'],
      warnings: [],
    });
    const a = summary.tensors.find(
      (t) => t.name === 'base_model.model.model.layers.1.self_attn.v_proj.lora_A.weight',
    )!;
    const b = summary.tensors.find(
      (t) => t.name === 'base_model.model.model.layers.1.self_attn.v_proj.lora_B.weight',
    )!;
    expect([a.shape, b.shape]).toEqual([
      [4, 8],
      [8, 4],
    ]);
    expect(readSafetensorsHeader(join(folder, 'adapter_model.safetensors')).metadata).toEqual({
      format: 'pt',
    });
  });

  it('finds the adapter in the one folder an archive puts it in', () => {
    const files = testAdapterFiles({ baseModel: BASE, rank: 2, step: 1, lrs: [1e-4] }).map((f) => ({
      ...f,
      path: `adapter/${f.path}`,
    }));
    const folder = unpackAdapter(readTar(tarOf(files)), join(dir, 'nested'));
    expect(folder).toBe(join(dir, 'nested', 'adapter'));
    expect(checkLoraAdapter(folder).rank).toBe(2);
  });

  it('reads what GNU tar writes: gzip, folders, long names in the GNU and pax forms', () => {
    const src = join(dir, 'tar-src');
    const deep = join(
      'adapter',
      'a-folder-name-long-enough'.repeat(3),
      'b-folder-name-long-enough'.repeat(2),
    );
    mkdirSync(join(src, deep), { recursive: true });
    const files = testAdapterFiles({ baseModel: BASE, rank: 2, step: 1, lrs: [1e-4] });
    for (const f of files) writeFileSync(join(src, deep, f.path), f.data);
    for (const format of ['gnu', 'pax']) {
      const archive = join(dir, `adapter-${format}.tar.gz`);
      execFileSync('tar', [`--format=${format}`, '-czf', archive, '-C', src, '.']);
      const read = readTar(new Uint8Array(readFileSync(archive)));
      expect(read.map((f) => f.path).sort(), format).toEqual(files.map((f) => `${deep}/${f.path}`).sort());
      const folder = unpackAdapter(read, join(dir, `from-${format}`));
      expect(folder).toBe(join(dir, `from-${format}`, deep));
      expect(checkLoraAdapter(folder).rank).toBe(2);
    }
    // a link is refused, not followed
    symlinkSync('/etc/hostname', join(src, 'link'));
    execFileSync('tar', ['-cf', join(dir, 'link.tar'), '-C', src, 'link']);
    expect(() => readTar(new Uint8Array(readFileSync(join(dir, 'link.tar'))))).toThrow(/not a regular file/);
  });

  it('refuses archives that are not tar files or that reach outside their folder', () => {
    expect(() => readTar(new TextEncoder().encode('<Error>AccessDenied</Error>'.padEnd(600)))).toThrow(
      TarError,
    );
    const escaping = tarOf([{ path: '../evil.json', data: Buffer.from('{}') }]);
    expect(() => readTar(escaping)).toThrow(/outside its folder/);
    const cut = tarOf([{ path: 'a.bin', data: Buffer.alloc(2000) }]).subarray(0, 1024);
    expect(() => readTar(cut)).toThrow(/cut short/);
    const plain = join(dir, 'plain.txt');
    writeFileSync(plain, 'hello');
    expect(() => readSafetensorsHeader(plain)).toThrow(/too short to be a safetensors file/);
    expect(() =>
      unpackAdapter([{ path: 'weights.bin', data: new Uint8Array(1) }], join(dir, 'none')),
    ).toThrow(/holds no adapter_config.json/);
  });

  /** an adapter folder from the test files with `edit` applied */
  function folderWith(name: string, edit: (files: { path: string; data: Buffer }[]) => void): string {
    const files = testAdapterFiles({ baseModel: BASE, rank: 4, step: 1, lrs: [1e-4] });
    edit(files);
    const d = join(dir, name);
    return unpackAdapter(files, d);
  }
  const setConfig = (
    files: { path: string; data: Buffer }[],
    change: (c: Record<string, unknown>) => void,
  ) => {
    const c = JSON.parse(files[0]!.data.toString('utf8')) as Record<string, unknown>;
    change(c);
    files[0]!.data = Buffer.from(JSON.stringify(c));
  };

  it('says what is wrong with an adapter vLLM could not load', () => {
    const cases: [string, (files: { path: string; data: Buffer }[]) => void, RegExp][] = [
      ['rank', (f) => setConfig(f, (c) => (c.r = 8)), /not of rank 8/],
      ['peft', (f) => setConfig(f, (c) => (c.peft_type = 'IA3')), /"peft_type" is "IA3"/],
      ['alpha', (f) => setConfig(f, (c) => delete c.lora_alpha), /"lora_alpha" must be a number/],
      ['targets', (f) => setConfig(f, (c) => (c.target_modules = [])), /"target_modules" must name/],
      [
        'header',
        (f) => (f[1]!.data = Buffer.concat([f[1]!.data.subarray(0, 8), Buffer.from('{not json')])),
        /not a safetensors file/,
      ],
      [
        'short',
        (f) => (f[1]!.data = f[1]!.data.subarray(0, f[1]!.data.length - 4)),
        /does not match its byte range|end at byte/,
      ],
      [
        'half',
        (f) =>
          (f[1]!.data = safetensorsOf([
            { name: 'base_model.model.x.q_proj.lora_A.weight', shape: [4, 2], values: Array(8).fill(0) },
          ])),
        /lora_A without lora_B/,
      ],
    ];
    for (const [name, edit, message] of cases) {
      const folder = folderWith(name, edit);
      expect(() => checkLoraAdapter(folder), name).toThrow(AdapterError);
      expect(() => checkLoraAdapter(folder), name).toThrow(message);
    }
  });

  it("warns, without refusing, of names that are not PEFT's and an unnamed base model", () => {
    const folder = folderWith('tinker-names', (f) => {
      setConfig(f, (c) => {
        delete c.base_model_name_or_path;
        delete c.peft_type;
      });
      f[1]!.data = safetensorsOf([
        { name: 'model.layers.0.attn.q_proj.lora_A.weight', shape: [4, 2], values: Array(8).fill(0.5) },
        { name: 'model.layers.0.attn.q_proj.lora_B.weight', shape: [2, 4], values: Array(8).fill(0) },
      ]);
    });
    const summary = checkLoraAdapter(folder);
    expect(summary.baseModel).toBeUndefined();
    expect(summary.warnings.join('\n')).toMatch(/peft_type/);
    expect(summary.warnings.join('\n')).toMatch(/names no base_model_name_or_path/);
    expect(summary.warnings.join('\n')).toMatch(/not PEFT's/);
  });
});
