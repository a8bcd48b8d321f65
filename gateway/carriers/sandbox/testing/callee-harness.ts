import { type Logger, pino } from 'pino';
import type { RingOutcome, RingOutcomeSink } from '../../../../core/calls/carrier.ts';
import { testCallRecord } from '../../../../core/calls/testing/call-record.ts';
import type { CallRecord } from '../../../../core/store/types.ts';
import type { MediaHandler, MediaHandlerFactory, StreamContext } from '../../../media-handler.ts';
import { rms } from '../../../testing/audio.ts';

/** Test support for the sandbox carrier: an agent side that records each stream, a ring outcome log, calls. */

export interface HeardFrame {
  /** `performance.now()` when the gateway delivered it. */
  readonly at: number;
  readonly rms: number;
  readonly frame: Int16Array;
}

export interface AgentStream {
  readonly ctx: StreamContext;
  readonly startedAt: number;
  readonly frames: HeardFrame[];
  readonly acks: { at: number; name: string; dropped: boolean }[];
  stop: { at: number; reason: string; closeCode: number | undefined } | undefined;
}

/** What a test's agent does on a stream, besides the recording. */
export interface AgentBehaviour {
  onStart?(): void;
  onFrame?(frame: HeardFrame): void;
  onAck?(name: string, dropped: boolean): void;
}

export class AgentSide {
  /** By call id. */
  readonly streams = new Map<string, AgentStream>();
  behaviour: (stream: AgentStream) => AgentBehaviour = () => ({});

  readonly factory: MediaHandlerFactory = (ctx): MediaHandler => {
    const stream: AgentStream = { ctx, startedAt: 0, frames: [], acks: [], stop: undefined };
    let behaviour: AgentBehaviour = {};
    return {
      onStart: () => {
        (stream as { startedAt: number }).startedAt = performance.now();
        this.streams.set(ctx.callId, stream);
        behaviour = this.behaviour(stream);
        behaviour.onStart?.();
      },
      onAudio: (frame) => {
        const heard = { at: performance.now(), rms: rms(frame), frame };
        stream.frames.push(heard);
        behaviour.onFrame?.(heard);
      },
      onPlaybackAck: (ack) => {
        stream.acks.push({ at: performance.now(), ...ack });
        behaviour.onAck?.(ack.name, ack.dropped);
      },
      onStop: (end) => {
        stream.stop = { at: performance.now(), ...end };
      },
    };
  };

  started(callId: string, timeoutMs = 5000): Promise<AgentStream> {
    return until(() => this.streams.get(callId), timeoutMs, `stream of ${callId}`);
  }

  stopped(callId: string, timeoutMs = 5000): Promise<AgentStream> {
    return until(
      () => {
        const stream = this.streams.get(callId);
        return stream?.stop ? stream : undefined;
      },
      timeoutMs,
      `end of the stream of ${callId}`,
    );
  }
}

export interface Reported {
  readonly at: number;
  readonly workspaceId: string;
  readonly callId: string;
  readonly outcome: RingOutcome;
  readonly detail: string | undefined;
}

export class OutcomeLog {
  readonly reported: Reported[] = [];
  readonly sink: RingOutcomeSink = async (call, outcome, detail) => {
    this.reported.push({ at: performance.now(), ...call, outcome, detail });
  };

  of(callId: string): Reported[] {
    return this.reported.filter((r) => r.callId === callId);
  }

  reportOf(callId: string, timeoutMs = 5000): Promise<Reported> {
    return until(() => this.of(callId)[0], timeoutMs, `ring outcome of ${callId}`);
  }
}

/** Polls `probe` every 10 ms until it gives a value. */
export async function until<T>(probe: () => T | undefined, timeoutMs: number, what: string): Promise<T> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined && value !== false) return value;
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** A logger keeping its JSON lines. */
export function capturingLogger(): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  return { logger: pino({ level: 'debug' }, { write: (line: string) => void lines.push(line) }), lines };
}

export function callTo(id: string, toNumber: string): CallRecord {
  return testCallRecord({
    id,
    workspaceId: 'ws_sandbox_test',
    toNumber,
    fromNumber: '+919800000000',
    maxDurationSecs: 60,
    carrier: 'sandbox',
  });
}
