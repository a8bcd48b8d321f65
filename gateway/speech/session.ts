import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { LiveTranscriptionCharge } from '../../core/speech/live-billing.ts';
import type { UtteranceFinal, UtteranceListener, Utterances } from '../../pipeline/speech/utterances.ts';
import { InboundAudio, MAX_MESSAGE_AUDIO_MS } from '../carriers/audio-edges.ts';
import type { StreamTransport } from '../transport.ts';
import {
  type ClientFrame,
  ERROR_CLOSE,
  type ErrorEventCode,
  type LiveSttSettings,
  readClientFrame,
  type ServerEvent,
} from './protocol.ts';

export interface LiveSttLimits {
  /** Longest session, wall time. */
  readonly maxSessionMs: number;
  /** A session that receives no audio for this long ends. */
  readonly silenceTimeoutMs: number;
  /** Malformed or out-of-order frames tolerated before the session ends. */
  readonly maxBadFrames: number;
  /** Open sessions per workspace, across every gateway node. */
  readonly sessionsPerWorkspace: number;
  /** A session's slot lease in the coordinator (renewed every third): a dead node's sessions free theirs. */
  readonly slotLeaseMs: number;
}

export const DEFAULT_LIVE_STT_LIMITS: LiveSttLimits = {
  maxSessionMs: 60 * 60_000,
  silenceTimeoutMs: 60_000,
  maxBadFrames: 10,
  sessionsPerWorkspace: 20,
  slotLeaseMs: 60_000,
};

/** What admission established about a session before its socket opened. */
export interface AdmittedSession {
  readonly sessionId: string;
  readonly workspaceId: string;
  readonly settings: LiveSttSettings;
  readonly engine: string;
}

export interface SessionServices {
  readonly utterances: (listener: UtteranceListener) => Utterances;
  readonly settle: (audioMs: number) => Promise<LiveTranscriptionCharge>;
  /** Keeps the session's slot in the coordinator; called every third of the lease. */
  readonly renewSlot: () => Promise<void>;
  readonly releaseSlot: () => Promise<void>;
}

type Phase = 'open' | 'ending' | 'ended';

/** How long an ending session waits for the engine's last words before it ends without them. */
const FINISH_WAIT_MS = 10_000;

/**
 * One live speech-to-text session over an open socket: reads the client's frames, decodes and frames the audio,
 * hands it to the utterances (manual or auto), and writes the events. It ends once: on `end`, on a limit, on a
 * fatal error, or when the socket goes; every ending debits the audio taken, once, and frees the slot.
 */
export class LiveTranscriptionSession {
  private readonly inbound: InboundAudio;
  private readonly utterances: Utterances;
  private phase: Phase = 'open';
  /** Session time: ms of audio received. */
  private audioMs = 0;
  /** Ms of audio taken for transcription: what is billed. */
  private takenMs = 0;
  private badFrames = 0;
  private silenceTimer: NodeJS.Timeout | undefined;
  private readonly maxTimer: NodeJS.Timeout;
  private readonly slotTimer: NodeJS.Timeout;
  private settlement: Promise<LiveTranscriptionCharge | undefined> | undefined;

  constructor(
    readonly admitted: AdmittedSession,
    private readonly transport: StreamTransport,
    private readonly services: SessionServices,
    private readonly limits: LiveSttLimits,
    private readonly log: Logger,
    private readonly onEnd: (session: LiveTranscriptionSession) => void,
  ) {
    this.inbound = new InboundAudio({
      encoding: admitted.settings.encoding,
      sampleRate: admitted.settings.sampleRate,
      channels: 1,
    });
    this.utterances = services.utterances({
      partial: (utterance, text) => this.send({ event: 'transcript.partial', utterance, text }),
      final: (result) => this.sendFinal(result),
      lost: (error) => {
        this.log.warn({ err: error, session_id: admitted.sessionId }, 'live transcription lost its engine');
        void this.end('transcription_failed', 'internal', 'the speech engine failed; the session ends');
      },
    });
    this.maxTimer = setTimeout(
      () => void this.end('max_duration', 'max_duration', 'the session reached its longest duration'),
      limits.maxSessionMs,
    );
    this.slotTimer = setInterval(
      () => {
        services.renewSlot().catch(() => {});
      },
      Math.max(1000, Math.floor(limits.slotLeaseMs / 3)),
    );
    this.slotTimer.unref();
    this.armSilence();
  }

  begin(): void {
    const { settings, sessionId, engine } = this.admitted;
    this.send({
      event: 'session.begin',
      session_id: sessionId,
      language_code: settings.language,
      encoding: settings.encoding,
      sample_rate: settings.sampleRate,
      endpointing: settings.endpointing,
      engine,
      limits: {
        max_session_secs: Math.round(this.limits.maxSessionMs / 1000),
        silence_timeout_secs: Math.round(this.limits.silenceTimeoutMs / 1000),
      },
      price: {
        per_hour_inr: 18,
        billing: 'audio seconds taken, per started second, total rounded up to a paisa',
      },
    });
  }

  receive(data: Uint8Array, binary: boolean): void {
    if (this.phase !== 'open') return;
    this.handle(readClientFrame(data, binary));
  }

  /** The socket closed (the peer left, or we closed it). */
  closed(): void {
    if (this.phase === 'ended') return;
    this.phase = 'ended';
    this.utterances.close();
    void this.finishUp();
  }

  /** The gateway shuts down; resolves once the session is billed. */
  async shutdown(): Promise<void> {
    await this.end('going_away', 'service_unavailable', 'the gateway is shutting down; reconnect');
    await this.settlement;
  }

  private handle(frame: ClientFrame): void {
    const manual = this.admitted.settings.endpointing === 'manual';
    switch (frame.type) {
      case 'bad':
        this.bad(frame.message);
        return;
      case 'speech_start':
        if (manual && !this.utterances.start(this.audioMs))
          this.bad('speech_start: an utterance is already open; send speech_end first');
        return;
      case 'speech_end':
        if (manual && !this.utterances.stop(this.audioMs)) this.bad('speech_end: no utterance is open');
        return;
      case 'end':
        void this.end('end');
        return;
      case 'audio':
        this.audio(frame.bytes);
        return;
    }
  }

  private audio(bytes: Uint8Array): void {
    const samples = this.inbound.samplesIn(bytes.byteLength);
    const durationMs = (samples * 1000) / this.admitted.settings.sampleRate;
    if (durationMs > MAX_MESSAGE_AUDIO_MS) {
      this.bad(`audio: one frame may carry at most ${MAX_MESSAGE_AUDIO_MS} ms of audio`);
      return;
    }
    const frames = this.inbound.decode(bytes);
    if (!frames) {
      this.bad('audio: pcm16 audio must be whole 16-bit samples (an even number of bytes)');
      return;
    }
    this.armSilence();
    for (const frame of frames) {
      this.audioMs += 20;
      if (this.utterances.audio(frame, this.audioMs)) this.takenMs += 20;
    }
  }

  private bad(message: string): void {
    this.badFrames++;
    if (this.badFrames > this.limits.maxBadFrames) {
      void this.end(
        'too_many_bad_frames',
        'too_many_bad_frames',
        `more than ${this.limits.maxBadFrames} bad frames`,
      );
      return;
    }
    this.send({ event: 'error', code: 'invalid_frame', message });
  }

  private armSilence(): void {
    if (this.silenceTimer) clearTimeout(this.silenceTimer);
    this.silenceTimer = setTimeout(
      () => void this.end('silence_timeout', 'silence_timeout', 'no audio arrived for too long'),
      this.limits.silenceTimeoutMs,
    );
  }

  /**
   * Ends the session: the open utterance's final, then the error (if any), then `session.end` with the charge,
   * then the close.
   */
  private async end(reason: string, code?: ErrorEventCode, message?: string): Promise<void> {
    if (this.phase !== 'open') return;
    this.phase = 'ending';
    this.stopTimers();
    // An engine that never finishes must not hold the session (and its bill) open.
    const finished = this.utterances.finish(this.audioMs).then(
      () => true,
      (error: unknown) => {
        this.log.warn(
          { err: error, session_id: this.admitted.sessionId },
          'live transcription finish failed',
        );
        return true;
      },
    );
    const gaveUp = sleep(FINISH_WAIT_MS, false, { ref: false });
    if (!(await Promise.race([finished, gaveUp])))
      this.log.warn({ session_id: this.admitted.sessionId }, 'the speech engine did not finish in time');
    if (code && message) this.send({ event: 'error', code, message });
    const charge = await this.finishUp();
    if (this.phase === 'ending') {
      this.send({
        event: 'session.end',
        session_id: this.admitted.sessionId,
        reason,
        audio_seconds_billed: charge?.audioSecondsBilled ?? 0,
        cost_paise: charge?.costPaise ?? 0,
      });
      this.phase = 'ended';
      this.transport.close(code ? ERROR_CLOSE[code] : 1000, reason);
    }
  }

  /** Bills the audio taken and frees the slot, once, however the session ended. */
  private finishUp(): Promise<LiveTranscriptionCharge | undefined> {
    this.settlement ??= this.settleOnce();
    return this.settlement;
  }

  private async settleOnce(): Promise<LiveTranscriptionCharge | undefined> {
    this.stopTimers();
    this.utterances.close();
    try {
      return await this.services.settle(this.takenMs);
    } catch (error) {
      this.log.error({ err: error, session_id: this.admitted.sessionId }, 'live transcription charge failed');
      return undefined;
    } finally {
      this.services.releaseSlot().catch(() => {});
      this.onEnd(this);
    }
  }

  private stopTimers(): void {
    if (this.silenceTimer) clearTimeout(this.silenceTimer);
    clearTimeout(this.maxTimer);
    clearInterval(this.slotTimer);
  }

  private sendFinal(result: UtteranceFinal): void {
    this.send({
      event: 'transcript.final',
      utterance: result.utterance,
      text: result.text,
      words: result.words,
      language: result.language,
      start_ms: Math.round(result.startMs),
      end_ms: Math.round(result.endMs),
    });
  }

  private send(event: ServerEvent): void {
    if (this.phase === 'ended') return;
    this.transport.cork(() => this.transport.send(JSON.stringify(event), false));
  }
}
