/** A progress bar with rate and ETA on a terminal; a quiet line now and then elsewhere (CI, pipes). */
import cliProgress from 'cli-progress';
import type { EvalProgress } from '../eval/folder.js';

export function progressBar(label: string, stream: NodeJS.WriteStream = process.stderr): EvalProgress {
  if (stream.isTTY) {
    const bar = new cliProgress.SingleBar(
      {
        format: `${label} |{bar}| {value}/{total} tasks | {rate} tasks/s | ETA {eta_formatted}`,
        stream,
        hideCursor: true,
        etaBuffer: 50,
      },
      cliProgress.Presets.shades_classic,
    );
    let started = 0;
    let ranNow = 0;
    return {
      start(total, done) {
        started = Date.now();
        bar.start(total, done, { rate: '0.00' });
      },
      tick() {
        ranNow++;
        const secs = (Date.now() - started) / 1000;
        bar.increment(1, { rate: secs > 0 ? (ranNow / secs).toFixed(2) : '0.00' });
      },
      stop() {
        bar.stop();
      },
    };
  }
  let total = 0;
  let done = 0;
  let ranNow = 0;
  let last = 0;
  const started = Date.now();
  return {
    start(t, d) {
      total = t;
      done = d;
      stream.write(`${label}: ${d}/${t} tasks already done\n`);
    },
    tick() {
      done++;
      ranNow++;
      const now = Date.now();
      if (now - last > 10_000 || done === total) {
        last = now;
        const rate = (ranNow * 1000) / Math.max(1, now - started);
        stream.write(`${label}: ${done}/${total} tasks (${rate.toFixed(2)} tasks/s)\n`);
      }
    },
    stop() {},
  };
}
