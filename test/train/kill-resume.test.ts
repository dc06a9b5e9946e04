/**
 * The property the run folder promises: a `seal train` killed at any moment and resumed ends with
 * the same record and the same weights as a run never killed, on either training kernel.
 *
 * Kill points are drawn across the whole run of 3 rounds: every write of a round (checkpoint,
 * validation, rollouts, state.json, the rounds.jsonl line, the old checkpoint pruned; the process
 * kills itself with SIGKILL right after that write, src/train/crash-points.ts), each at a round
 * drawn from those where it happens (the line at round 2 or 3, where the older checkpoint is still
 * there, unpruned). A chain of kills takes its points in run order, each resume running on to the
 * next point, so one run's worth of work visits them all; two chains run side by side, the first
 * also tearing the line it was killed after (the one shape no write boundary leaves: a kill in the
 * middle of the append). Then a real SIGKILL at a moment drawn over the whole run's length. The
 * draws are seeded and the seed printed: `SEAL_KILL_SEED=<seed>` replays them,
 * `SEAL_KILL_CHAINS=<n>` runs n chains per kernel. Two resumes at once are forced down both
 * branches: the second refused while the first holds the folder (stopped there by SIGSTOP), and a
 * second that comes after the first has finished finds nothing to do. */
import { type ChildProcess, spawn } from 'node:child_process';
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
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nativeOps } from '../../src/nn/native-ops.js';
import { KILL_AT_ENV, ROUND_WRITES, type RoundWrite } from '../../src/train/crash-points.js';
import { Rng } from '../../src/util/rng.js';
import { buildDist, ROOT, seal } from '../support/cli.js';
import { tinyTrainFlags, trainedRecord } from '../support/tiny-run.js';

const ROUNDS = 3;
// validation every 2 rounds and after the last: rounds 2 and 3
const tiny = (kernels: string) => tinyTrainFlags({ rounds: ROUNDS, lr: 0.001, kernels });

const SEED = Number(
  process.env.SEAL_KILL_SEED ?? (process.env.CI ? 20261204 : Math.floor(Math.random() * 2 ** 31)),
);
/** kill chains per kernel, run side by side (two cores) */
const CHAINS = Math.max(1, Number(process.env.SEAL_KILL_CHAINS ?? 2));
console.log(`kill-resume: kill points drawn with seed ${SEED} (SEAL_KILL_SEED=${SEED} replays them)`);

/** the writes after which a kill leaves the round committed: a resume goes on with the next round */
const COMMITTED: readonly RoundWrite[] = ['state', 'line', 'pruned'];

interface KillPoint {
  readonly round: number;
  readonly write: RoundWrite;
}

/**
 * Every write of a round, each at a drawn round, in the order a run reaches them. A resume after a
 * kill past a round's commit starts at the next round, so the three committed writes take the three
 * rounds in a drawn order (the line at round 2 or 3, where the older checkpoint is still there,
 * unpruned); the others can be reached at any round they happen in.
 */
function drawKillPoints(rng: Rng): KillPoint[] {
  const rounds = rng.pick([
    [1, 2, 3],
    [1, 3, 2],
    [2, 3, 1],
    [3, 2, 1],
  ]); // state, line, pruned: every order with the line after round 1
  const committed = COMMITTED.map((write, i) => ({ round: rounds[i]!, write }));
  const before = (['checkpoint', 'validation', 'rollouts'] as const).map((write) => ({
    // validation every 2 rounds and after the last: rounds 2 and 3
    round: write === 'validation' ? rng.int(2, 3) : rng.int(1, ROUNDS),
    write,
  }));
  const order = (p: KillPoint) => p.round * ROUND_WRITES.length + ROUND_WRITES.indexOf(p.write);
  return [...before, ...committed].sort((a, b) => order(a) - order(b));
}

const roundDir = (r: number) => `round-${String(r).padStart(4, '0')}`;
const last = roundDir(ROUNDS);

function snapshot(dir: string) {
  return {
    ...trainedRecord(dir, last),
    checkpoints: readdirSync(join(dir, 'checkpoints')),
    validation: readdirSync(join(dir, 'validation'))
      .sort()
      .map((r) => readFileSync(join(dir, 'validation', r, 'summary.json'), 'utf8')),
    finished: existsSync(join(dir, 'finished.json')),
    lock: existsSync(join(dir, '.lock')),
  };
}

const resume = (dir: string) => seal(['train', '--resume', dir, '--quiet']);

function train(out: string, kernels: string, env: Record<string, string> = {}): ChildProcess {
  return spawn('node', [join(ROOT, 'bin', 'seal.js'), 'train', '--out', out, ...tiny(kernels)], {
    stdio: 'ignore',
    env: { ...process.env, ...env },
  });
}

function resumeProcess(dir: string, env: Record<string, string> = {}): ChildProcess {
  return spawn('node', [join(ROOT, 'bin', 'seal.js'), 'train', '--resume', dir, '--quiet'], {
    stdio: 'ignore',
    env: { ...process.env, ...env },
  });
}

const exit = (child: ChildProcess) =>
  new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) =>
    child.on('exit', (code, signal) => r({ code, signal })),
  );

const native = nativeOps();
if (typeof native === 'string')
  console.warn(`kill-resume: the native-kernel half is skipped: onnxruntime-node is not usable (${native})`);

for (const kernels of ['wasm', 'native'] as const)
  describe.skipIf(kernels === 'native' && typeof native === 'string')(
    `seal train --kernels ${kernels}: killed anywhere, resumed`,
    { timeout: 900_000 },
    () => {
      let root = '';
      // one folder name everywhere: the sampler's name carries it
      const at = (name: string) => join(root, name, 'run');
      let plain: ReturnType<typeof snapshot>;
      let plainMs = 0;
      const rng = new Rng(SEED + (kernels === 'native' ? 1 : 0));

      beforeAll(async () => {
        root = mkdtempSync(join(tmpdir(), `seal-kill-${kernels}-`));
        await buildDist();
        const p = at('plain');
        const t0 = Date.now();
        const a = await seal(['train', '--out', p, ...tiny(kernels)]);
        plainMs = Date.now() - t0;
        expect(a.code, a.stderr).toBe(0);
        plain = snapshot(p);
      }, 600_000);

      afterAll(() => {
        if (root) rmSync(root, { recursive: true, force: true });
      });

      it('killed right after each write of a round (drawn rounds), resumed each time: the run never killed', async () => {
        // CHAINS runs side by side, each killed at its points in run order: a resume runs on to the next
        await Promise.all(
          Array.from({ length: CHAINS }, async (_, c) => {
            const points = drawKillPoints(rng);
            const chain = points.map((p) => `${p.round}:${p.write}`).join(' ');
            console.log(`--kernels ${kernels}: chain ${c + 1}: kill points ${chain} (seed ${SEED})`);
            const d = at(`chain-${c + 1}`);
            mkdirSync(join(root, `chain-${c + 1}`));
            for (const [i, { round, write }] of points.entries()) {
              const name = `chain ${c + 1} at ${round}:${write}`;
              const env = { [KILL_AT_ENV]: `${round}:${write}` };
              const killed = await exit(i === 0 ? train(d, kernels, env) : resumeProcess(d, env));
              // the process reached the point and died there, as a kill leaves it
              expect(killed.signal, `${name}: exit ${killed.code}`).toBe('SIGKILL');
              const statePath = join(d, 'state.json');
              const committed = write === 'state' || write === 'line' || write === 'pruned';
              const state = existsSync(statePath) ? JSON.parse(readFileSync(statePath, 'utf8')).round : 0;
              expect(state, name).toBe(committed ? round : round - 1);
              if (write === 'line') {
                // the shape before pruning: the older checkpoint still there
                expect(readdirSync(join(d, 'checkpoints')).sort(), name).toEqual([
                  roundDir(round - 1),
                  roundDir(round),
                ]);
                // the first chain's kill came in the middle of the append: the line torn
                if (c === 0) {
                  const path = join(d, 'rounds.jsonl');
                  const lines = readFileSync(path, 'utf8').trimEnd().split('\n');
                  const tail = lines.pop()!;
                  writeFileSync(path, lines.map((l) => `${l}\n`).join('') + tail.slice(0, tail.length >> 1));
                }
              }
            }
            const r = await resume(d);
            expect(r.code, `chain ${c + 1}: ${r.stderr}`).toBe(0);
            expect({ chain, ...snapshot(d) }).toEqual({ chain, ...plain });
          }),
        );
      });

      it('a real SIGKILL at a moment drawn over the whole run, resumed: the run never killed', async () => {
        const d = at('random-moment');
        mkdirSync(join(root, 'random-moment'));
        const child = train(d, kernels);
        const exited = exit(child);
        // from the manifest (the run set up) over as long as a whole run takes
        while (!existsSync(join(d, 'run.json'))) {
          if (child.exitCode !== null) throw new Error('the run ended before it wrote its manifest');
          await new Promise((r) => setTimeout(r, 5));
        }
        const delay = Math.floor(rng.next() * plainMs);
        console.log(`--kernels ${kernels}: SIGKILL ${delay} ms into a ${plainMs} ms run (seed ${SEED})`);
        await new Promise((r) => setTimeout(r, delay));
        child.kill('SIGKILL');
        const killed = await exited;
        // a draw past the end finds the run finished; any other leaves a folder to resume
        if (killed.signal === 'SIGKILL') {
          const r = await resume(d);
          expect(r.code, r.stderr).toBe(0);
        } else expect(killed.code).toBe(0);
        expect(snapshot(d)).toEqual(plain);
      });

      it('two resumes at once: the second is refused while the first holds the folder; one after it finds nothing to do', async () => {
        // a folder killed after round 1's rollouts: rounds to redo
        const d = at('concurrent');
        mkdirSync(join(root, 'concurrent'));
        const killed = await exit(train(d, kernels, { [KILL_AT_ENV]: '1:rollouts' }));
        expect(killed.signal).toBe('SIGKILL');
        const first = resumeProcess(d);
        const firstExit = exit(first);
        // the first holds the lock; stopped there, it is sure to hold it while the second tries
        const lock = join(d, '.lock');
        // the killed run's lock is taken over (removed, then written anew): it may be gone a moment
        const holder = () => {
          try {
            return readFileSync(lock, 'utf8').trim();
          } catch {
            return undefined;
          }
        };
        while (holder() !== String(first.pid)) {
          if (first.exitCode !== null) throw new Error('the first resume ended before it took the lock');
          await new Promise((r) => setTimeout(r, 5));
        }
        first.kill('SIGSTOP');
        try {
          const second = await resume(d);
          expect(second.code).toBe(2);
          expect(second.stderr).toMatch(
            new RegExp(`is in use by another seal process \\(pid ${first.pid}\\)`),
          );
        } finally {
          first.kill('SIGCONT');
        }
        expect((await firstExit).code).toBe(0);
        expect(snapshot(d)).toEqual(plain);
        // the second again, now that the first has finished
        const after = await resume(d);
        expect(after.code, after.stderr).toBe(0);
        expect(after.stderr).toContain('nothing to do');
        expect(snapshot(d)).toEqual(plain);
      });
    },
  );
