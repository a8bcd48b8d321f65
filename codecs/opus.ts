import { createRequire } from 'node:module';
import { samplesPerFrame } from './framing.ts';
import { pcm16FromBytes, pcm16ToBytes } from './pcm16.ts';

const require = createRequire(import.meta.url);
const { OpusEncoder } = require('@discordjs/opus') as typeof import('@discordjs/opus');

export type OpusRate = 16000 | 48000;

export interface OpusOptions {
  /** Target bitrate in bits per second; libopus chooses one from the rate when unset (about 32 kbit/s at 16 kHz). */
  bitrateBps?: number;
}

/**
 * Opus for browser calls: one encoder and one decoder (libopus through @discordjs/opus) for one direction pair
 * of one call, mono, 20 ms frames. Not shareable between calls: both sides keep state across packets.
 */
export class OpusCodec {
  readonly sampleRate: OpusRate;
  readonly channels: 1;
  /** Samples in one 20 ms frame: 320 at 16 kHz, 960 at 48 kHz. */
  readonly frameSamples: number;
  readonly #opus: InstanceType<typeof OpusEncoder>;

  constructor(sampleRate: OpusRate, channels: 1 = 1, options: OpusOptions = {}) {
    if (sampleRate !== 16000 && sampleRate !== 48000) {
      throw new RangeError(`Opus sample rate must be 16000 or 48000, got ${sampleRate}`);
    }
    if (channels !== 1) throw new RangeError(`only mono Opus is supported, got ${channels} channels`);
    this.sampleRate = sampleRate;
    this.channels = channels;
    this.frameSamples = samplesPerFrame(sampleRate);
    this.#opus = new OpusEncoder(sampleRate, channels);
    if (options.bitrateBps !== undefined) this.#opus.setBitrate(options.bitrateBps);
  }

  /** Encode exactly one 20 ms frame into one Opus packet. */
  encode(pcm: Int16Array): Buffer {
    if (pcm.length !== this.frameSamples) {
      throw new RangeError(`Opus encodes one 20 ms frame: ${this.frameSamples} samples, got ${pcm.length}`);
    }
    return this.#opus.encode(pcm16ToBytes(pcm));
  }

  /** Decode one Opus packet (any duration libopus accepts) to PCM16 at this codec's rate. */
  decode(packet: Uint8Array): Int16Array {
    const input = Buffer.isBuffer(packet)
      ? packet
      : Buffer.from(packet.buffer, packet.byteOffset, packet.byteLength);
    let decoded: Buffer;
    try {
      decoded = this.#opus.decode(input);
    } catch (error) {
      throw new Error(
        `Opus packet of ${packet.byteLength} bytes could not be decoded: ${(error as Error).message}`,
      );
    }
    return pcm16FromBytes(decoded);
  }
}
