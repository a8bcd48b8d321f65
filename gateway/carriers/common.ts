import {
  alawDecode,
  alawEncode,
  Framer,
  mulawDecode,
  mulawEncode,
  pcm16FromBytes,
  pcm16ToBytes,
  Resampler,
} from '../../codecs/index.ts';
import type { AudioEncoding, CarrierEvent, MediaFormat, WireMessage } from './types.ts';

/** Shared pieces of the carrier adapters: lenient field readers and the audio edges (decode/encode + resample). */

export const CANONICAL_RATE = 16_000;
/** 20 ms at 16 kHz. */
export const CANONICAL_FRAME_SAMPLES = 320;
/** Carrier sample rates we decode and encode. */
export const SUPPORTED_RATES: readonly number[] = [8000, 16000, 24000, 32000, 44100, 48000];
/** A single inbound message carrying more audio than this is refused as oversized (carriers send 20-100 ms). */
export const MAX_MESSAGE_AUDIO_MS = 2000;

// ---- lenient readers: carriers send numbers as strings (Twilio, Exotel) or numbers (Plivo) ----

export type JsonObject = Record<string, unknown>;

export function asObject(value: unknown): JsonObject | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as JsonObject)
    : undefined;
}

export function asString(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return undefined;
}

export function asNumber(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value === 'string' && value.trim() !== '') {
    const n = Number(value);
    return Number.isFinite(n) ? n : undefined;
  }
  return undefined;
}

/** The first of `keys` present on `obj` (camelCase and snake_case spellings of one field). */
export function field(obj: JsonObject | undefined, ...keys: string[]): unknown {
  if (!obj) return undefined;
  for (const key of keys) {
    const value = obj[key];
    if (value !== undefined && value !== null) return value;
  }
  return undefined;
}

/** An object of scalars as strings; other values are skipped. */
export function stringMap(value: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  const obj = asObject(value);
  if (!obj) return out;
  for (const [key, v] of Object.entries(obj)) {
    if (typeof v === 'string') out[key] = v;
    else if (typeof v === 'number' || typeof v === 'boolean') out[key] = String(v);
  }
  return out;
}

/** `k=v;k2=v2` (Plivo's extra_headers; also accepts `,` and `&` separators). */
export function parseHeaderList(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of text.split(/[;,&]/)) {
    const eq = part.indexOf('=');
    if (eq <= 0) continue;
    const key = part.slice(0, eq).trim();
    if (key) out[key] = part.slice(eq + 1).trim();
  }
  return out;
}

/** Takes `token` out of a parameter map (so it never reaches the handler or a log line) and returns it. */
export function takeToken(params: Record<string, string>): string | undefined {
  const token = params.token;
  delete params.token;
  return token === '' ? undefined : token;
}

const decoder = new TextDecoder('utf-8', { fatal: false });

/** A JSON object message, or undefined for anything else (invalid JSON, arrays, scalars). */
export function parseJsonObject(data: Uint8Array): JsonObject | undefined {
  let value: unknown;
  try {
    value = JSON.parse(decoder.decode(data));
  } catch {
    return undefined;
  }
  return asObject(value);
}

/**
 * Base64 payloads decoded into one buffer reused across messages (grown as needed): the bytes are valid until
 * the next decode, which suits the inbound audio path, where they are decoded to samples at once.
 */
export class Base64Decoder {
  private buffer = Buffer.alloc(0);

  decode(value: unknown): Uint8Array | undefined {
    if (typeof value !== 'string') return undefined;
    const most = Math.ceil(value.length / 4) * 3;
    if (this.buffer.length < most) this.buffer = Buffer.allocUnsafe(Math.max(most, 2 * this.buffer.length));
    return this.buffer.subarray(0, this.buffer.write(value, 0, 'base64'));
  }
}

export function toBase64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
}

/** Reads an encoding name in any of the carriers' spellings. */
export function parseEncoding(text: string | undefined): AudioEncoding | undefined {
  if (text === undefined) return undefined;
  const t = text.toLowerCase();
  if (t.includes('mulaw') || t.includes('ulaw') || t.includes('pcmu') || t.includes('g711_u')) return 'mulaw';
  if (t.includes('alaw') || t.includes('pcma') || t.includes('g711_a')) return 'alaw';
  if (
    t.includes('l16') ||
    t.includes('raw') ||
    t.includes('slin') ||
    t.includes('pcm') ||
    t.includes('linear')
  ) {
    return 'pcm16';
  }
  if (t.includes('opus')) return 'opus';
  return undefined;
}

/** `audio/l16;rate=16000` -> 16000. */
export function rateFromContentType(text: string | undefined): number | undefined {
  const match = text ? /rate=(\d+)/i.exec(text) : null;
  return match ? Number(match[1]) : undefined;
}

export function isSupportedRate(rate: number): boolean {
  return SUPPORTED_RATES.includes(rate);
}

export function bytesPerSample(encoding: AudioEncoding): number {
  return encoding === 'pcm16' ? 2 : 1;
}

export function audioMs(samples: number, rate: number): number {
  return (samples * 1000) / rate;
}

/**
 * A resampler writing into one buffer reused across calls: the framers copy what they keep, so the hot path
 * (one call per 20 ms frame per stream) allocates nothing for the resampled audio.
 */
class ReusingResampler {
  private buffer = new Int16Array(0);

  constructor(private readonly resampler: Resampler) {}

  process(input: Int16Array): Int16Array {
    const needed = this.resampler.outputLength(input.length);
    if (this.buffer.length < needed) this.buffer = new Int16Array(Math.max(needed, 2 * this.buffer.length));
    return this.buffer.subarray(0, this.resampler.processInto(input, this.buffer));
  }

  flush(): Int16Array {
    return this.resampler.flush();
  }

  reset(): void {
    this.resampler.reset();
  }
}

// ---- inbound edge: carrier codec and rate -> 320-sample 16 kHz frames ----

export class InboundAudio {
  private readonly resampler: ReusingResampler | undefined;
  private readonly framer = new Framer(CANONICAL_FRAME_SAMPLES);
  /** G.711 decodes into this (reused: the resampler and the framer copy what they keep). */
  private decoded = new Int16Array(0);

  constructor(readonly format: MediaFormat) {
    this.resampler =
      format.sampleRate === CANONICAL_RATE
        ? undefined
        : new ReusingResampler(new Resampler(format.sampleRate, CANONICAL_RATE));
  }

  /** Samples a payload of `byteLength` bytes holds (opus excluded). */
  samplesIn(byteLength: number): number {
    return Math.floor(byteLength / bytesPerSample(this.format.encoding));
  }

  /** Decodes G.711 or PCM16 bytes; undefined when they cannot be (PCM16 with an odd byte count). */
  decode(bytes: Uint8Array): Int16Array[] | undefined {
    switch (this.format.encoding) {
      case 'mulaw':
        return this.pushSamples(mulawDecode(bytes, this.decodeBuffer(bytes.length)));
      case 'alaw':
        return this.pushSamples(alawDecode(bytes, this.decodeBuffer(bytes.length)));
      case 'pcm16':
        if (bytes.byteLength % 2 !== 0) return undefined;
        return this.pushSamples(pcm16FromBytes(bytes));
      default:
        return undefined;
    }
  }

  private decodeBuffer(samples: number): Int16Array {
    if (this.decoded.length < samples)
      this.decoded = new Int16Array(Math.max(samples, 2 * this.decoded.length));
    return this.decoded.subarray(0, samples);
  }

  /** Samples at the carrier's rate (already decoded, e.g. from Opus). */
  pushSamples(samples: Int16Array): Int16Array[] {
    const canonical = this.resampler ? this.resampler.process(samples) : samples;
    return this.framer.push(canonical);
  }
}

/** The canonical event for one inbound audio payload (G.711 or PCM16 bytes). */
export function audioEvent(
  inbound: InboundAudio,
  bytes: Uint8Array | undefined,
  timestampMs: number | undefined,
  chunk: number | undefined,
): CarrierEvent {
  if (!bytes) return { type: 'bad', reason: 'bad_payload' };
  const durationMs = audioMs(inbound.samplesIn(bytes.byteLength), inbound.format.sampleRate);
  if (durationMs > MAX_MESSAGE_AUDIO_MS) return { type: 'bad', reason: 'oversized' };
  const frames = inbound.decode(bytes);
  if (!frames) return { type: 'bad', reason: 'bad_payload' };
  return { type: 'audio', frames, durationMs, timestampMs, chunk };
}

/** JSON text messages carrying base64 audio: one per chunk, built by string concatenation (hot path). */
export function base64AudioMessages(
  outbound: OutboundAudio,
  chunks: Uint8Array[],
  prefix: string,
  suffix: string,
): WireMessage[] {
  const out: WireMessage[] = new Array(chunks.length);
  for (let i = 0; i < chunks.length; i++) {
    const chunk = chunks[i]!;
    out[i] = {
      data: prefix + toBase64(chunk) + suffix,
      binary: false,
      audioMs: outbound.chunkAudioMs(chunk),
    };
  }
  return out;
}

// ---- outbound edge: 16 kHz agent audio -> the carrier's codec, rate and chunk size ----

/**
 * A carrier codec's chunk encoder. `into`, where the codec has it, writes the chunk into `out` (room for it) and
 * returns the bytes written: for bytes used at once, with nothing allocated.
 */
export interface ChunkEncoder {
  readonly encode: (samples: Int16Array) => Uint8Array;
  readonly into?: (samples: Int16Array, out: Buffer) => number;
}

export function encoderFor(encoding: AudioEncoding): ChunkEncoder | undefined {
  switch (encoding) {
    case 'mulaw':
      return {
        encode: (s) => mulawEncode(s),
        into: (s, out) => {
          mulawEncode(s, out);
          return s.length;
        },
      };
    case 'alaw':
      return {
        encode: (s) => alawEncode(s),
        into: (s, out) => {
          alawEncode(s, out);
          return s.length;
        },
      };
    case 'pcm16':
      return {
        encode: (s) => pcm16ToBytes(s),
        into: (s, out) => {
          out.set(pcm16ToBytes(s));
          return s.byteLength;
        },
      };
    default:
      return undefined;
  }
}

/**
 * Resamples agent audio to the carrier's rate and cuts it into chunks of exactly `samplesPerChunk` samples,
 * encoded. What does not fill a chunk waits for more audio, or for `flush` (before a mark, so everything the
 * mark follows goes out first).
 */
export class OutboundAudio {
  private readonly resampler: ReusingResampler | undefined;
  private readonly framer: Framer;
  /** Audio went into the resampler since its last flush or reset (its tail is worth flushing). */
  private resamplerHolds = false;
  /** Where `base64Messages` encodes each chunk: reused, as the base64 text is made at once. */
  private readonly encoded: Buffer;
  private readonly wholeChunkMs: number;

  constructor(
    readonly format: MediaFormat,
    readonly samplesPerChunk: number,
    private readonly encoder: ChunkEncoder,
  ) {
    this.resampler =
      format.sampleRate === CANONICAL_RATE
        ? undefined
        : new ReusingResampler(new Resampler(CANONICAL_RATE, format.sampleRate));
    this.framer = new Framer(samplesPerChunk);
    this.encoded = Buffer.allocUnsafe(samplesPerChunk * bytesPerSample(format.encoding));
    this.wholeChunkMs = audioMs(samplesPerChunk, format.sampleRate);
  }

  /**
   * `push` for JSON carriers (hot path): each completed chunk as a text message, the base64 between `prefix`
   * and `suffix`, with no chunk allocated on the way.
   */
  base64Messages(pcm16k: Int16Array, prefix: string, suffix: string): WireMessage[] {
    const into = this.encoder.into;
    if (!into) return base64AudioMessages(this, this.push(pcm16k), prefix, suffix);
    const out: WireMessage[] = [];
    const chunkMs = this.wholeChunkMs;
    this.framer.lend(this.resampled(pcm16k), (chunk) => {
      const bytes = into(chunk, this.encoded);
      out.push({
        data: prefix + this.encoded.toString('base64', 0, bytes) + suffix,
        binary: false,
        audioMs: chunkMs,
      });
    });
    return out;
  }

  /** Encoded chunks completed by this audio. */
  push(pcm16k: Int16Array): Uint8Array[] {
    return this.encodeAll(this.framer.push(this.resampled(pcm16k)));
  }

  /** Agent audio at the carrier's rate (in the resampler's reused buffer: the framer copies what it keeps). */
  private resampled(pcm16k: Int16Array): Int16Array {
    if (pcm16k.length > 0) this.resamplerHolds = true;
    return this.resampler ? this.resampler.process(pcm16k) : pcm16k;
  }

  /**
   * Everything held back: the resampler's tail and the partial chunk, padded with silence to a whole chunk when
   * `pad` (carriers that need fixed or minimum sizes), as is otherwise.
   */
  flush(pad: boolean): Uint8Array[] {
    const chunks: Int16Array[] = [];
    if (this.resampler && this.resamplerHolds) {
      const tail = this.resampler.flush();
      this.resampler.reset();
      if (tail.length > 0) chunks.push(...this.framer.push(tail));
    }
    this.resamplerHolds = false;
    const rest = this.framer.flush(pad);
    if (rest) chunks.push(rest);
    return this.encodeAll(chunks);
  }

  /** Drops everything held back (after a clear). */
  reset(): void {
    this.resampler?.reset();
    this.resamplerHolds = false;
    this.framer.flush(false);
  }

  chunkAudioMs(chunk: Uint8Array): number {
    const samples =
      this.format.encoding === 'opus'
        ? this.samplesPerChunk
        : chunk.byteLength / bytesPerSample(this.format.encoding);
    return audioMs(samples, this.format.sampleRate);
  }

  private encodeAll(frames: Int16Array[]): Uint8Array[] {
    const out: Uint8Array[] = new Array(frames.length);
    for (let i = 0; i < frames.length; i++) out[i] = this.encoder.encode(frames[i]!);
    return out;
  }
}

/** A JSON control message. */
export function control(value: unknown): WireMessage {
  return { data: JSON.stringify(value), binary: false, audioMs: 0 };
}
