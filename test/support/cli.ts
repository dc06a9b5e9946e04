/** The real `seal` binary in a real process, from the compiled code (`npm ci` builds it). */
import { execFile, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

export const run = promisify(execFile);
export const ROOT = join(import.meta.dirname, '..', '..');

/**
 * dist/ compiled from the sources under test: `bin/seal.js` compiles it when a source is newer
 * (its rule, kept in one place), so a no-op command through it is the check. The suite's global
 * setup does this once before any file runs; a file calling it then finds the build fresh.
 */
export async function buildDist(): Promise<void> {
  await run(process.execPath, [join(ROOT, 'bin', 'seal.js'), '--version'], { cwd: ROOT });
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

/**
 * `seal train ARGS` (writing `out`) in its own process, killed with SIGKILL once its state.json
 * says round `round` is committed; a run that ends first is an error. The caller holds the next
 * round back (a slow save, say) so that the kill lands before it commits.
 */
export async function killAfterRound(
  args: readonly string[],
  env: Record<string, string>,
  out: string,
  round: number,
): Promise<void> {
  const child = spawn('node', [join(ROOT, 'bin', 'seal.js'), ...args], {
    stdio: 'ignore',
    env: { ...process.env, ...env },
  });
  const exited = new Promise((r) => child.on('exit', r));
  const statePath = join(out, 'state.json');
  const committed = () => {
    try {
      return (JSON.parse(readFileSync(statePath, 'utf8')) as { round: number }).round >= round;
    } catch {
      return false; // not written yet
    }
  };
  while (!committed()) {
    if (child.exitCode !== null) throw new Error('the run ended before it could be killed');
    await new Promise((r) => setTimeout(r, 20));
  }
  child.kill('SIGKILL');
  await exited;
}
