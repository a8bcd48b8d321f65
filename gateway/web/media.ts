import { OpusCodec } from '../../codecs/index.ts';
import {
  audioMs,
  encoderFor,
  InboundAudio,
  isSupportedRate,
  MAX_MESSAGE_AUDIO_MS,
  OutboundAudio,
} from '../carriers/audio-edges.ts';
import type {
  AdapterContext,
  AudioEncoding,
  CarrierEvent,
  CarrierEventSink,
  CarrierMedia,
  MediaFormat,
  WireMessage,
} from '../carriers/types.ts';
import { asNumber, asString, control, type JsonObject, parseJsonObject } from '../carriers/wire.ts';
import type { StreamEvent } from '../media-handler.ts';

/**
 * The browser web-call protocol at `/web/{call_id}?token=...`; `PROTOCOL.md` beside this file is its
 * specification. Binary frames are audio (PCM16 little-endian at the hello's rate, 16 kHz by default, or one
 * Opus packet per frame); text frames are JSON control messages with a `type`. Audio before any hello is taken
 * as PCM16 16 kHz.
 */

const OPUS_RATES: readonly number[] = [16000, 48000];

export class WebMedia implements CarrierMedia {
  readonly carrier = 'web' as const;
  readonly pacedOutput = false;
  private inbound: InboundAudio | undefined;
  private outbound: OutboundAudio | undefined;
  private opus: OpusCodec | undefined;

  constructor(private readonly ctx: AdapterContext) {}

  parse(data: Uint8Array, isBinary: boolean, emit: CarrierEventSink): void {
    // Audio before any hello starts the stream as PCM16 16 kHz: the start, then this audio.
    if (isBinary && !this.inbound) emit(this.begin('pcm16', 16000));
    emit(isBinary ? this.parseAudio(data) : this.read(data));
  }

  private read(data: Uint8Array): CarrierEvent {
    const msg = parseJsonObject(data);
    if (!msg) return { type: 'bad', reason: 'malformed' };
    switch (msg.type) {
      case 'hello':
        return this.parseHello(msg);
      case 'ack': {
        const name = asString(msg.name);
        if (name === undefined) return { type: 'bad', reason: 'bad_payload' };
        return { type: 'playback_ack', name };
      }
      case 'cleared':
        return { type: 'cleared' };
      case 'dtmf': {
        const digit = asString(msg.digit);
        if (!digit || digit.length > 1) return { type: 'bad', reason: 'bad_payload' };
        return { type: 'dtmf', digit, durationMs: asNumber(msg.duration_ms) };
      }
      case 'bye':
        return { type: 'stop', reason: asString(msg.reason) ?? 'bye' };
      case 'ping':
        return { type: 'ignored' };
      default:
        return { type: 'bad', reason: 'unknown_event' };
    }
  }

  private parseHello(msg: JsonObject): CarrierEvent {
    if (this.inbound) return { type: 'bad', reason: 'unknown_event' };
    const codec = asString(msg.codec) ?? 'pcm16';
    const rate = asNumber(msg.sample_rate) ?? 16000;
    if (codec === 'opus' ? !OPUS_RATES.includes(rate) : codec !== 'pcm16' || !isSupportedRate(rate)) {
      return { type: 'unsupported_format', detail: `${codec} ${rate} Hz` };
    }
    return this.begin(codec === 'opus' ? 'opus' : 'pcm16', rate);
  }

  private begin(encoding: AudioEncoding, sampleRate: number): CarrierEvent {
    const format: MediaFormat = { encoding, sampleRate, channels: 1 };
    const frameSamples = sampleRate / 50;
    this.inbound = new InboundAudio(format);
    if (encoding === 'opus') {
      const opus = new OpusCodec(sampleRate as 16000 | 48000);
      this.opus = opus;
      this.outbound = new OutboundAudio(format, frameSamples, { encode: (samples) => opus.encode(samples) });
    } else {
      this.outbound = new OutboundAudio(format, frameSamples, encoderFor('pcm16')!);
    }
    const streamId = this.ctx.newStreamId();
    const customParameters = Object.fromEntries(this.ctx.query);
    const reply = [
      control({
        type: 'ready',
        call_id: this.ctx.pathCallId,
        stream_id: streamId,
        codec: encoding,
        sample_rate: sampleRate,
        frame_ms: 20,
      }),
    ];
    return {
      type: 'start',
      start: { streamId, carrierCallId: undefined, customParameters, format },
      token: undefined,
      reply,
    };
  }

  private parseAudio(data: Uint8Array): CarrierEvent {
    const inbound = this.inbound!;
    if (!this.opus) {
      const durationMs = audioMs(data.byteLength / 2, inbound.format.sampleRate);
      if (durationMs > MAX_MESSAGE_AUDIO_MS) return { type: 'bad', reason: 'oversized' };
      const frames = inbound.decode(data);
      if (!frames) return { type: 'bad', reason: 'bad_payload' };
      return { type: 'audio', frames, durationMs, timestampMs: undefined, chunk: undefined };
    }
    let samples: Int16Array;
    try {
      samples = this.opus.decode(data);
    } catch {
      return { type: 'bad', reason: 'bad_payload' };
    }
    const durationMs = audioMs(samples.length, inbound.format.sampleRate);
    return {
      type: 'audio',
      frames: inbound.pushSamples(samples),
      durationMs,
      timestampMs: undefined,
      chunk: undefined,
    };
  }

  encodeAudio(pcm16k: Int16Array): WireMessage[] {
    if (!this.outbound) return [];
    return this.binary(this.outbound.push(pcm16k));
  }

  encodeMark(name: string): WireMessage[] {
    if (!this.outbound) return [];
    const out = this.binary(this.outbound.flush(this.opus !== undefined));
    out.push(control({ type: 'mark', name }));
    return out;
  }

  encodeClear(): WireMessage[] {
    if (!this.outbound) return [];
    this.outbound.reset();
    return [control({ type: 'clear' })];
  }

  encodeEnd(reason: string): WireMessage[] {
    return [control({ type: 'bye', reason })];
  }

  encodeEvent(event: StreamEvent): WireMessage[] {
    return [control(event)];
  }

  private binary(chunks: Uint8Array[]): WireMessage[] {
    const outbound = this.outbound!;
    const out: WireMessage[] = new Array(chunks.length);
    for (let i = 0; i < chunks.length; i++) {
      const chunk = chunks[i]!;
      out[i] = { data: chunk, binary: true, audioMs: outbound.chunkAudioMs(chunk) };
    }
    return out;
  }
}

export function createWebMedia(ctx: AdapterContext): CarrierMedia {
  return new WebMedia(ctx);
}
