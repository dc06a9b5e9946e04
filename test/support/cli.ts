/** The real `seal` binary in a real process, from the compiled code (`npm ci` builds it). */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';

export const run = promisify(execFile);
export const ROOT = join(import.meta.dirname, '..', '..');

/** rebuild dist/ from the sources under test */
export async function buildDist(): Promise<void> {
  await run('npx', ['tsc', '-p', 'tsconfig.build.json'], { cwd: ROOT });
}

export async function seal(
  args: readonly string[],
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const r = await run('node', [join(ROOT, 'bin', 'seal.js'), ...args], {
      env: { ...process.env, ...env },
      maxBuffer: 64 << 20,
    });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string };
    return { code: err.code, stdout: err.stdout, stderr: err.stderr };
  }
}
