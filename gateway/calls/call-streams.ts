import type { NodeAdmission } from '../../core/calls/capacity.ts';
import { onCallCommand } from '../../core/calls/control.ts';
import { isTerminal } from '../../core/calls/state-machine.ts';
import type { Coordinator, Unsubscribe } from '../../core/coord/types.ts';
import type { CallRecord } from '../../core/store/types.ts';
import type { MediaHandler, MediaHandlerFactory, StreamContext, StreamEvent } from '../media-handler.ts';
import { callStatusEvent } from '../web/events.ts';
import { CallRun, type CallRunDeps } from './call-run.ts';

/**
 * Frames that arrive while the call is being answered (a few store round trips) wait here, the newest half
 * second of them: a browser waiting for its queued web call to go must not be answered with stale audio.
 */
const MAX_EARLY_FRAMES = 25;

/** Why a stream was refused at a full node: the call's `error`, and the close frame's reason. */
export const AT_CAPACITY_REASON = 'gateway_at_capacity';
/**
 * How long a stream for a full node waits for one of its calls to finish before it is refused: a call that ended
 * elsewhere (an abort, a hang-up) winds down here for a moment after the dialers already see its room.
 */
const ROOM_WAIT_MS = 2_000;
/** The `ended_reason` of a call refused by a full node. */
export const AT_CAPACITY_ENDED_REASON = 'gateway-at-capacity';

/**
 * The gateway's handler for real calls: each authorized stream answers its call and runs the agent on it
 * (`CallRun`). Streams whose call cannot be answered (aborted, ended, unknown) are ended with `call_not_live`.
 * `listen` subscribes to call commands, so an abort accepted by any API node hangs up the stream here.
 *
 * With an admission limit (`core/calls/capacity.ts`), a stream that would take the node past it (judged when its
 * call is about to be answered, after waiting up to `ROOM_WAIT_MS` for a call here to finish) is refused: the
 * call ends `failed` with `gateway-at-capacity`, free, and the stream is closed with `gateway_at_capacity` (the
 * caller's line goes quiet and hangs up; a browser is sent the call's ended status first). Dialers see the fleet's capacity and hold calls before this happens; this is the
 * guard for what reaches a full node anyway (an incoming call, a balancer's uneven spread).
 */
export class CallStreams {
  private readonly runs = new Map<string, CallRun>();
  /** Streams admitted here whose call is still being answered: they count against the limit already. */
  private starting = 0;
  private refusedCount = 0;
  private unsubscribe: Unsubscribe | undefined;
  /** Set once the drain window is over: a call answered from now on is ended at once. */
  private endingAll = false;
  private idleWaiters: Array<() => void> = [];
  /** Streams waiting for a call on this node to finish, told at each one that does. */
  private roomWaiters = new Set<() => void>();

  constructor(
    private readonly deps: CallRunDeps,
    private readonly admission?: NodeAdmission,
  ) {}

  readonly handlerFactory: MediaHandlerFactory = (ctx) => this.handler(ctx);

  async listen(coord: Coordinator): Promise<void> {
    this.unsubscribe = await onCallCommand(coord, (command) => {
      const run = this.runs.get(command.callId);
      if (!run || run.call.workspaceId !== command.workspaceId) return;
      if (command.type === 'hangup') run.hangUp();
      else run.control(command.control);
    });
  }

  async close(): Promise<void> {
    await this.unsubscribe?.();
  }

  /** The `call.status` event of an ended call (for its browser); undefined while the call can still go on. */
  readonly endedCallEvent = async (callId: string): Promise<StreamEvent | undefined> => {
    const call = await this.deps.store.calls.findById(callId);
    return call && isTerminal(call.status) ? callStatusEvent(call) : undefined;
  };

  /** Calls running on this node now (until each is settled). */
  get live(): number {
    return this.runs.size;
  }

  /** Streams refused because the node was at its limit, since start. */
  get refused(): number {
    return this.refusedCount;
  }

  /** How many calls this node can carry now, its own included (what it publishes to the fleet). */
  capacity(): number {
    return this.admission?.capacity(this.runs.size + this.starting) ?? Number.MAX_SAFE_INTEGER;
  }

  /** Resolves once no call runs on this node (at once when none does). */
  idle(): Promise<void> {
    if (this.runs.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /**
   * Shutdown past the drain window: ends every call still running here as `node-shutdown` and resolves once
   * each is settled. Returns how many it ended.
   */
  async endAll(): Promise<number> {
    this.endingAll = true;
    const results = await Promise.allSettled([...this.runs.values()].map((run) => run.shutDown()));
    return results.filter((result) => result.status === 'fulfilled' && result.value).length;
  }

  private removed(callId: string, run: CallRun): void {
    if (this.runs.get(callId) !== run) return;
    this.runs.delete(callId);
    for (const wake of [...this.roomWaiters]) wake();
    if (this.runs.size > 0) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of waiters) resolve();
  }

  /** Resolves when a call on this node finishes, or after `ms`. */
  private roomFreed(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const wake = (): void => {
        clearTimeout(timer);
        this.roomWaiters.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      this.roomWaiters.add(wake);
    });
  }

  /** Ends the call of a stream this node has no room for (`failed`, free) instead of answering it. */
  private async refuse(ctx: StreamContext, call: CallRecord, refusal: string): Promise<void> {
    this.refusedCount++;
    ctx.logger.warn(
      { refusal, live: this.runs.size + this.starting },
      'gateway at its call limit: stream refused',
    );
    await this.deps.lifecycle.settle(call.workspaceId, call.id, 'pipeline_error', {
      endedReason: AT_CAPACITY_ENDED_REASON,
      error: `the media gateway node was at its call limit (${refusal})`,
    });
  }

  private handler(ctx: StreamContext): MediaHandler {
    let run: CallRun | undefined;
    let early: Int16Array[] | undefined = [];
    let stopped = false;
    return {
      onStart: async () => {
        // Judged when the call is about to be answered: a browser may wait here while its web call is queued.
        let counted = false;
        let refusal: string | undefined;
        const mayAnswer = async (call: CallRecord): Promise<boolean> => {
          // A call that ended in the store may still be winding down here (its hang-up, its recording): the
          // dialer, seeing room, can send the next one a moment before it is gone. So wait for it a little.
          const deadline = performance.now() + ROOM_WAIT_MS;
          for (;;) {
            refusal = this.admission?.refusal(this.runs.size + this.starting);
            if (refusal === undefined) {
              this.starting++;
              counted = true;
              return true;
            }
            const left = deadline - performance.now();
            if (left <= 0 || ctx.signal.aborted) break;
            await this.roomFreed(left);
          }
          await this.refuse(ctx, call, refusal);
          return false;
        };
        try {
          run = await CallRun.begin(this.deps, ctx, mayAnswer);
        } finally {
          if (counted) this.starting--;
        }
        if (refusal !== undefined) {
          early = undefined;
          const ended = await this.endedCallEvent(ctx.callId);
          if (ended) ctx.output.sendEvent?.(ended);
          ctx.output.end(AT_CAPACITY_REASON);
          return;
        }
        if (!run) {
          // A browser opening an ended call's page is told how it ended.
          const ended = await this.endedCallEvent(ctx.callId);
          if (ended) ctx.output.sendEvent?.(ended);
          ctx.output.end('call_not_live');
          return;
        }
        this.runs.set(ctx.callId, run);
        const current = run;
        void current.ended().then(() => this.removed(ctx.callId, current));
        for (const frame of early ?? []) current.session.audio(frame);
        early = undefined;
        if (stopped) current.session.stopped();
        else if (this.endingAll) void current.shutDown();
      },
      onAudio: (frame) => {
        if (run) run.session.audio(frame);
        else if (early) {
          early.push(frame);
          if (early.length > MAX_EARLY_FRAMES) early.shift();
        }
      },
      onPlaybackAck: (ack) => run?.session.playbackAck(ack.name, ack.dropped),
      onStop: () => {
        stopped = true;
        run?.session.stopped();
      },
    };
  }
}
