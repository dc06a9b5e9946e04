/**
 * `bin/seal.js` in a checkout rebuilds `dist/` when `src/` is newer, so a command never runs
 * code older than the sources (and the commit) its run record names. Checked in a throwaway
 * checkout with a one-file `src/`, through a real process.
 */
import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ROOT } from './support/cli.js';

const run = promisify(execFile);

function checkout(message: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'seal-bin-'));
  mkdirSync(join(dir, 'bin'));
  cpSync(join(ROOT, 'bin', 'seal.js'), join(dir, 'bin', 'seal.js'));
  writeFileSync(join(dir, 'package.json'), '{"type": "module"}');
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  writeFileSync(
    join(dir, 'tsconfig.build.json'),
    JSON.stringify({
      compilerOptions: { rootDir: 'src', outDir: 'dist', module: 'NodeNext', target: 'ES2022', types: [] },
      include: ['src'],
    }),
  );
  writeSource(dir, message);
  return dir;
}

function writeSource(dir: string, message: string): void {
  mkdirSync(join(dir, 'src', 'cli'), { recursive: true });
  writeFileSync(join(dir, 'src', 'cli', 'main.ts'), `console.log(${JSON.stringify(message)} as string);\n`);
}

const seal = (dir: string, env: Record<string, string> = {}) =>
  run('node', [join(dir, 'bin', 'seal.js')], { env: { ...process.env, ...env } });

describe('bin/seal.js', () => {
  it('builds a missing dist/, rebuilds it after src/ changes, and leaves a fresh build alone', async () => {
    const dir = checkout('first');
    const first = await seal(dir);
    expect(first.stdout.trim()).toBe('first');
    expect(first.stderr).toMatch(/rebuilding/);

    const again = await seal(dir);
    expect(again.stdout.trim()).toBe('first');
    expect(again.stderr).toBe('');

    writeSource(dir, 'second');
    // mtimes can be coarse: make the edit unmistakably newer than the build
    const later = new Date(Date.now() + 5_000);
    utimesSync(join(dir, 'src', 'cli', 'main.ts'), later, later);
    const edited = await seal(dir, { SEAL_NO_REBUILD: '1' });
    expect(edited.stdout.trim()).toBe('first');
    const rebuilt = await seal(dir);
    expect(rebuilt.stdout.trim()).toBe('second');
    expect(rebuilt.stderr).toMatch(/src\/ is newer than the compiled dist\//);
  });

  it('a source that does not compile: exit 2 and what to do', async () => {
    const dir = checkout('ok');
    writeFileSync(join(dir, 'src', 'cli', 'main.ts'), 'const x: number = "not a number";\n');
    const r = await seal(dir).catch((e: { code: number; stderr: string }) => e);
    expect('code' in r && r.code).toBe(2);
    expect(r.stderr).toMatch(/the build failed.*npm run build/);
  });
});
