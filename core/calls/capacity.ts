import { monitorEventLoopDelay } from 'node:perf_hooks';

/**
 * How many calls one gateway node carries in real time, and whether it takes one more (docs/architecture.md,
 * "Admission on a gateway node").
 *
 * The limit is `GATEWAY_MAX_CALLS` when the operator sets it, else derived from the measured CPU cost of a live
 * call (`CALL_CPU_MS_PER_SECOND`, from `bench:calls`) and the cores this process can use: every call's media,
 * VAD, playout and engine clients run on the process's one JavaScript thread, so a process counts at most
 * `PROCESS_CORES` however many the machine has (run one gateway process per core pair to use more), and only
 * `CPU_HEADROOM` of it is planned for steady calls: the rest absorbs the bursts (many calls starting together,
 * replies streaming in, garbage collection) that would otherwise make every call on the node fall behind.
 *
 * Optionally (`GATEWAY_MAX_LOOP_LAG_MS`) the node also stops taking calls while its event loop runs late: a
 * second whose p99 event-loop delay passed that bound says the calls it has already use the thread up, whatever
 * the figure above assumed (a slower host, a noisy neighbour, heavier engines).
 */

/**
 * CPU of one live call on the gateway process, ms per second of call: Silero VAD, G.711 and resampling, the
 * pipeline, playout and the engines' clients. The performance budget ("at least 100 live calls per core with
 * remote engines", docs/architecture.md) caps it at 10; `bench:calls` prints the measured figure
 * (`measured CPU ... ms per call-second` while all calls were live): set `GATEWAY_MAX_CALLS` from it on your
 * hosts. On a two-core host with fake remote engines it measured 8.7-9.1 ms with the gateway process on its own,
 * and 9.8-10.2 ms with the simulated callees in the same process.
 */
export const CALL_CPU_MS_PER_SECOND = 10;
/** Share of the process's CPU planned for steady calls (see above). */
export const CPU_HEADROOM = 0.7;
/**
 * Cores one gateway process can use: its JavaScript thread, plus the share of a second core its native threads
 * (garbage collection, onnxruntime, socket I/O) take off it. Measured with `bench:calls` (300 calls placed at
 * once on two cores, the gateway process on its own): at 105 admitted calls (1.5 cores) the process ran at
 * 0.92-1.02 cores and the calls' voice to voice p95 - p50 went to 406-650 ms; at 84 (1.2), 0.83-0.85 cores and
 * 140-379 ms. The thread, not the machine, is what runs out.
 */
export const PROCESS_CORES = 1.2;

/** The default admission limit of a gateway process on a machine with `cores` cores. */
export function defaultMaxCalls(cores: number, cpuMsPerCallSecond: number = CALL_CPU_MS_PER_SECOND): number {
  if (!(cores > 0) || !(cpuMsPerCallSecond > 0)) throw new RangeError('cores and the CPU cost must be > 0');
  const usable = Math.min(cores, PROCESS_CORES);
  return Math.max(1, Math.floor((usable * 1000 * CPU_HEADROOM) / cpuMsPerCallSecond));
}

/** The event loop's recent lateness, ms (the p99 of the last completed window). */
export interface LoopLag {
  lagMs(): number;
}

export interface NodeAdmissionOptions {
  /** Calls this node carries at most. */
  maxCalls: number;
  /** Refuse new calls while the loop lag is above this, ms; 0 or undefined: no lag guard. */
  maxLoopLagMs?: number;
  /** Required with `maxLoopLagMs`. */
  lag?: LoopLag;
}

/** Why a call was not admitted, for logs and the call's `error`. */
export type Refusal = 'max_calls' | 'loop_lag';

/**
 * A gateway node's admission decision: pure given the live count and the lag reading, so the same rule answers
 * "may this stream start here?" and "how many calls may the fleet's dialers send here in all?".
 */
export class NodeAdmission {
  readonly maxCalls: number;
  private readonly maxLoopLagMs: number;
  private readonly lag: LoopLag | undefined;

  constructor(options: NodeAdmissionOptions) {
    if (!Number.isSafeInteger(options.maxCalls) || options.maxCalls < 1) {
      throw new RangeError('maxCalls must be an integer >= 1');
    }
    this.maxCalls = options.maxCalls;
    this.maxLoopLagMs = options.maxLoopLagMs ?? 0;
    this.lag = options.lag;
    if (this.maxLoopLagMs > 0 && !this.lag) throw new RangeError('a loop lag bound needs a lag reading');
  }

  /** Why a call beyond the `live` ones (running or starting here) may not start; undefined when it may. */
  refusal(live: number): Refusal | undefined {
    if (live >= this.maxCalls) return 'max_calls';
    if (this.overloaded()) return 'loop_lag';
    return undefined;
  }

  /** How many calls this node can carry now, its `live` ones included: no more than it has while overloaded. */
  capacity(live: number): number {
    return this.overloaded() ? Math.min(live, this.maxCalls) : this.maxCalls;
  }

  private overloaded(): boolean {
    return this.maxLoopLagMs > 0 && this.lag !== undefined && this.lag.lagMs() > this.maxLoopLagMs;
  }
}

/** How often the loop lag reading moves on to a new window. */
const LAG_WINDOW_MS = 1_000;
const LAG_RESOLUTION_MS = 10;

/** The event loop's p99 delay over the last second, from Node's own histogram; `stop` ends the sampling. */
export class EventLoopLag implements LoopLag {
  private readonly histogram = monitorEventLoopDelay({ resolution: LAG_RESOLUTION_MS });
  private readonly timer: NodeJS.Timeout;
  private last = 0;

  constructor(windowMs: number = LAG_WINDOW_MS) {
    this.histogram.enable();
    this.timer = setInterval(() => {
      // The histogram holds each sampling timer's whole delay: its own interval plus the lateness.
      const p99Ms = this.histogram.count > 0 ? this.histogram.percentile(99) / 1e6 : 0;
      this.last = Math.max(0, p99Ms - LAG_RESOLUTION_MS);
      this.histogram.reset();
    }, windowMs);
    this.timer.unref();
  }

  lagMs(): number {
    return this.last;
  }

  stop(): void {
    clearInterval(this.timer);
    this.histogram.disable();
  }
}
