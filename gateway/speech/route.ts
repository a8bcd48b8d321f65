import type { WebSocketBehavior } from 'uWebSockets.js';
import type { Logger } from 'pino';
import type { UwsModule } from '../uws.ts';
import { UwsTransport } from '../uws-transport.ts';
import { ERROR_CLOSE } from './protocol.ts';
import type { Admission, LiveTranscriptionService } from './service.ts';
import type { LiveTranscriptionSession } from './session.ts';

/** Per-socket data of a live transcription socket, filled in `upgrade`. */
export interface LiveSttSocket {
  readonly admission: Admission;
  session: LiveTranscriptionSession | undefined;
  transport: UwsTransport | undefined;
}

/** Largest client frame: 2 s of 16 kHz PCM16 in base64 inside JSON is about 86 KB. */
const MAX_PAYLOAD_BYTES = 128 * 1024;
/** uWS closes a socket silent both ways this long; the session's own silence timeout is shorter. */
const IDLE_TIMEOUT_S = 120;

/**
 * The live speech-to-text WebSocket route. Admission (settings, key or token, language, wallet, slots) runs
 * before the upgrade completes, so a refused client still gets a WebSocket: one `error` event with the code,
 * then a close with that code's close code (a browser cannot read a refused upgrade's body).
 */
export function liveTranscriptionRoute(
  uws: UwsModule,
  service: LiveTranscriptionService,
  isClosing: () => boolean,
  log: Logger,
): WebSocketBehavior<LiveSttSocket> {
  const guard = (where: string, fn: () => void): void => {
    try {
      fn();
    } catch (err) {
      log.error({ err, where }, 'live transcription callback failed');
    }
  };
  return {
    compression: uws.DISABLED,
    maxPayloadLength: MAX_PAYLOAD_BYTES,
    idleTimeout: IDLE_TIMEOUT_S,
    maxBackpressure: 1024 * 1024,
    upgrade: (res, req, context) => {
      const key = req.getHeader('sec-websocket-key');
      const protocol = req.getHeader('sec-websocket-protocol');
      const extensions = req.getHeader('sec-websocket-extensions');
      const authorization = req.getHeader('authorization');
      const params = new URLSearchParams(req.getQuery() ?? '');
      const token = params.get('token') ?? undefined;
      params.delete('token');
      if (isClosing()) {
        res.writeStatus('503 Service Unavailable').end();
        return;
      }
      let aborted = false;
      res.onAborted(() => {
        aborted = true;
      });
      service
        .admit({ authorization, token, query: params.toString() })
        .catch((err: unknown): Admission => {
          log.error({ err }, 'live transcription admission failed');
          return { ok: false, code: 'internal', message: 'the session could not be admitted; retry' };
        })
        .then((admission) => {
          if (aborted) {
            if (admission.ok) service.abandon(admission.session).catch(() => {});
            return;
          }
          const data: LiveSttSocket = { admission, session: undefined, transport: undefined };
          res.cork(() => res.upgrade(data, key, protocol, extensions, context));
        });
    },
    open: (ws) =>
      guard('open', () => {
        const data = ws.getUserData();
        const transport = new UwsTransport(ws);
        data.transport = transport;
        const admission = data.admission;
        if (!admission.ok) {
          transport.send(
            JSON.stringify({ event: 'error', code: admission.code, message: admission.message }),
            false,
          );
          transport.close(ERROR_CLOSE[admission.code], admission.code);
          return;
        }
        data.session = service.start(admission.session, transport);
      }),
    // The message's memory is uWS's only during this call: binary audio is copied before it is kept.
    message: (ws, message, isBinary) =>
      guard('message', () => ws.getUserData().session?.receive(new Uint8Array(message.slice(0)), isBinary)),
    close: (ws) =>
      guard('close', () => {
        const data = ws.getUserData();
        data.transport?.markClosed();
        data.session?.closed();
      }),
  };
}
