/**
 * `seal checkpoints download` as a user meets a hostile or broken service: the real binary in its
 * own process against the Tinker test server, whose archive route and signed URLs answer what the
 * test asks. A relative Location and signed URLs that redirect (relative or absolute) are followed
 * to the adapter; a redirect loop, an HTML page, archives that reach outside their folder or hold
 * links or devices or lie about sizes end with one sentence and exit 1, writing nothing: not
 * outside the output folder, and not the folder itself. Adapters whose tensors do not fit are
 * refused too, but the archive's files stay in out/raw. Tinker's raw MoE LoRA is converted into a
 * PEFT adapter against a base model folder, and again from the kept raw/ by `checkpoints convert`.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkLoraAdapter, parseSafetensors } from '../../src/tinker/adapter.js';
import { TinkerClient } from '../../src/tinker/client.js';
import { rawSafetensors, rawTarOf, type TarEntry, testAdapterFiles } from '../support/adapter-files.js';
import { buildDist, seal } from '../support/cli.js';
import {
  baseModelDir,
  EXPERTS,
  moeParams,
  rawAdapterFiles,
  rawConfig,
  rawMoe,
  removeScratch,
} from '../support/raw-lora.js';
import { fastOptions, startTinkerServer, type TinkerServerOptions } from '../support/tinker-server.js';

const BASE = 'Qwen/Qwen3-8B';
const root = mkdtempSync(join(tmpdir(), 'seal-download-cli-'));
afterAll(() => {
  rmSync(root, { recursive: true, force: true });
  removeScratch();
});

const adapterFiles = (rank = 4) => testAdapterFiles({ baseModel: BASE, rank, step: 1, lrs: [1e-4] });
const entriesOf = (files: { path: string; data: Buffer }[]): TarEntry[] =>
  files.map((f) => ({ path: f.path, data: f.data }));
const pairName = (layer: number, half: 'A' | 'B') =>
  `base_model.model.model.layers.${layer}.self_attn.q_proj.lora_${half}.weight`;

let boxes = 0;
/** a new folder to download into: `out` inside `box`, which must hold nothing else after */
function sandbox(): { box: string; out: string } {
  const box = join(root, `box-${boxes++}`);
  return { box, out: join(box, 'out') };
}

describe('seal checkpoints download against hostile answers', { timeout: 300_000 }, () => {
  const KEY = 'tml-hostile-key';
  let archive: Uint8Array | undefined;
  const servers: { close(): Promise<void> }[] = [];

  beforeAll(async () => {
    await buildDist();
  }, 300_000);
  afterAll(async () => {
    for (const s of servers) await s.close();
  });

  /** a server of the given archive behaviour, holding one saved sampler checkpoint: its path */
  async function serverWith(archiveOpts: NonNullable<TinkerServerOptions['archive']>) {
    const server = await startTinkerServer({
      apiKey: KEY,
      archive: { ...archiveOpts, bytes: (files) => archive ?? rawTarOf(entriesOf(files)) },
    });
    servers.push(server);
    const client = await TinkerClient.connect(fastOptions(server.url, { apiKey: KEY }));
    try {
      const training = await client.createTrainingClient({ baseModel: BASE, loraRank: 4 });
      await training.optimStep({ learningRate: 1e-4 });
      return { server, sampler: await training.saveWeightsForSampler('round-0001') };
    } finally {
      client.close();
    }
  }

  async function download(url: string, path: string, ...extra: string[]) {
    const { box, out } = sandbox();
    const r = await seal(['checkpoints', 'download', path, '--out', out, '--base-url', url, ...extra], {
      TINKER_API_KEY: KEY,
      TINKER_BASE_URL: '',
    });
    return { r, box, out };
  }

  /** refused in one sentence; nothing written, or (`keptRaw`) the archive's files alone in out/raw */
  function expectRefused(
    d: Awaited<ReturnType<typeof download>>,
    message: RegExp,
    keptRaw = false,
    code = 1,
  ): void {
    expect(d.r.code, d.r.stderr).toBe(code);
    expect(d.r.stderr).toMatch(message);
    expect(d.r.stderr).not.toMatch(/^\s+at /m);
    if (keptRaw) {
      // the conversion failed after the archive was unpacked: its files stay, and nothing else
      expect(readdirSync(d.box)).toEqual(['out']);
      expect(readdirSync(d.out)).toEqual(['raw']);
      expect(readdirSync(join(d.out, 'raw')).sort()).toEqual([
        'adapter_config.json',
        'adapter_model.safetensors',
      ]);
      expect(d.r.stderr).toContain(`the raw adapter is kept in ${join(d.out, 'raw')}`);
      return;
    }
    // nothing written: not the folder it would have made, not anything beside it
    expect(existsSync(d.box) ? readdirSync(d.box) : []).toEqual([]);
  }

  it('follows a relative Location from the archive route, and signed URLs that redirect', async () => {
    for (const opts of [
      { location: 'relative' as const },
      { signed: 'relative-redirect' as const },
      { signed: 'absolute-redirect' as const },
      { location: 'relative' as const, signed: 'relative-redirect' as const },
    ]) {
      const { server, sampler } = await serverWith(opts);
      const d = await download(server.url, sampler);
      expect(d.r.code, `${JSON.stringify(opts)}: ${d.r.stderr}`).toBe(0);
      expect(d.r.stdout).toMatch(/LoRA rank 4, alpha 32; 4 adapted module\(s\)/);
      expect(readdirSync(d.out).sort()).toEqual(['adapter_config.json', 'adapter_model.safetensors', 'raw']);
      // the signed URL was asked for at the one place it lives
      const signedAsked = server.requests.filter((q) => q.route.startsWith('signed/'));
      expect(signedAsked.length).toBe(opts.signed ? 2 : 1);
    }
  });

  it('ends a signed URL that redirects to itself, or answers HTML, with one sentence (exit 1)', async () => {
    const loop = await serverWith({ signed: 'loop' });
    expectRefused(await download(loop.server.url, loop.sampler), /the archive download failed \(.*redirect/i);
    const html = await serverWith({ signed: 'html' });
    expectRefused(
      await download(html.server.url, html.sampler),
      /the archive download answered an HTML page, not an archive/,
    );
  });

  it('refuses hostile archives (writing nothing) and adapters that do not fit (keeping raw/), exit 1', async () => {
    const { server, sampler } = await serverWith({});
    const good = entriesOf(adapterFiles());
    const weightsWith = (b: Buffer) => [good[0]!, { path: 'adapter_model.safetensors', data: b }];
    const absolute = join(root, 'absolute-target');
    const cases: [string, Buffer, RegExp, boolean?][] = [
      [
        'dotdot',
        rawTarOf([...good, { path: 'adapter/../../escaped', data: Buffer.from('x') }]),
        /outside its folder: 'adapter\/\.\.\/\.\.\/escaped'/,
      ],
      ['absolute', rawTarOf([{ path: absolute, data: Buffer.from('x') }, ...good]), /outside its folder/],
      [
        'symlink',
        rawTarOf([...good, { path: 'link', type: '2', linkname: '/etc/passwd' }]),
        /not a regular file \(tar type '2'\)/,
      ],
      [
        'hardlink',
        rawTarOf([...good, { path: 'hard', type: '1', linkname: '../../x' }]),
        /not a regular file \(tar type '1'\)/,
      ],
      ['device', rawTarOf([{ path: 'dev', type: '3' }, ...good]), /not a regular file \(tar type '3'\)/],
      [
        'size',
        rawTarOf(good.map((e, i) => (i === 1 ? { ...e, size: e.data!.length + 5000 } : e))),
        /cut short/,
      ],
      [
        'rank',
        rawTarOf(
          weightsWith(
            rawSafetensors([
              { name: pairName(0, 'A'), dtype: 'F32', shape: [4, 8], bytes: 128 },
              { name: pairName(0, 'B'), dtype: 'F32', shape: [8, 3], bytes: 96 },
            ]),
          ),
        ),
        /not a usable LoRA adapter: .*lora_B F32 \[8, 3\], not of rank 4 \(adapter_config\.json's "r"\); the raw adapter is kept in/,
        true,
      ],
      [
        'trailing',
        rawTarOf(
          weightsWith(
            rawSafetensors(
              [
                { name: pairName(0, 'A'), dtype: 'F32', shape: [4, 8], bytes: 128 },
                { name: pairName(0, 'B'), dtype: 'F32', shape: [8, 4], bytes: 128 },
              ],
              16,
            ),
          ),
        ),
        /not a usable LoRA adapter: .*the tensors end at byte 256 of the data, which holds 272/,
        true,
      ],
    ];
    for (const [name, bytes, message, keptRaw] of cases) {
      archive = bytes;
      const d = await download(server.url, sampler);
      expectRefused(d, message, keptRaw);
      expect(existsSync(join(root, 'escaped')), name).toBe(false);
      expect(existsSync(absolute), name).toBe(false);
    }
    archive = undefined;
  });
  it("converts Tinker's raw MoE archive against a base model folder, keeping the raw files; refuses what does not fit, keeping them too", async () => {
    const { server, sampler } = await serverWith({});
    const QWEN3_MOE = {
      architectures: ['Qwen3MoeForCausalLM'],
      model_type: 'qwen3_moe',
      num_experts: EXPERTS,
    };
    const model = baseModelDir(QWEN3_MOE, moeParams());
    archive = rawTarOf(entriesOf(rawAdapterFiles(rawMoe())));
    try {
      const d = await download(
        server.url,
        sampler,
        '--base-model-dir',
        model,
        '--base-model',
        'Qwen/Qwen3-30B-A3B',
      );
      expect(d.r.code, d.r.stderr).toBe(0);
      expect(readdirSync(d.out).sort()).toEqual(['adapter_config.json', 'adapter_model.safetensors', 'raw']);
      expect(readdirSync(join(d.out, 'raw')).sort()).toEqual([
        'adapter_config.json',
        'adapter_model.safetensors',
      ]);
      expect(JSON.parse(readFileSync(join(d.out, 'raw', 'adapter_config.json'), 'utf8'))).toEqual(
        rawConfig(),
      );
      const config = JSON.parse(readFileSync(join(d.out, 'adapter_config.json'), 'utf8'));
      expect(config).toMatchObject({
        peft_type: 'LORA',
        base_model_name_or_path: 'Qwen/Qwen3-30B-A3B',
        target_modules: ['down_proj', 'gate_proj', 'q_proj', 'up_proj', 'v_proj'],
      });
      const names = parseSafetensors(readFileSync(join(d.out, 'adapter_model.safetensors')), 'x').tensors.map(
        (t) => t.name,
      );
      expect(names).toContain('base_model.model.model.layers.1.mlp.experts.2.down_proj.lora_B.weight');
      expect(names).toHaveLength(2 * 2 * (2 + 3 * EXPERTS));
      expect(checkLoraAdapter(d.out).warnings).toEqual([]);
      expect(d.r.stdout).toContain(`raw archive files kept in: ${join(d.out, 'raw')}`);
      expect(d.r.stdout).toMatch(/names checked against the weights of /);
      expect(d.r.stdout).toMatch(/split 6 stacked expert LoRA\(s\) into one pair per expert/);
      expect(d.r.stdout).toContain(`--lora-modules round-0001=${d.out}`);
      expect(d.r.stdout).toContain(`--lora-paths round-0001=${d.out}`);

      // without the model's folder: the family's rules alone, and the output says so
      const alone = await download(server.url, sampler);
      expect(alone.r.code, alone.r.stderr).toBe(0);
      expect(alone.r.stdout).toMatch(/names NOT checked against the model/);

      // --raw: the archive as it came, no conversion
      const raw = await download(server.url, sampler, '--raw');
      expect(raw.r.code, raw.r.stderr).toBe(1);
      expect(raw.r.stderr).toMatch(
        /not a usable LoRA adapter: .*"target_modules" must name the adapted modules/,
      );

      // the kept raw folder converts again with seal checkpoints convert
      const again = join(d.box, 'again');
      const c = await seal([
        'checkpoints',
        'convert',
        join(d.out, 'raw'),
        '--out',
        again,
        '--base-model-dir',
        model,
      ]);
      expect(c.code, c.stderr).toBe(0);
      expect(readFileSync(join(again, 'adapter_model.safetensors'))).toEqual(
        readFileSync(join(d.out, 'adapter_model.safetensors')),
      );

      // four experts stacked where the model has three: refused, the raw files kept
      archive = rawTarOf(entriesOf(rawAdapterFiles(rawMoe('self_attn', 4))));
      expectRefused(
        await download(server.url, sampler, '--base-model-dir', model),
        /not a usable LoRA adapter: .*stacks 4 experts, but the base model's config\.json .* says 3/,
        true,
      );
      // an adapter of another model's modules: the user's to fix (exit 2), the raw files kept
      archive = rawTarOf(entriesOf(rawAdapterFiles(rawMoe('attn'))));
      expectRefused(
        await download(server.url, sampler, '--base-model-dir', model),
        /maps to model\.layers\.0\.attn\.q_proj\.weight, which the base model's weights .* do not hold/,
        true,
        2,
      );
      // a base model folder that is not one: refused before anything is downloaded
      expectRefused(
        await download(server.url, sampler, '--base-model-dir', join(root, 'nowhere')),
        /--base-model-dir .*nowhere is not a folder; give the base model's folder/,
        false,
        2,
      );
    } finally {
      archive = undefined;
    }
  });
});
