/** The real `seal` binary in a real process, from the compiled code (`npm ci` builds it). */
import { execFile, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

export const run = promisify(execFile);
export const ROOT = join(import.meta.dirname, '..', '..');

/** the newest modification time of a .ts file under `dir` (0 when there is none) */
function newestSource(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestSource(path));
    else if (entry.name.endsWith('.ts')) newest = Math.max(newest, statSync(path).mtimeMs);
  }
  return newest;
}

/**
 * dist/ compiled from the sources under test. It is compiled when a source is newer than it, by
 * the rule bin/seal.js keeps; the suite's global setup compiles it once before any file runs, so
 * that a file calling this finds it fresh instead of spending a compile of its own.
 */
export async function buildDist(): Promise<void> {
  const main = join(ROOT, 'dist', 'cli', 'main.js');
  const built = existsSync(main) ? statSync(main).mtimeMs : 0;
  if (built > 0 && newestSource(join(ROOT, 'src')) <= built) return;
  const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
  await run(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: ROOT });
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
