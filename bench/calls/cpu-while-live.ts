import { type ProcessCpu, processCpu } from '../support/proc-stat.ts';

/**
 * CPU of a process over the stretches in which every placed call was live, from one poll to the next: the
 * window as a whole also holds ringing, the calls' ends and any long tail, which dilute a percent-of-core
 * figure. A stretch counts when the polls at both of its ends saw every call live.
 */
export class CpuWhileAllLive {
  private previous: { cpu: ProcessCpu; atMs: number; allLive: boolean };
  private cpuMs = 0;
  private wallMs = 0;

  constructor(private readonly pid: number) {
    this.previous = { cpu: processCpu(pid), atMs: performance.now(), allLive: false };
  }

  poll(live: number, placed: number): void {
    const now = { cpu: processCpu(this.pid), atMs: performance.now(), allLive: placed > 0 && live >= placed };
    if (now.allLive && this.previous.allLive) {
      this.cpuMs += now.cpu.ownMs - this.previous.cpu.ownMs;
      this.wallMs += now.atMs - this.previous.atMs;
    }
    this.previous = now;
  }

  /** Percent of one core over those stretches; NaN when there were none. */
  cpuPct(): number {
    return this.wallMs > 0 ? (100 * this.cpuMs) / this.wallMs : Number.NaN;
  }

  seconds(): number {
    return this.wallMs / 1000;
  }
}
