import { checkTask } from '../src/envs/bfcl/checker.js';
import { resolveDataDir } from '../src/envs/bfcl/data/locate.js';
import { loadBfclData } from '../src/envs/bfcl/data/tasks.js';
import { TaskEnvironment } from '../src/envs/bfcl/executor.js';

const args = process.argv.slice(2);
const opt = (n: string, d: string) => (args.includes(n) ? args[args.indexOf(n) + 1]! : d);
const rounds = Number(opt('--rounds', '5'));
// the data as seal finds it: --data-dir, else $SEAL_BFCL_DATA, else the `seal data pull bfcl` cache
const dataDir = resolveDataDir(args.includes('--data-dir') ? opt('--data-dir', '') : undefined);

const data = loadBfclData(dataDir);
const constants = data.longContextConstants();
const calls = data.tasks.reduce((s, t) => s + t.groundTruth.flat().length, 0);

function replayOnce(): number {
  const t0 = performance.now();
  for (const task of data.tasks) {
    const lc = task.category === 'long_context';
    const env = new TaskEnvironment({
      taskId: task.id,
      involvedClasses: task.involvedClasses,
      initialConfig: task.initialConfig,
      longContext: lc,
      ...(lc ? { constants } : {}),
    });
    for (const turn of task.groundTruth) for (const call of turn) env.execute(call);
  }
  return (performance.now() - t0) / 1000;
}

function checkOnce(): number {
  const t0 = performance.now();
  let valid = 0;
  for (const task of data.tasks)
    if (
      checkTask(
        task,
        task.groundTruth.map((t) => (t.length ? [t] : [])),
        data,
      ).valid
    )
      valid++;
  if (valid !== data.tasks.length)
    throw new Error(`checker rejected ${data.tasks.length - valid} ground truths`);
  return (performance.now() - t0) / 1000;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
replayOnce();
checkOnce(); // warm-up
const replay: number[] = [];
const check: number[] = [];
for (let i = 0; i < rounds; i++) {
  replay.push(replayOnce());
  check.push(checkOnce());
}
const r = median(replay);
const c = median(check);
console.log(`tasks: ${data.tasks.length}, ground-truth calls: ${calls}, rounds: ${rounds} (medians)`);
console.log(
  `replay  (execute only):     ${(calls / r).toFixed(0)} calls/s, ${(data.tasks.length / r).toFixed(1)} tasks/s, ${r.toFixed(3)} s`,
);
console.log(
  `checker (official verdict): ${((2 * calls) / c).toFixed(0)} calls/s, ${(data.tasks.length / c).toFixed(1)} tasks/s, ${c.toFixed(3)} s`,
);
console.log(
  `ratio checker/replay time: ${(c / r).toFixed(2)} (2.0 would mean the checks cost nothing beyond running both sides)`,
);
