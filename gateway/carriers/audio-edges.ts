import {
  alawDecode,
  alawEncode,
  CANONICAL_RATE,
  Framer,
  mulawDecode,
  mulawEncode,
  PrefixView,
  pcm16FromBytes,
  pcm16ToBytes,
  Resampler,
  samplesPerFrame,
} from '../../codecs/index.ts';
import type { AudioEncoding, CarrierEvent, MediaFormat, WireMessage } from './types.ts';
import { toBase64 } from './wire.ts';

/**
 * The carrier adapters' audio edges: inbound, the carrier's codec and rate decoded and resampled into canonical
 * 20 ms frames; outbound, agent audio resampled, encoded and cut into the carrier's chunks. Reading the wire
 * messages around the audio is wire.ts's.
 */

/** One canonical 20 ms frame: 320 samples. */
export const CANONICAL_FRAME_SAMPLES = samplesPerFrame(CANONICAL_RATE);
/** Carrier sample rates we decode and encode. */
export const SUPPORTED_RATES: readonly number[] = [8000, 16000, 24000, 32000, 44100, 48000];
/** A single inbound message carrying more audio than this is refused as oversized (carriers send 20-100 ms). */
export const MAX_MESSAGE_AUDIO_MS = 2000;

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
 * Scratch audio shared by every stream: what is written into it is copied or encoded before the call that wrote
 * it returns, and calls never interleave, so one buffer per purpose serves the whole process. Under load a
 * stream's frame then works in memory that is already in cache, not in buffers of its own that went cold since
 * its previous frame 20 ms ago.
 */
class SharedSamples {
  private scratch = new PrefixView(new Int16Array(0));

  /** Room for at least `length` samples (the whole buffer: contents of no use after the caller returns). */
  room(length: number): Int16Array {
    const { buffer } = this.scratch;
    if (buffer.length < length)
      this.scratch = new PrefixView(new Int16Array(Math.max(length, 2 * buffer.length)));
    return this.scratch.buffer;
  }

  /** The first `length` samples of the buffer. */
  of(length: number): Int16Array {
    return this.scratch.of(length);
  }
}

/** G.711 decodes here; the resampler or the framer copies what it keeps. */
const decodedScratch = new SharedSamples();
/** The edges' resamplers write here; the framers copy what they keep, or it is encoded at once. */
const resampledScratch = new SharedSamples();
/** Outbound chunks are encoded here on the way to their base64 text. */
let encodedScratch = Buffer.alloc(0);

/**
 * A resampler writing into the shared scratch buffer: the framers copy what they keep, so the hot path (one call
 * per 20 ms frame per stream) allocates nothing for the resampled audio.
 */
class ReusingResampler {
  constructor(private readonly resampler: Resampler) {}

  process(input: Int16Array): Int16Array {
    const room = resampledScratch.room(this.resampler.outputLength(input.length));
    return resampledScratch.of(this.resampler.processInto(input, room));
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
    decodedScratch.room(samples);
    return decodedScratch.of(samples);
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
    this.wholeChunkMs = audioMs(samplesPerChunk, format.sampleRate);
  }

  /**
   * `push` for JSON carriers (hot path): each completed chunk as a text message, the base64 between `prefix`
   * and `suffix`, with no chunk allocated on the way.
   */
  base64Messages(pcm16k: Int16Array, prefix: string, suffix: string): WireMessage[] {
    const into = this.encoder.into;
    if (!into) return base64AudioMessages(this, this.push(pcm16k), prefix, suffix);
    const chunkBytes = this.samplesPerChunk * bytesPerSample(this.format.encoding);
    if (encodedScratch.length < chunkBytes) encodedScratch = Buffer.allocUnsafe(chunkBytes);
    const encoded = encodedScratch;
    const out: WireMessage[] = [];
    const chunkMs = this.wholeChunkMs;
    this.framer.lend(this.resampled(pcm16k), (chunk) => {
      const bytes = into(chunk, encoded);
      out.push({
        data: prefix + encoded.toString('base64', 0, bytes) + suffix,
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
