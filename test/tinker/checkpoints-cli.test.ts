/**
 * `seal checkpoints` as a user runs it after `seal train --learner tinker`: the real binary in its
 * own process against the Tinker-protocol test server on loopback. The run's checkpoints are
 * listed with their expiry, an expiry is cleared and set, one is deleted (only with --yes), the
 * last round's sampler weights are downloaded through the archive's signed URL and unpacked as a
 * LoRA adapter folder whose config and safetensors header are read here on their own; and the
 * checkpoint is scored by `seal eval --base-url` through the service's OpenAI-compatible route.
 * Bad input ends in one sentence and exit 2, a broken archive in exit 1; never a stack trace.
 */
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { splitIds } from '../../src/cli/verify.js';
import { loadMiniSuite } from '../../src/envs/mini/index.js';
import { buildDist, seal } from '../support/cli.js';
import { QWEN3_DIR, qwen3Renderer } from '../support/render.js';
import { oracleModel } from '../support/tinker-oracle.js';
import { startTinkerServer, type TinkerTestServer } from '../support/tinker-server.js';
import { tinkerTrainArgs } from '../support/tiny-run.js';

const KEY = 'tml-checkpoints-key';
const ENV = { TINKER_API_KEY: KEY, TINKER_BASE_URL: '' };
const root = mkdtempSync(join(tmpdir(), 'seal-checkpoints-cli-'));
const run = join(root, 'run');
let server: TinkerTestServer;
let brokenArchive = false;
let last: { state: string; sampler: string; baseModel: string };

/** round 1's checkpoint of a kind, on the service (the run folder keeps only the last round's) */
const round1 = (kind: 'weights' | 'sampler_weights') =>
  [...server.checkpoints.keys()].find((p) => p.includes(`/${kind}/`) && p.includes('round-0001'))!;

const checkpoints = (...args: string[]) => seal(['checkpoints', ...args, '--base-url', server.url], ENV);

function expectOneSentence(r: { code: number; stderr: string }, code: number, message: RegExp): void {
  expect(r.code, r.stderr).toBe(code);
  expect(r.stderr).toMatch(message);
  expect(r.stderr).not.toMatch(/^\s+at /m);
}

/** a safetensors header read on its own: name -> dtype, shape, byte range; and the data's length */
function safetensorsHeader(path: string) {
  const bytes = readFileSync(path);
  const n = Number(bytes.readBigUInt64LE(0));
  const header = JSON.parse(bytes.subarray(8, 8 + n).toString('utf8')) as Record<
    string,
    { dtype: string; shape: number[]; data_offsets: [number, number] }
  >;
  delete header.__metadata__;
  return { header, data: bytes.subarray(8 + n) };
}

describe('seal checkpoints against a Tinker-protocol server', { timeout: 600_000 }, () => {
  beforeAll(async () => {
    await buildDist();
    server = await startTinkerServer({
      model: oracleModel(loadMiniSuite(), qwen3Renderer()),
      apiKey: KEY,
      archive: { gzip: true, files: (files) => (brokenArchive ? files.slice(0, 1) : files) },
    });
    const t = await seal(
      tinkerTrainArgs(run, QWEN3_DIR, {
        baseUrl: server.url,
        rounds: 2,
        tasksPerRound: 2,
        groupSize: 2,
        maxSteps: 2,
        loraRank: 4,
        checkpointTtl: 3600,
      }),
      ENV,
    );
    expect(t.code, t.stderr).toBe(0);
    last = JSON.parse(readFileSync(join(run, 'checkpoints', 'round-0002', 'tinker.json'), 'utf8'));
  }, 600_000);
  afterAll(async () => {
    await server?.close();
    rmSync(root, { recursive: true, force: true });
  });

  it("lists the run's checkpoints on the service, the folder's marked, with their expiry", async () => {
    const r = await checkpoints('list', run);
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^path\s+type\s+saved\s+size\s+expires$/);
    // round 1's checkpoints are on the service still (the folder keeps only the last round's)
    const paths = [...server.checkpoints.keys()];
    expect(round1('weights')).toBeDefined();
    expect(round1('sampler_weights')).toBeDefined();
    for (const p of paths) expect(r.stdout).toContain(p);
    expect(lines.find((l) => l.includes(last.sampler))).toMatch(/^\* /);
    expect(lines.find((l) => l.includes(round1('weights')))).toMatch(/^ {2}tinker:\/\/.*training/);
    const listed = JSON.parse(
      (await checkpoints('list', join(run, 'checkpoints', 'round-0002'), '--json')).stdout,
    );
    expect(listed.map((c: { tinker_path: string }) => c.tinker_path).sort()).toEqual(paths.sort());
  });

  it('clears and sets the expiry of the checkpoints a folder or a path names', async () => {
    const clear = await checkpoints('ttl', run, '--clear');
    expect(clear.code, clear.stderr).toBe(0);
    expect(clear.stdout).toContain(`${last.state}: never expires`);
    expect(server.checkpoints.get(last.state)!.expiresAt).toBeUndefined();
    expect(server.checkpoints.get(last.sampler)!.expiresAt).toBeUndefined();
    const first = round1('sampler_weights');
    const set = await checkpoints('ttl', first, '--seconds', '600');
    expect(set.code, set.stderr).toBe(0);
    expect(server.checkpoints.get(first)).toMatchObject({ ttlSeconds: 600 });
    // the list shows the new expiry and "never" for the cleared one
    const list = (await checkpoints('list', run)).stdout.split('\n');
    expect(list.find((l) => l.includes(first))).toContain(server.checkpoints.get(first)!.expiresAt!);
    expect(list.find((l) => l.includes(last.state))).toMatch(/never$/);
  });

  it('deletes only with --yes', async () => {
    const first = round1('weights');
    const asked = await checkpoints('delete', first);
    expectOneSentence(asked, 2, /would delete .*round-0001-\S+ from the service for good; add --yes/);
    expect(server.checkpoints.has(first)).toBe(true);
    const done = await checkpoints('delete', first, '--yes');
    expect(done.code, done.stderr).toBe(0);
    expect(done.stdout).toContain(`deleted ${first}`);
    expect(server.checkpoints.has(first)).toBe(false);
    expect((await checkpoints('list', run)).stdout).not.toContain(first);
    // what is gone is the user's to fix: one sentence saying where to look
    expectOneSentence(
      await checkpoints('delete', first, '--yes'),
      2,
      /is not on the service \(a wrong path, or deleted or expired\); seal checkpoints list tinker:\/\/\S+ shows what is/,
    );
  });

  it('downloads the last sampler weights as a LoRA adapter folder vLLM loads', async () => {
    const out = join(root, 'adapter');
    const r = await checkpoints('download', run, '--out', out);
    expect(r.code, r.stderr).toBe(0);
    expect(server.signedUrls).toHaveLength(1);
    const name = last.sampler.split('/').at(-1)!;
    expect(r.stdout).toContain(
      `vllm serve Qwen/Qwen3-8B --enable-lora --max-lora-rank 8 --lora-modules ${name}=${resolve(out)}`,
    );
    expect(r.stdout).toContain(`--base-url http://127.0.0.1:8000/v1 --model ${name} `);
    expect(r.stdout).toMatch(/LoRA rank 4, alpha 32; 4 adapted module\(s\) \(q_proj, v_proj\); F32/);
    // converted into --out, the archive's own files kept beside it in raw/
    expect(r.stdout).toContain(`raw archive files kept in: ${resolve(out, 'raw')}`);
    expect(r.stdout).toMatch(
      /converted by the Qwen3 \/ Llama \(standard names\) rules alone; names NOT checked/,
    );
    expect(readdirSync(join(out, 'raw')).sort()).toEqual([
      'adapter_config.json',
      'adapter_model.safetensors',
    ]);

    const config = JSON.parse(readFileSync(join(out, 'adapter_config.json'), 'utf8'));
    expect(config).toMatchObject({
      peft_type: 'LORA',
      task_type: 'CAUSAL_LM',
      base_model_name_or_path: 'Qwen/Qwen3-8B',
      r: 4,
      lora_alpha: 32,
      target_modules: ['q_proj', 'v_proj'],
    });
    const { header, data } = safetensorsHeader(join(out, 'adapter_model.safetensors'));
    const names = Object.keys(header).sort();
    expect(names).toHaveLength(8);
    let bytes = 0;
    for (const name of names) {
      const t = header[name]!;
      const m = /^base_model\.model\.model\.layers\.\d\.self_attn\.(q_proj|v_proj)\.lora_(A|B)\.weight$/.exec(
        name,
      );
      expect(m, name).not.toBeNull();
      expect(config.target_modules).toContain(m![1]);
      expect(t.dtype).toBe('F32');
      expect(t.shape).toEqual(m![2] === 'A' ? [config.r, 8] : [8, config.r]);
      expect(t.data_offsets[1] - t.data_offsets[0]).toBe(t.shape[0]! * t.shape[1]! * 4);
      bytes += t.data_offsets[1] - t.data_offsets[0];
    }
    expect(bytes).toBe(data.length);
    // the trained weights: B moved from zero with the steps taken
    const b = header['base_model.model.model.layers.0.self_attn.q_proj.lora_B.weight']!;
    const values = new Float32Array(
      data.buffer.slice(data.byteOffset + b.data_offsets[0], data.byteOffset + b.data_offsets[1]),
    );
    expect(values.some((v) => v !== 0)).toBe(true);

    // a second download does not write over the folder
    const again = await checkpoints('download', run, '--out', out);
    expectOneSentence(again, 2, /--out .* exists and is not an empty folder; name a new folder/);
  });

  it('refuses an archive that is not one LoRA adapter (exit 1)', async () => {
    brokenArchive = true;
    try {
      const out = join(root, 'broken');
      const r = await checkpoints('download', last.sampler, '--out', out);
      expectOneSentence(r, 1, /not a usable LoRA adapter: .*holds no adapter_model\.safetensors/);
    } finally {
      brokenArchive = false;
    }
  });

  it('says in one sentence what to give for a target it cannot use (exit 2)', async () => {
    const empty = join(root, 'empty');
    mkdirSync(empty);
    const notFolder = join(root, 'note.txt');
    writeFileSync(notFolder, 'x');
    const cases: [string[], RegExp][] = [
      [
        ['list', join(root, 'missing')],
        /is not a folder or a tinker:\/\/ path; give a seal train --learner tinker run folder/,
      ],
      [['list', notFolder], /is not a folder or a tinker:\/\/ path/],
      [['list', empty], /holds no Tinker checkpoint \(no tinker\.json in it or under checkpoints\/\)/],
      [
        ['list', 'tinker://model_nope'],
        /the service has no training run model_nope \(a wrong id, or a run of another account/,
      ],
      [['ttl', run], /give one of --seconds N .* or --clear/],
      [['ttl', run, '--seconds', '0'], /--seconds must be an integer >= 1/],
      [
        ['ttl', 'tinker://run_1/other/x', '--clear'],
        /is not a Tinker checkpoint path; it looks like tinker:\/\/RUN_ID\/sampler_weights\/NAME/,
      ],
      [
        ['download', `tinker://${server.models.keys().next().value}`, '--out', join(root, 'x')],
        /names a training run, not a checkpoint/,
      ],
      [['download', run], /required option '--out <dir>' not specified/],
    ];
    for (const [args, message] of cases) expectOneSentence(await checkpoints(...args), 2, message);
    expect(existsSync(join(root, 'x'))).toBe(false);
  });

  it("scores the checkpoint with seal eval through the service's OpenAI-compatible route", async () => {
    const data = loadMiniSuite();
    const ids = [...splitIds(data, 'test')].slice(0, 2).join(',');
    const out = join(root, 'eval-oai');
    const e = await seal(
      [
        'eval',
        '--suite',
        'mini',
        '--split',
        ids,
        '--base-url',
        `${server.url}/oai/api/v1`,
        '--model',
        last.sampler,
        '--api-key-env',
        'TINKER_API_KEY',
        '--format',
        'hermes',
        '--out',
        out,
      ],
      ENV,
    );
    expect(e.code, e.stderr).toBe(0);
    expect(e.stdout).toContain('2 task(s) run');
    const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8'));
    expect(summary.average).toBeGreaterThanOrEqual(0);
    expect(server.oaiRequests.length).toBeGreaterThan(0);
    for (const body of server.oaiRequests) expect(body.model).toBe(last.sampler);
    // the answers came from the trained weights, not the base model
    const step = server.checkpoints.get(last.sampler)!.step;
    expect(step).toBeGreaterThan(0);
    expect(readFileSync(join(out, 'results.jsonl'), 'utf8')).toContain(`at step ${step};`);
    // without the key the service refuses, and eval says what to check
    const refused = await seal(
      [
        'eval',
        '--suite',
        'mini',
        '--split',
        ids,
        '--base-url',
        `${server.url}/oai/api/v1`,
        '--model',
        last.sampler,
        '--format',
        'hermes',
        '--out',
        join(root, 'eval-no-key'),
        '--retries',
        '0',
      ],
      { ...ENV, OPENAI_API_KEY: '' },
    );
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/401|API key/);
    expect(refused.stderr).not.toMatch(/^\s+at /m);
  });
});
