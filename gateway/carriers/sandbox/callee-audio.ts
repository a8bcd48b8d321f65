import type { Logger } from 'pino';
import { CANONICAL_RATE, Framer, mulawEncode, Resampler } from '../../../codecs/index.ts';
import type { VoiceRouter } from '../../../engines/tts/index.ts';
import { FRAME_SAMPLES, MULAW_SILENCE } from './playback.ts';

/**
 * What simulated callees say, ready to stream: 20 ms frames of mu-law 8 kHz (160 bytes), Twilio's media format.
 * Lines are synthesized ahead of the call and kept, so the media path never waits for the TTS engine.
 */

export type CarrierFrames = readonly Uint8Array[];

const CARRIER_RATE = 8000;

export const SILENCE_FRAME: Uint8Array = new Uint8Array(FRAME_SAMPLES).fill(MULAW_SILENCE);

export function silenceFrames(durationMs: number): CarrierFrames {
  return Array.from({ length: Math.round(durationMs / 20) }, () => SILENCE_FRAME);
}

/** A steady sine tone, whole frames. */
export function toneFrames(tone: { frequencyHz: number; durationMs: number; level: number }): CarrierFrames {
  const samples = Math.round((tone.durationMs / 20) * FRAME_SAMPLES);
  const amplitude = 32767 * Math.min(1, Math.max(0, tone.level));
  const pcm = new Int16Array(samples);
  for (let i = 0; i < samples; i++) {
    pcm[i] = Math.round(amplitude * Math.sin((2 * Math.PI * tone.frequencyHz * i) / CARRIER_RATE));
  }
  const frames: Uint8Array[] = [];
  for (let at = 0; at < samples; at += FRAME_SAMPLES)
    frames.push(mulawEncode(pcm.subarray(at, at + FRAME_SAMPLES)));
  return frames;
}

/** TTS output (PCM16 16 kHz, any chunking) as carrier frames; the last one is completed with silence. */
export function toCarrierFrames(pcm16k: Iterable<Int16Array>): CarrierFrames {
  const resampler = new Resampler(CANONICAL_RATE, CARRIER_RATE);
  const framer = new Framer(FRAME_SAMPLES);
  const frames: Int16Array[] = [];
  for (const chunk of pcm16k) frames.push(...framer.push(resampler.process(chunk)));
  frames.push(...framer.push(resampler.flush()));
  const rest = framer.flush(true);
  if (rest) frames.push(rest);
  return frames.map((frame) => mulawEncode(frame));
}

/**
 * Lines synthesized once per voice and text, shared by every call. A line whose synthesis fails is kept as
 * empty (logged): the callee then says nothing rather than waiting forever.
 */
export class PreparedSpeech {
  private readonly ready = new Map<string, CarrierFrames>();
  private readonly pending = new Map<string, Promise<void>>();
  private readonly abort = new AbortController();

  constructor(
    private readonly voices: VoiceRouter,
    private readonly logger: Logger,
  ) {}

  /** Starts synthesizing the line unless it is ready or under way. */
  prepare(voiceId: string, text: string): void {
    const key = keyOf(voiceId, text);
    if (this.ready.has(key) || this.pending.has(key) || this.abort.signal.aborted) return;
    const made = this.synthesize(voiceId, text).then(
      (frames) => {
        this.ready.set(key, frames);
      },
      (err: unknown) => {
        if (!this.abort.signal.aborted)
          this.logger.warn({ err, voiceId, text }, 'sandbox line synthesis failed');
        this.ready.set(key, []);
      },
    );
    this.pending.set(key, made);
    void made.finally(() => this.pending.delete(key));
  }

  /** The line's frames once synthesized, undefined while they are being made (preparing them if needed). */
  frames(voiceId: string, text: string): CarrierFrames | undefined {
    const frames = this.ready.get(keyOf(voiceId, text));
    if (frames === undefined) this.prepare(voiceId, text);
    return frames;
  }

  /** Resolves once every line asked for so far is ready. */
  async settled(): Promise<void> {
    while (this.pending.size > 0) await Promise.all(this.pending.values());
  }

  /** Stops the syntheses under way. */
  close(): void {
    this.abort.abort();
  }

  private async synthesize(voiceId: string, text: string): Promise<CarrierFrames> {
    const chunks: Int16Array[] = [];
    for await (const chunk of this.voices.synthesize({ voiceId, text, signal: this.abort.signal }))
      chunks.push(chunk);
    return toCarrierFrames(chunks);
  }
}

function keyOf(voiceId: string, text: string): string {
  return `${voiceId}\n${text}`;
}
