import { onCallCommand } from '../../core/calls/control.ts';
import { isTerminal } from '../../core/calls/state-machine.ts';
import type { Coordinator, Unsubscribe } from '../../core/coord/types.ts';
import type { MediaHandler, MediaHandlerFactory, StreamContext, StreamEvent } from '../media-handler.ts';
import { callStatusEvent } from '../web/events.ts';
import { CallRun, type CallRunDeps } from './call-run.ts';

/**
 * Frames that arrive while the call is being answered (a few store round trips) wait here, the newest half
 * second of them: a browser waiting for its queued web call to go must not be answered with stale audio.
 */
const MAX_EARLY_FRAMES = 25;

/**
 * The gateway's handler for real calls: each authorized stream answers its call and runs the agent on it
 * (`CallRun`). Streams whose call cannot be answered (aborted, ended, unknown) are ended with `call_not_live`.
 * `listen` subscribes to call commands, so an abort accepted by any API node hangs up the stream here.
 */
export class CallStreams {
  private readonly runs = new Map<string, CallRun>();
  private unsubscribe: Unsubscribe | undefined;
  /** Set once the drain window is over: a call answered from now on is ended at once. */
  private endingAll = false;
  private idleWaiters: Array<() => void> = [];

  constructor(private readonly deps: CallRunDeps) {}

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
    if (this.runs.size > 0) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of waiters) resolve();
  }

  private handler(ctx: StreamContext): MediaHandler {
    let run: CallRun | undefined;
    let early: Int16Array[] | undefined = [];
    let stopped = false;
    return {
      onStart: async () => {
        run = await CallRun.begin(this.deps, ctx);
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
