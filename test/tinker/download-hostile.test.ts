/**
 * What a hostile or broken service could hand `seal checkpoints download`, as generated cases run
 * through the download's own steps (readTar, unpackAdapter, checkLoraAdapter; the same cases as a
 * user meets them, in a `seal` process: download-cli.test.ts). Archives: members with `..` anywhere in their path, absolute paths, links,
 * devices, long names in the ustar, GNU and pax forms, sizes that lie. Adapters: tensors of shapes,
 * dtypes and ranks that do not fit, bytes after the last tensor. Signed URLs that redirect (relative
 * and absolute), loop, or answer an HTML page (download-cli.test.ts). Each is refused with what is wrong (exit 1: the
 * service's answer is not the user's to fix, docs/commands/checkpoints.md) and writes nothing
 * outside the output folder, which a refused download leaves as it found it.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import {
  AdapterError,
  checkLoraAdapter,
  SAFETENSORS_DTYPES,
  unpackAdapter,
} from '../../src/tinker/adapter.js';
import { readTar, TarError } from '../../src/util/tar.js';
import {
  longNameEntries,
  rawSafetensors,
  rawTarOf,
  type TarEntry,
  testAdapterFiles,
} from '../support/adapter-files.js';

const BASE = 'Qwen/Qwen3-8B';
const root = mkdtempSync(join(tmpdir(), 'seal-hostile-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const adapterFiles = (rank = 4) => testAdapterFiles({ baseModel: BASE, rank, step: 1, lrs: [1e-4] });
const entriesOf = (files: { path: string; data: Buffer }[], under = ''): TarEntry[] =>
  files.map((f) => ({ path: `${under}${f.path}`, data: f.data }));

let boxes = 0;
/** a new folder to download into: `out` inside `box`, which must hold nothing else after */
function sandbox(): { box: string; out: string } {
  const box = join(root, `box-${boxes++}`);
  return { box, out: join(box, 'out') };
}

/** readTar, unpackAdapter, checkLoraAdapter: the download's steps after the bytes arrived */
function unpackChecked(bytes: Uint8Array, out: string) {
  return checkLoraAdapter(unpackAdapter(readTar(bytes), out));
}

/** the error the archive is refused with; the sandbox holds nothing outside `out` */
function refusal(bytes: Uint8Array): Error {
  const { box, out } = sandbox();
  try {
    unpackChecked(bytes, out);
  } catch (e) {
    const outside = existsSync(box) ? readdirSync(box).filter((n) => n !== 'out') : [];
    expect(outside).toEqual([]);
    return e as Error;
  }
  throw new Error('the archive was accepted');
}

const segment = fc.stringMatching(/^[A-Za-z0-9_-][A-Za-z0-9_.-]{0,11}$/).filter((s) => s !== '..');
const segments = fc.array(segment, { minLength: 1, maxLength: 6 });

describe('hostile archives, generated', () => {
  it("refuses a member with '..' anywhere in its path, or an absolute one, wherever it sits", () => {
    fc.assert(
      fc.property(
        segments,
        fc.nat(),
        fc.nat(),
        fc.constantFrom('plain', 'gnu', 'pax', 'prefix'),
        fc.boolean(),
        (parts, at, position, form, absolute) => {
          const hostile = absolute
            ? `/${parts.join('/')}`
            : [
                ...parts.slice(0, at % (parts.length + 1)),
                '..',
                ...parts.slice(at % (parts.length + 1)),
              ].join('/');
          let member: TarEntry[];
          if (form === 'gnu' || form === 'pax')
            member = [...longNameEntries(hostile, form), { path: 'short-name', data: Buffer.from('x') }];
          else if (form === 'prefix' && hostile.lastIndexOf('/') > 0) {
            const cut = hostile.lastIndexOf('/');
            member = [
              { path: hostile.slice(cut + 1) || 'x', prefix: hostile.slice(0, cut), data: Buffer.from('x') },
            ];
          } else member = [{ path: hostile, data: Buffer.from('x') }];
          const good = entriesOf(adapterFiles());
          const i = position % (good.length + 1);
          const e = refusal(rawTarOf([...good.slice(0, i), ...member, ...good.slice(i)]));
          expect(e).toBeInstanceOf(TarError);
          expect(e.message).toMatch(/the archive holds a path outside its folder: '.*'/);
        },
      ),
      { numRuns: 150 },
    );
    // the case an audit found accepted: `..` after the first part
    expect(refusal(rawTarOf([{ path: 'adapter/../../x', data: Buffer.from('x') }])).message).toContain(
      "'adapter/../../x'",
    );
  });

  it('refuses links, devices and FIFOs instead of making them', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('1', '2', '3', '4', '6'),
        segments,
        fc.constantFrom('/etc/passwd', '../../outside', 'adapter_model.safetensors'),
        fc.nat(),
        (type, parts, linkname, position) => {
          const good = entriesOf(adapterFiles());
          const i = position % (good.length + 1);
          const member = { path: parts.join('/'), type, linkname };
          const e = refusal(rawTarOf([...good.slice(0, i), member, ...good.slice(i)]));
          expect(e).toBeInstanceOf(TarError);
          expect(e.message).toMatch(new RegExp(`which is not a regular file \\(tar type '${type}'\\)`));
        },
      ),
      { numRuns: 60 },
    );
  });

  it('reads long names in the ustar prefix, GNU and pax forms to the same paths', () => {
    const longPath = fc
      .array(segment, { minLength: 8, maxLength: 14 })
      .map((p) => p.join('/'))
      .filter((p) => p.length > 100 && p.length < 150);
    fc.assert(
      fc.property(longPath, fc.constantFrom('gnu', 'pax', 'prefix'), (folder, form) => {
        const files = adapterFiles(2);
        const entries = files.flatMap((f): TarEntry[] => {
          const path = `${folder}/${f.path}`;
          if (form === 'prefix') return [{ path: f.path, prefix: folder, data: f.data }];
          return [...longNameEntries(path, form), { path: path.slice(0, 100), data: f.data }];
        });
        const read = readTar(rawTarOf(entries));
        expect(read.map((f) => f.path)).toEqual(files.map((f) => `${folder}/${f.path}`));
        const { out } = sandbox();
        expect(checkLoraAdapter(unpackAdapter(read, out)).rank).toBe(2);
        expect(readdirSync(out)).toEqual([folder.split('/')[0]]);
      }),
      { numRuns: 40 },
    );
  });

  it('refuses an archive whose size fields lie, in either direction', () => {
    // the config only grows (a JSON file cut by its last newline is still the same config; tar
    // has no checksum of the data to tell); every byte of the safetensors file counts
    fc.assert(
      fc.property(
        fc.constantFrom('config', 'weights'),
        fc.integer({ min: -600, max: 4000 }).filter((d) => d !== 0),
        (member, delta) => {
          const files = adapterFiles();
          const i = member === 'config' ? 0 : 1;
          const real = files[i]!.data.length;
          const lie = member === 'config' ? real + Math.abs(delta) : Math.max(0, real + delta);
          fc.pre(lie !== real);
          const entries = entriesOf(files).map((e, k) => (k === i ? { ...e, size: lie } : e));
          const e = refusal(rawTarOf(entries));
          expect(e.constructor.name).toMatch(/^(TarError|AdapterError)$/);
          expect(e.message).toMatch(
            /cut short|bad header checksum|bad number field|not JSON|not a safetensors file|does not match its byte range|tensors end at byte|too short|holds no/,
          );
        },
      ),
      { numRuns: 120 },
    );
  });

  it('refuses a path that is both a file and a folder, or a file twice', () => {
    const good = entriesOf(adapterFiles());
    for (const extra of [
      [
        { path: 'x', data: Buffer.from('1') },
        { path: 'x/y', data: Buffer.from('2') },
      ],
      [{ path: 'adapter_config.json/inner', data: Buffer.from('2') }],
      [{ path: 'adapter_model.safetensors', data: Buffer.from('2') }],
    ]) {
      const e = refusal(rawTarOf([...good, ...extra]));
      expect(e).toBeInstanceOf(AdapterError);
      expect(e.message).toMatch(/as a file and as a folder|twice/);
    }
  });
});

/** an adapter folder whose weights file is `weights` (rank 4 in its config) */
function adapterWith(weights: Buffer): string {
  const files = adapterFiles();
  files[1]!.data = weights;
  return unpackAdapter(files, sandbox().out);
}

const pairName = (layer: number, half: 'A' | 'B') =>
  `base_model.model.model.layers.${layer}.self_attn.q_proj.lora_${half}.weight`;

describe('adapters that do not fit, generated', () => {
  const dims = fc.integer({ min: 1, max: 9 });

  it("refuses a pair whose lora_A or lora_B is not of the config's rank (each on its own)", () => {
    fc.assert(
      fc.property(dims, dims, dims, dims, (rA, rB, inDim, outDim) => {
        fc.pre(rA !== 4 || rB !== 4);
        const folder = adapterWith(
          rawSafetensors([
            { name: pairName(0, 'A'), dtype: 'F32', shape: [rA, inDim], bytes: rA * inDim * 4 },
            { name: pairName(0, 'B'), dtype: 'F32', shape: [outDim, rB], bytes: outDim * rB * 4 },
          ]),
        );
        expect(() => checkLoraAdapter(folder)).toThrow(AdapterError);
        expect(() => checkLoraAdapter(folder)).toThrow(/are not of rank 4 \(adapter_config.json's "r"\)/);
      }),
      { numRuns: 80 },
    );
    // the case an audit found accepted: lora_A of the config's rank, lora_B of another
    const folder = adapterWith(
      rawSafetensors([
        { name: pairName(0, 'A'), dtype: 'F32', shape: [4, 8], bytes: 128 },
        { name: pairName(0, 'B'), dtype: 'F32', shape: [8, 2], bytes: 64 },
      ]),
    );
    expect(() => checkLoraAdapter(folder)).toThrow(/lora_B \[8, 2\] are not of rank 4/);
  });

  it('refuses pairs whose shapes are not a LoRA pair: ranks of tensors that differ, expert counts that differ', () => {
    fc.assert(
      fc.property(
        fc.constantFrom<[number[], number[]]>(
          [
            [4, 8],
            [2, 8, 4],
          ],
          [
            [2, 4, 8],
            [8, 4],
          ],
          [
            [2, 4, 8],
            [3, 8, 4],
          ],
          [[4], [8, 4]],
          [
            [1, 2, 4, 8],
            [1, 2, 8, 4],
          ],
        ),
        ([a, b]) => {
          const size = (s: number[]) => s.reduce((x, y) => x * y, 1) * 4;
          const folder = adapterWith(
            rawSafetensors([
              { name: pairName(0, 'A'), dtype: 'F32', shape: a, bytes: size(a) },
              { name: pairName(0, 'B'), dtype: 'F32', shape: b, bytes: size(b) },
            ]),
          );
          expect(() => checkLoraAdapter(folder)).toThrow(/are not a LoRA pair's shapes/);
        },
      ),
    );
  });

  it('refuses a tensor whose bytes do not fit its dtype and shape, or a dtype safetensors has not', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...Object.keys(SAFETENSORS_DTYPES), 'F4', 'Q8_0', 'f32', ''),
        fc.integer({ min: -7, max: 7 }),
        fc.constantFrom<'A' | 'B'>('A', 'B'),
        (dtype, delta, half) => {
          const width = SAFETENSORS_DTYPES[dtype];
          fc.pre(width === undefined || delta !== 0);
          const shape = half === 'A' ? [4, 8] : [8, 4];
          const bytes = Math.max(0, 32 * (width ?? 4) + delta);
          fc.pre(width === undefined || bytes !== 32 * width);
          const other = {
            name: pairName(0, half === 'A' ? 'B' : 'A'),
            dtype: 'F32',
            shape: half === 'A' ? [8, 4] : [4, 8],
            bytes: 128,
          };
          const folder = adapterWith(
            rawSafetensors([{ name: pairName(0, half), dtype, shape, bytes }, other]),
          );
          expect(() => checkLoraAdapter(folder)).toThrow(
            width === undefined
              ? /has no valid dtype, shape and data_offsets|is not a safetensors dtype/
              : /does not match its byte range/,
          );
        },
      ),
      { numRuns: 80 },
    );
  });

  it('refuses a safetensors file with bytes after its last tensor', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 4096 }), (trailing) => {
        const folder = adapterWith(
          rawSafetensors(
            [
              { name: pairName(0, 'A'), dtype: 'BF16', shape: [4, 8], bytes: 64 },
              { name: pairName(0, 'B'), dtype: 'BF16', shape: [8, 4], bytes: 64 },
            ],
            trailing,
          ),
        );
        expect(() => checkLoraAdapter(folder)).toThrow(
          new RegExp(`the tensors end at byte 128 of the data, which holds ${128 + trailing}`),
        );
      }),
      { numRuns: 40 },
    );
  });
});
