/**
 * The code a run names, and the start evaluation's cache key: a change to the code that decides a
 * score (a format, the tokenizer, an environment) gives another sources hash and so another key,
 * while the command line, the reports and the server do not count.
 */
import { cpSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { codeChanged, runningSources, sourcesHash, startEvalKey } from '../../src/train/code-version.js';

const SRC = join(import.meta.dirname, '..', '..', 'src');

describe('the code of a run', () => {
  it('the sources hash follows the scoring code and ignores the CLI, reports and server', () => {
    const tree = mkdtempSync(join(tmpdir(), 'seal-sources-'));
    cpSync(SRC, tree, { recursive: true });
    const h0 = sourcesHash(tree);
    expect(h0).toBe(runningSources()); // the same tree on another path hashes the same
    writeFileSync(join(tree, 'cli', 'train.ts'), '// reworded help\n', { flag: 'a' });
    writeFileSync(join(tree, 'report', 'report.ts'), '// another chart\n', { flag: 'a' });
    expect(sourcesHash(tree)).toBe(h0);
    writeFileSync(join(tree, 'agent', 'formats', 'compact.ts'), '// a format change\n', { flag: 'a' });
    const h1 = sourcesHash(tree);
    expect(h1).not.toBe(h0);
    writeFileSync(join(tree, 'envs', 'mini', 'new-world.ts'), 'export const x = 1;\n');
    expect(sourcesHash(tree)).not.toBe(h1);
  });

  it('the start-evaluation cache key changes with the sources hash, and a code change is told', () => {
    const code = { version: '0.1.0', kernels: 'wasm-simd-r2', sources: 'a'.repeat(24) };
    const parts = { modelSha256: 'b'.repeat(64), suite: 'mini', maxTokens: 128, code };
    const key = startEvalKey(parts);
    expect(startEvalKey({ ...parts })).toBe(key);
    expect(startEvalKey({ ...parts, code: { ...code, sources: 'c'.repeat(24) } })).not.toBe(key);
    expect(startEvalKey({ ...parts, maxTokens: 64 })).not.toBe(key);
    expect(codeChanged(code, { ...code, git: 'x' })).toBe(false); // the same sources: the same code
    expect(codeChanged(code, { ...code, sources: 'c'.repeat(24) })).toBe(true);
    expect(codeChanged({ version: '0.1.0', git: 'a' }, { version: '0.1.0', git: 'b' })).toBe(true);
  });
});
