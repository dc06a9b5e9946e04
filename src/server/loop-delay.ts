/**
 * How long the event loop was held up, sampled every 10 ms (so 10 ms is on time): every request
 * waits behind whatever holds the loop, so this is a server's own share of a client's tail
 * latency. Read by `/stats` (and by the bench's replay baseline, so both report the same figure).
 */
import { type IntervalHistogram, monitorEventLoopDelay } from 'node:perf_hooks';

export interface LoopDelayMs {
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
}

export class LoopDelay {
  private readonly histogram: IntervalHistogram = monitorEventLoopDelay({ resolution: 10 });

  constructor() {
    this.histogram.enable();
  }

  /**
   * The figures since the last reset, in ms; `reset` then starts a new window. (After a reset the
   * monitor's first tick only takes a timestamp: a stall that starts before it is not recorded.)
   */
  read(reset: boolean): LoopDelayMs {
    const ms = (ns: number) => Math.round(ns / 1e4) / 100;
    const h = this.histogram;
    const figures = { p50: ms(h.percentile(50)), p99: ms(h.percentile(99)), max: ms(h.max) };
    if (reset) h.reset();
    return figures;
  }

  stop(): void {
    this.histogram.disable();
  }
}
