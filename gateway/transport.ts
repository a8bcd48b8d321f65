/**
 * The socket under one media stream, as the session sees it. The gateway implements it over uWebSockets.js
 * (server.ts); the benchmark implements it over `ws` to compare the two servers with the same session code.
 */

/** `sent`: written out; `buffered`: accepted but backpressure built up; `dropped`: refused (buffer limit). */
export type SendStatus = 'sent' | 'buffered' | 'dropped';

export interface StreamTransport {
  send(data: string | Uint8Array, binary: boolean): SendStatus;
  /** Bytes accepted but not yet written to the kernel. */
  bufferedAmount(): number;
  /** Runs `fn` with writes batched into one syscall (uWS `cork`); required for writes outside socket callbacks. */
  cork(fn: () => void): void;
  /** Closes with a code and a short reason; the session hears of it through its `closed` callback. */
  close(code: number, reason: string): void;
}
