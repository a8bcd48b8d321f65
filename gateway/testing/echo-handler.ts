import type { MediaHandler, MediaHandlerFactory, StreamContext } from '../media-handler.ts';

/**
 * Sends every inbound frame straight back (the gateway's loopback: for tests, the benchmark and the demo
 * page). DTMF drives the output controls so a caller can see them work: `*` clears the carrier's buffer,
 * any other digit sends a mark named `dtmf-<digit>-<n>` after the audio echoed so far.
 */
export function echoHandler(ctx: StreamContext): MediaHandler {
  const { output } = ctx;
  let marks = 0;
  return {
    onAudio(frame) {
      output.sendAudio(frame);
    },
    onDtmf(digit) {
      if (digit === '*') output.clear();
      else output.sendMark(`dtmf-${digit}-${++marks}`);
    },
  };
}

export const echoHandlerFactory: MediaHandlerFactory = echoHandler;
