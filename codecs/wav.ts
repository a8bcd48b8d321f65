import { createRequire } from 'node:module';
import { alawDecode, mulawDecode } from './g711.ts';
import { pcm16FromBytes, pcm16ToBytes } from './pcm16.ts';

const require = createRequire(import.meta.url);
const { WaveFile } = require('wavefile') as typeof import('wavefile');

/** WAVE format codes (the fmt chunk's wFormatTag, or the first field of an extensible subformat). */
const FORMAT_PCM = 1;
const FORMAT_FLOAT = 3;
const FORMAT_ALAW = 6;
const FORMAT_MULAW = 7;
const FORMAT_EXTENSIBLE = 0xfffe;

const FORMAT_NAMES: Record<number, string> = {
  [FORMAT_PCM]: 'PCM',
  [FORMAT_FLOAT]: 'IEEE float',
  [FORMAT_ALAW]: 'A-law',
  [FORMAT_MULAW]: 'mu-law',
  2: 'Microsoft ADPCM',
  17: 'IMA ADPCM',
  85: 'MP3',
};

/** Audio as our recorder and tests hold it: one PCM16 array per channel, all the same length. */
export interface WavAudio {
  sampleRate: number;
  channels: Int16Array[];
}

/** The fields of wavefile's parsed chunks that we read (its typings declare them as `object`). */
interface FmtChunk {
  audioFormat: number;
  numChannels: number;
  sampleRate: number;
  blockAlign: number;
  bitsPerSample: number;
  subformat: number[];
}
interface DataChunk {
  samples: Uint8Array;
  chunkSize: number;
}

function deinterleave(samples: Int16Array, channelCount: number): Int16Array[] {
  const frames = Math.floor(samples.length / channelCount);
  const channels = Array.from({ length: channelCount }, () => new Int16Array(frames));
  for (let c = 0; c < channelCount; c++) {
    const channel = channels[c]!;
    for (let i = 0, j = c; i < frames; i++, j += channelCount) channel[i] = samples[j]!;
  }
  return channels;
}

/**
 * Parse a WAV file holding 16-bit PCM, or 8-bit mu-law or A-law (decoded to PCM16), any channel count. Anything
 * else (float, 8/24/32-bit PCM, ADPCM, big-endian RIFX) is refused with an Error that names the encoding.
 */
export function readWav(bytes: Uint8Array): WavAudio {
  let wav: InstanceType<typeof WaveFile>;
  try {
    wav = new WaveFile(bytes);
  } catch (error) {
    throw new Error(`not a readable WAV file: ${(error as Error).message}`);
  }
  if (wav.container === 'RIFX') throw new Error('unsupported WAV: big-endian (RIFX) files are not accepted');
  const fmt = wav.fmt as FmtChunk;
  const data = wav.data as DataChunk;
  const format = fmt.audioFormat === FORMAT_EXTENSIBLE ? (fmt.subformat[0] ?? 0) : fmt.audioFormat;
  const channelCount = fmt.numChannels;
  if (!Number.isInteger(channelCount) || channelCount < 1) {
    throw new Error(`unsupported WAV: ${channelCount} channels`);
  }
  if (!(fmt.sampleRate > 0)) throw new Error(`unsupported WAV: sample rate ${fmt.sampleRate}`);

  let interleaved: Int16Array;
  if (format === FORMAT_PCM && fmt.bitsPerSample === 16) {
    const usable = data.samples.subarray(0, data.samples.length - (data.samples.length % 2));
    interleaved = pcm16FromBytes(usable);
  } else if (format === FORMAT_MULAW && fmt.bitsPerSample === 8) {
    interleaved = mulawDecode(data.samples);
  } else if (format === FORMAT_ALAW && fmt.bitsPerSample === 8) {
    interleaved = alawDecode(data.samples);
  } else {
    const name = FORMAT_NAMES[format] ?? `format code ${format}`;
    throw new Error(
      `unsupported WAV encoding: ${fmt.bitsPerSample}-bit ${name}; expected 16-bit PCM, 8-bit mu-law or 8-bit A-law`,
    );
  }
  return { sampleRate: fmt.sampleRate, channels: deinterleave(interleaved, channelCount) };
}

/**
 * A 16-bit PCM WAV file (RIFF, little-endian) of the given channels; a shorter channel is padded with silence.
 * wavefile writes the header; the sample bytes are interleaved here in one pass (wavefile's own per-sample
 * packing took 2 s for ten minutes of stereo 16 kHz, this takes tens of milliseconds; the bytes are identical).
 */
export function writeWav(input: WavAudio): Buffer {
  const { sampleRate, channels } = input;
  if (!Number.isInteger(sampleRate) || sampleRate <= 0) {
    throw new RangeError(`sampleRate must be a positive integer, got ${sampleRate}`);
  }
  if (channels.length === 0) throw new RangeError('a WAV file needs at least one channel');
  const channelCount = channels.length;
  const frames = Math.max(...channels.map((c) => c.length));
  const interleaved = new Int16Array(frames * channelCount);
  channels.forEach((channel, c) => {
    for (let i = 0, j = c; i < channel.length; i++, j += channelCount) interleaved[j] = channel[i]!;
  });
  const bytes = pcm16ToBytes(interleaved);

  const wav = new WaveFile();
  wav.fromScratch(channelCount, sampleRate, '16', []);
  const data = wav.data as DataChunk;
  data.samples = new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  data.chunkSize = bytes.byteLength;
  const file = wav.toBuffer();
  return Buffer.from(file.buffer, file.byteOffset, file.byteLength);
}

/** Bytes of the canonical 16-bit PCM WAV header that `wavHeader` writes. */
export const WAV_HEADER_BYTES = 44;

/**
 * The canonical 44-byte header of a 16-bit PCM WAV file with `dataBytes` of samples, for files written as a
 * stream (header first with a placeholder size, rewritten once the length is known).
 */
export function wavHeader(sampleRate: number, channels: number, dataBytes: number): Buffer {
  const header = Buffer.alloc(WAV_HEADER_BYTES);
  header.write('RIFF', 0, 'ascii');
  header.writeUInt32LE(36 + dataBytes, 4);
  header.write('WAVE', 8, 'ascii');
  header.write('fmt ', 12, 'ascii');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(channels, 22);
  header.writeUInt32LE(sampleRate, 24);
  header.writeUInt32LE(sampleRate * channels * 2, 28);
  header.writeUInt16LE(channels * 2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36, 'ascii');
  header.writeUInt32LE(dataBytes, 40);
  return header;
}
