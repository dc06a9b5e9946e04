/**
 * Weights & Biases through its official JS SDK (@wandb/sdk), run in a child process
 * (wandb-child.ts says why). The SDK reads W&B's own variables: WANDB_API_KEY, WANDB_BASE_URL
 * (a W&B server of your own); seal adds WANDB_PROJECT (default: seal) and WANDB_ENTITY. Each
 * round's numbers are logged at the round as the step. A resumed run logs into a new W&B run named
 * after the folder and the round it resumed after: this SDK cannot append to an existing run's
 * history (it would write over its first rows).
 */
import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Tracker, TrackStart } from './track.js';

/** how long the SDK may take to create the run */
const INIT_MS = 60_000;

/** the line of a dead process's stderr that says what went wrong (Node ends with a stack and its version) */
function errorLine(stderr: string): string | undefined {
  const lines = stderr.trim().split('\n');
  return (lines.findLast((l) => /^\w*Error\b/.test(l)) ?? lines.at(-1))?.slice(0, 300) || undefined;
}

export class WandbTracker implements Tracker {
  readonly name = 'W&B';
  private gone: string | undefined;

  private constructor(
    private readonly child: ChildProcess,
    readonly url: string,
    private readonly stderr: () => string,
  ) {
    child.on('exit', (code, signal) => {
      this.gone ??= `the W&B SDK's process ended (${signal ?? `exit ${code}`})${this.lastError()}`;
    });
  }

  private lastError(): string {
    const line = errorLine(this.stderr());
    return line ? `: ${line}` : '';
  }

  static open(s: TrackStart): Promise<WandbTracker> {
    const child = fork(fileURLToPath(new URL('./wandb-child.js', import.meta.url)), [], {
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
      env: s.env,
    });
    let err = '';
    child.stderr?.on('data', (d: Buffer) => {
      err = (err + d.toString()).slice(-4000);
    });
    const name = s.resumedAfter > 0 ? `${s.name} (resumed after round ${s.resumedAfter})` : s.name;
    return new Promise((resolve, reject) => {
      const fail = (why: string) => {
        clearTimeout(timer);
        child.kill('SIGKILL');
        reject(new Error(why));
      };
      const timer = setTimeout(() => fail(`W&B did not create the run within ${INIT_MS / 1000} s`), INIT_MS);
      child.on('message', (m: { type: string; url?: string; message?: string }) => {
        if (m.type === 'ready') {
          clearTimeout(timer);
          resolve(new WandbTracker(child, m.url ?? '', () => err));
        } else if (m.type === 'error') fail(`W&B refused the run: ${m.message}`);
      });
      child.on('exit', (code) =>
        fail(`the W&B SDK's process ended (exit ${code})${errorLine(err) ? `: ${errorLine(err)}` : ''}`),
      );
      child.send({
        type: 'init',
        project: s.env.WANDB_PROJECT || 'seal',
        ...(s.env.WANDB_ENTITY ? { entity: s.env.WANDB_ENTITY } : {}),
        name,
        config: s.config,
      });
    });
  }

  async log(step: number, metrics: Readonly<Record<string, number>>): Promise<void> {
    if (this.gone) throw new Error(this.gone);
    this.child.send({ type: 'log', step, data: { ...metrics } });
  }

  async close(status: 'finished' | 'failed'): Promise<void> {
    if (this.gone) throw new Error(this.gone);
    const exited = new Promise<number | null>((r) => this.child.once('exit', (code) => r(code)));
    this.child.send({ type: 'finish', code: status === 'finished' ? 0 : 1 });
    const code = await exited;
    if (code !== 0) throw new Error(this.gone ?? `the W&B SDK's process ended with exit ${code}`);
  }

  /** the run ends without waiting for it any longer: the SDK's process goes too */
  abandon(): void {
    this.child.kill('SIGKILL');
  }
}
