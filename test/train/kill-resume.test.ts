/**
 * The property the run folder promises: a `seal train` killed at any moment and resumed (even by
 * two resumes at once) ends with the same record and the same weights as a run never killed, on
 * either training kernel. A real process is killed with SIGKILL at a random moment of a round;
 * the shapes a kill can leave at each write boundary of a round (the files are written whole, by
 * rename, in a fixed order: checkpoint, validation, rollouts, state.json, the rounds.jsonl line,
 * the old checkpoint pruned) are made from that folder as each would be, and each is resumed.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  cpSync,
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
import { beforeAll, describe, expect, it } from 'vitest';
import { nativeOps } from '../../src/nn/native-ops.js';
import { buildDist, ROOT, seal } from '../support/cli.js';
import { timeless, timelessLines, tinyTrainFlags } from '../support/tiny-run.js';

const ROUNDS = 2;
const tiny = (kernels: string) => tinyTrainFlags({ rounds: ROUNDS, lr: 0.001, kernels });

const sha = (p: string) => createHash('sha256').update(readFileSync(p)).digest('hex');
const last = roundDir(ROUNDS);
function roundDir(r: number): string {
  return `round-${String(r).padStart(4, '0')}`;
}

function snapshot(dir: string) {
  return {
    rounds: timelessLines(join(dir, 'rounds.jsonl')),
    rollouts: readdirSync(join(dir, 'rollouts'))
      .sort()
      .map((f) => timelessLines(join(dir, 'rollouts', f))),
    state: timeless(readFileSync(join(dir, 'state.json'), 'utf8')),
    checkpoints: readdirSync(join(dir, 'checkpoints')),
    model: sha(join(dir, 'checkpoints', last, 'model.bin')),
    optimizer: sha(join(dir, 'checkpoints', last, 'optimizer.bin')),
    validation: readFileSync(join(dir, 'validation', roundDir(2), 'summary.json'), 'utf8'),
    finished: existsSync(join(dir, 'finished.json')),
    lock: existsSync(join(dir, '.lock')),
  };
}

const resume = (dir: string) => seal(['train', '--resume', dir, '--quiet']);

const native = nativeOps();
const KERNELS = ['wasm', ...(typeof native === 'string' ? [] : ['native'])];

describe.each(KERNELS)(
  'seal train --kernels %s: killed anywhere, resumed',
  { timeout: 900_000 },
  (kernels) => {
    const root = mkdtempSync(join(tmpdir(), `seal-kill-${kernels}-`));
    // one folder name everywhere: the sampler's name carries it
    const at = (name: string) => join(root, name, 'run');
    let plain: ReturnType<typeof snapshot>;
    let killed = '';
    let cut = 0;

    beforeAll(async () => {
      await buildDist();
      const p = at('plain');
      const a = await seal(['train', '--out', p, ...tiny(kernels)]);
      expect(a.code, a.stderr).toBe(0);
      plain = snapshot(p);
      // killed at a random moment once round 1 is committed (round 2 or 3 under way, or between)
      killed = at('killed');
      mkdirSync(join(root, 'killed'));
      const child = spawn(
        'node',
        [join(ROOT, 'bin', 'seal.js'), 'train', '--out', killed, ...tiny(kernels)],
        {
          stdio: 'ignore',
        },
      );
      const exited = new Promise((r) => child.on('exit', r));
      const statePath = join(killed, 'state.json');
      while (!existsSync(statePath) || JSON.parse(readFileSync(statePath, 'utf8')).round < 1) {
        if (child.exitCode !== null) throw new Error('the run ended before it could be killed');
        await new Promise((r) => setTimeout(r, 10));
      }
      const delay = Math.floor(Math.random() * 1500);
      await new Promise((r) => setTimeout(r, delay));
      child.kill('SIGKILL');
      await exited;
      cut = JSON.parse(readFileSync(statePath, 'utf8')).round;
      console.log(`--kernels ${kernels}: killed ${delay} ms after round 1, at round ${cut} committed`);
    }, 1_200_000);

    /** a copy of the killed folder, shaped by `shape` */
    let n = 0;
    function variant(shape: (dir: string) => void): string {
      const d = at(`v${++n}`);
      cpSync(killed, d, { recursive: true });
      shape(d);
      return d;
    }

    it('every shape a kill can leave ends as the run never killed', async () => {
      const roundsPath = (d: string) => join(d, 'rounds.jsonl');
      /** the rounds.jsonl lines of the rounds before the committed one */
      const earlier = (d: string) =>
        readFileSync(roundsPath(d), 'utf8')
          .split('\n')
          .filter((l) => {
            try {
              return JSON.parse(l).round < cut;
            } catch {
              return false;
            }
          });
      const lastLine = (d: string) =>
        JSON.stringify(JSON.parse(readFileSync(join(d, 'state.json'), 'utf8')).lastRound);
      const next = roundDir(cut + 1);
      const nextRound = () => ({
        // after the checkpoint of the next round, before its validation and rollouts
        'next checkpoint written': variant((d) => {
          rmSync(join(d, 'rollouts', `${next}.jsonl`), { force: true });
          cpSync(join(d, 'checkpoints', roundDir(cut)), join(d, 'checkpoints', next), { recursive: true });
        }),
        // after the next round's rollouts, before state.json
        'next rollouts written': variant((d) => {
          cpSync(join(d, 'checkpoints', roundDir(cut)), join(d, 'checkpoints', next), { recursive: true });
          writeFileSync(
            join(d, 'rollouts', `${next}.jsonl`),
            readFileSync(join(d, 'rollouts', `${roundDir(cut)}.jsonl`)),
          );
        }),
      });
      const shapes: Record<string, string> = {
        // whatever the random moment left
        'as killed': variant(() => {}),
        // the shapes a kill leaves inside the round after the committed one (none after the last)
        ...(cut < ROUNDS ? nextRound() : {}),
        // between state.json and the rounds.jsonl line
        'line not appended': variant((d) =>
          writeFileSync(
            roundsPath(d),
            earlier(d)
              .map((l) => `${l}\n`)
              .join(''),
          ),
        ),
        // in the middle of the append
        'line torn': variant((d) => {
          const tail = lastLine(d);
          writeFileSync(
            roundsPath(d),
            earlier(d)
              .map((l) => `${l}\n`)
              .join('') + tail.slice(0, tail.length >> 1),
          );
        }),
        // after the commit, before the old checkpoint is pruned (round 0 has none)
        ...(cut > 1
          ? {
              'old checkpoint not pruned': variant((d) =>
                cpSync(join(d, 'checkpoints', roundDir(cut)), join(d, 'checkpoints', roundDir(cut - 1)), {
                  recursive: true,
                }),
              ),
            }
          : {}),
      };
      const names = Object.keys(shapes);
      // two at a time: the machine has few cores
      for (let i = 0; i < names.length; i += 2) {
        const batch = names.slice(i, i + 2);
        const results = await Promise.all(batch.map((s) => resume(shapes[s]!)));
        results.forEach((r, j) => {
          expect(r.code, `${batch[j]}: ${r.stderr}`).toBe(0);
        });
      }
      for (const s of names) expect({ shape: s, ...snapshot(shapes[s]!) }).toEqual({ shape: s, ...plain });
    });

    it('two resumes at once: one continues, the other refuses while it runs, and the record has every round once', async () => {
      const d = variant(() => {});
      const [a, b] = await Promise.all([resume(d), resume(d)]);
      const codes = [a.code, b.code].sort();
      // the second may start only after the first finished: then it finds nothing to do
      if (codes[1] === 2) {
        expect(codes).toEqual([0, 2]);
        expect([a, b].find((r) => r.code === 2)!.stderr).toMatch(
          /is in use by another seal process \(pid \d+\)/,
        );
      } else {
        expect(codes).toEqual([0, 0]);
        expect(a.stderr + b.stderr).toContain('nothing to do');
      }
      expect(snapshot(d)).toEqual(plain);
    });
  },
);
