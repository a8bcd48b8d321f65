import type { us_listen_socket, WebSocket } from 'uWebSockets.js';
import { DEFAULT_GATEWAY_LIMITS } from '../limits.ts';
import { loadUws } from '../uws.ts';

/**
 * The transport floor of the gateway benchmark: a bare uWebSockets.js server with the gateway's socket settings
 * that answers every Twilio media message with one prebuilt Twilio media message of the size the gateway sends
 * (20 ms of mu-law, base64, inside the same JSON). No JSON parse, no base64, no G.711, no resampling, no
 * session: what moving the frames costs on this host, which the gateway's own cost is measured against.
 * Not for production.
 */

/** `{"event":"` is 10 bytes: the 11th tells `media` from `start`, `stop`, `mark` (all but media are ignored). */
const EVENT_INITIAL_AT = 10;
const MEDIA_INITIAL = 'm'.charCodeAt(0);

export interface UwsFloor {
  readonly port: number;
  readonly streams: number;
  /** Media messages answered since the server started. */
  readonly replies: number;
  close(): Promise<void>;
}

export function twilioMediaReply(streamSid: string): string {
  const payload = Buffer.alloc(160, 0xff).toString('base64');
  return `{"event":"media","streamSid":${JSON.stringify(streamSid)},"media":{"payload":"${payload}"}}`;
}

export async function startUwsFloor(options: {
  host: string;
  port: number;
  streamSid: string;
}): Promise<UwsFloor> {
  const { uws } = loadUws();
  const reply = twilioMediaReply(options.streamSid);
  const route = DEFAULT_GATEWAY_LIMITS.routes.twilio;
  const sockets = new Set<WebSocket<unknown>>();
  let replies = 0;
  const app = uws.App().ws('/media/twilio', {
    compression: uws.DISABLED,
    maxPayloadLength: route.maxPayloadLength,
    idleTimeout: route.idleTimeoutS,
    maxBackpressure: DEFAULT_GATEWAY_LIMITS.maxBackpressureBytes,
    sendPingsAutomatically: false,
    open: (ws) => {
      sockets.add(ws);
    },
    message: (ws, message) => {
      if (message.byteLength <= EVENT_INITIAL_AT) return;
      if (new Uint8Array(message)[EVENT_INITIAL_AT] !== MEDIA_INITIAL) return;
      ws.send(reply, false, false);
      replies++;
    },
    close: (ws) => {
      sockets.delete(ws);
    },
  });
  const listenSocket = await new Promise<us_listen_socket>((resolve, reject) => {
    app.listen(options.host, options.port, (socket) => {
      if (socket) resolve(socket);
      else reject(new Error(`transport floor could not listen on ${options.host}:${options.port}`));
    });
  });
  return {
    port: uws.us_socket_local_port(listenSocket),
    get streams() {
      return sockets.size;
    },
    get replies() {
      return replies;
    },
    close: async () => {
      uws.us_listen_socket_close(listenSocket);
      for (const ws of [...sockets]) ws.close();
      sockets.clear();
    },
  };
}
