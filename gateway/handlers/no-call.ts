import type { MediaHandler, StreamContext } from '../handler.ts';

/**
 * For a gateway with no calls to attach streams to (calls are not live on this deployment yet): a stream with a
 * valid token is ended at once with a reason, never left open or answered with a stand-in voice.
 */
export function noCallHandler(ctx: StreamContext): MediaHandler {
  return {
    onStart() {
      ctx.logger.warn({ call_id: ctx.callId }, 'stream for a call this deployment cannot run; ending it');
      ctx.output.end('no_call');
    },
    onAudio() {},
  };
}
