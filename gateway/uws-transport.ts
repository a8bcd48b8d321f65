import type { WebSocket } from 'uWebSockets.js';
import type { SendStatus, StreamTransport } from './transport.ts';

/** uWS `send` results: 1 written, 0 written with backpressure building up, 2 dropped (over `maxBackpressure`). */
const SEND_STATUS: readonly SendStatus[] = ['buffered', 'sent', 'dropped'];

/**
 * A stream's socket over uWebSockets.js. A uWS WebSocket must not be touched after its close handler ran
 * (it throws), and timers and promises may still hold the session then: every method checks `closed` first.
 */
export class UwsTransport<UserData = unknown> implements StreamTransport {
  private closed = false;

  constructor(private readonly ws: WebSocket<UserData>) {}

  /** Called from the route's close handler. */
  markClosed(): void {
    this.closed = true;
  }

  send(data: string | Uint8Array, binary: boolean): SendStatus {
    if (this.closed) return 'dropped';
    return SEND_STATUS[this.ws.send(data, binary, false)] ?? 'dropped';
  }

  bufferedAmount(): number {
    return this.closed ? 0 : this.ws.getBufferedAmount();
  }

  cork(fn: () => void): void {
    if (this.closed) fn();
    else this.ws.cork(fn);
  }

  close(code: number, reason: string): void {
    if (this.closed) return;
    this.closed = true;
    this.ws.end(code, reason);
  }
}
