import type { Logger } from 'pino';
import WebSocket, { type RawData } from 'ws';
import { asObject, asString, field } from '../wire.ts';
import { FrameClock } from './frame-clock.ts';
import { AgentPlayback, type PlayedFrame } from './playback.ts';

/**
 * The carrier's side of one Twilio Media Stream, as a WebSocket client of the gateway: `connected` and `start`
 * (mu-law 8 kHz mono, the stream token in `customParameters`), then a `media` message every 20 ms of wall-clock
 * time with the callee's audio. Agent audio coming back is played as Twilio plays it (playback.ts): marks are
 * echoed once their audio has played, `clear` drops the queue and echoes pending marks. `stop` ends the stream
 * from the callee's side.
 *
 * The callee (`MediaStreamParty`) is asked for its next frame on every tick and told what it heard; it never
 * touches the socket. Nothing here throws to the event loop: socket errors are logged and end the stream.
 */

const FRAME_MS = 20;
/** After `stop`, a gateway that does not close the socket within this time gets it cut. */
const CLOSE_GRACE_MS = 2000;

export interface StreamIdentity {
  /** `ws://host:port/media/twilio` of the gateway. */
  readonly url: string;
  readonly accountSid: string;
  /** Twilio's call id: the carrier call id. */
  readonly callSid: string;
  readonly streamSid: string;
  readonly token: string;
}

export interface StreamClosed {
  /** Whether the socket ever opened (false: the gateway could not be reached). */
  readonly opened: boolean;
  readonly code: number;
  readonly reason: string;
}

export interface MediaStreamParty {
  /** The callee's next 20 ms, mu-law 8 kHz (160 bytes). `streamMs`: time since the stream started. */
  nextFrame(streamMs: number): Uint8Array;
  /** The 20 ms of agent audio that just played to the callee (silence when none was queued). */
  heard(frame: PlayedFrame, streamMs: number): void;
  /** The socket closed, whoever closed it. Called once. */
  closed(end: StreamClosed): void;
}

export class TwilioMediaStream {
  private readonly ws: WebSocket;
  private readonly clock = new FrameClock(FRAME_MS, (index) => this.tick(index));
  private readonly playback = new AgentPlayback();
  private sequenceNumber = 0;
  private chunk = 0;
  private opened = false;
  private stopping = false;
  private ended = false;
  private killTimer: NodeJS.Timeout | undefined;
  private readonly closedPromise: Promise<void>;
  private resolveClosed!: () => void;

  constructor(
    private readonly identity: StreamIdentity,
    private readonly party: MediaStreamParty,
    private readonly logger: Logger,
  ) {
    this.closedPromise = new Promise((resolve) => {
      this.resolveClosed = resolve;
    });
    this.ws = new WebSocket(identity.url, { perMessageDeflate: false });
    this.ws.on('open', () => this.onOpen());
    this.ws.on('message', (data: RawData, isBinary: boolean) => this.onMessage(data, isBinary));
    this.ws.on('error', (err: Error) => {
      // Abandoning a connection that is still opening reports an error too; that one is ours.
      if (this.stopping)
        this.logger.debug({ err: err.message }, 'sandbox media socket error while hanging up');
      else this.logger.warn({ err: err.message }, 'sandbox media socket error');
    });
    this.ws.on('close', (code: number, reason: Buffer) => this.onClose(code, reason.toString('utf8')));
  }

  /** Resolves once the socket has closed. */
  get closed(): Promise<void> {
    return this.closedPromise;
  }

  /** Hangs up: sends `stop` and closes the socket (or abandons a connection still opening). */
  stop(): Promise<void> {
    if (this.stopping || this.ended) return this.closedPromise;
    this.stopping = true;
    this.clock.stop();
    if (this.ws.readyState === WebSocket.OPEN) {
      this.send({
        event: 'stop',
        sequenceNumber: this.nextSequence(),
        streamSid: this.identity.streamSid,
        stop: { accountSid: this.identity.accountSid, callSid: this.identity.callSid },
      });
      this.ws.close(1000, 'stop');
      this.killTimer = setTimeout(() => this.ws.terminate(), CLOSE_GRACE_MS);
    } else {
      this.ws.terminate();
    }
    return this.closedPromise;
  }

  private onOpen(): void {
    if (this.stopping) return;
    this.opened = true;
    const { accountSid, callSid, streamSid, token } = this.identity;
    this.send({ event: 'connected', protocol: 'Call', version: '1.0.0' });
    this.send({
      event: 'start',
      sequenceNumber: this.nextSequence(),
      streamSid,
      start: {
        accountSid,
        streamSid,
        callSid,
        tracks: ['inbound'],
        customParameters: { token },
        mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 },
      },
    });
    this.clock.start();
  }

  private tick(index: number): void {
    if (this.stopping || this.ended) return;
    const streamMs = index * FRAME_MS;
    try {
      const played = this.playback.playFrame();
      for (const name of played.marks) this.echoMark(name);
      this.party.heard(played, streamMs);
      if (this.stopping) return;
      const frame = this.party.nextFrame(streamMs);
      this.chunk++;
      this.send({
        event: 'media',
        sequenceNumber: this.nextSequence(),
        streamSid: this.identity.streamSid,
        media: {
          track: 'inbound',
          chunk: String(this.chunk),
          timestamp: String(streamMs),
          payload: Buffer.from(frame.buffer, frame.byteOffset, frame.byteLength).toString('base64'),
        },
      });
    } catch (err) {
      this.logger.error({ err }, 'sandbox callee failed; hanging up');
      void this.stop();
    }
  }

  private onMessage(data: RawData, isBinary: boolean): void {
    if (isBinary || this.ended) return;
    let message: Record<string, unknown> | undefined;
    try {
      message = asObject(JSON.parse(data.toString()));
    } catch {
      message = undefined;
    }
    switch (message?.event) {
      case 'media': {
        const payload = asString(field(asObject(message.media), 'payload'));
        if (payload !== undefined) this.playback.enqueue(Buffer.from(payload, 'base64'));
        return;
      }
      case 'mark': {
        const name = asString(field(asObject(message.mark), 'name'));
        if (name !== undefined) this.playback.mark(name);
        return;
      }
      case 'clear':
        for (const name of this.playback.clear()) this.echoMark(name);
        return;
      default:
        this.logger.debug({ event: message?.event }, 'sandbox callee ignored a gateway message');
    }
  }

  private onClose(code: number, reason: string): void {
    if (this.ended) return;
    this.ended = true;
    this.clock.stop();
    clearTimeout(this.killTimer);
    try {
      this.party.closed({ opened: this.opened, code, reason });
    } catch (err) {
      this.logger.error({ err }, 'sandbox callee failed at the end of its stream');
    }
    this.resolveClosed();
  }

  private echoMark(name: string): void {
    this.send({
      event: 'mark',
      sequenceNumber: this.nextSequence(),
      streamSid: this.identity.streamSid,
      mark: { name },
    });
  }

  private nextSequence(): string {
    this.sequenceNumber++;
    return String(this.sequenceNumber);
  }

  private send(message: object): void {
    if (this.ws.readyState !== WebSocket.OPEN) return;
    this.ws.send(JSON.stringify(message), (err) => {
      if (err) this.logger.debug({ err: err.message }, 'sandbox media send failed');
    });
  }
}
