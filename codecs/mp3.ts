import { Mp3Encoder } from '@breezystack/lamejs';
import { MPEGDecoder } from 'mpg123-decoder';
import { floatToPcm16 } from './pcm16.ts';
import type { WavAudio } from './wav.ts';

/** Decoded audio kept at most (samples, all channels together): what a 100 MB 8-bit WAV holds. */
export const MAX_MP3_DECODED_SAMPLES = 100_000_000;
/** The file is handed to the decoder in pieces this long, so its output is bounded as it goes. */
const DECODE_PIECE_BYTES = 256 * 1024;

/**
 * An MP3 file (MPEG-1, 2 or 2.5 Layer III, with or without an ID3v2 tag) decoded to PCM16 at its own rate, one
 * array per channel. mpg123, compiled to WebAssembly (the `mpg123-decoder` package), decodes it; its output is
 * always two channels, so a file whose first frame says mono keeps one. Throws an Error that says what is wrong,
 * also when the audio decodes to more than `maxSamples`.
 */
export async function readMp3(bytes: Uint8Array, maxSamples = MAX_MP3_DECODED_SAMPLES): Promise<WavAudio> {
  const mono = firstFrameIsMono(bytes);
  if (mono === undefined) throw new Error('no MP3 frame found');
  const decoder = new MPEGDecoder();
  await decoder.ready;
  try {
    const channelCount = mono ? 1 : 2;
    const pieces: Int16Array[][] = Array.from({ length: channelCount }, () => []);
    let sampleRate = 0;
    let perChannel = 0;
    for (let at = 0; at < bytes.length; at += DECODE_PIECE_BYTES) {
      const decoded = decoder.decode(bytes.subarray(at, at + DECODE_PIECE_BYTES));
      if (decoded.samplesDecoded === 0) continue;
      sampleRate ||= decoded.sampleRate;
      perChannel += decoded.samplesDecoded;
      if (perChannel * channelCount > maxSamples)
        throw new Error(`the MP3 decodes to more than ${maxSamples} samples`);
      for (let c = 0; c < channelCount; c++) {
        const data = decoded.channelData[c];
        if (data) pieces[c]!.push(floatToPcm16(data.subarray(0, decoded.samplesDecoded)));
      }
    }
    if (perChannel === 0 || sampleRate === 0)
      throw new Error('an MP3 file without audio the decoder can read');
    return { sampleRate, channels: pieces.map((channel) => joined(channel, perChannel)) };
  } finally {
    decoder.free();
  }
}

/** Whether the first Layer III frame (after any ID3v2 tag) is mono; undefined when no frame is found. */
function firstFrameIsMono(bytes: Uint8Array): boolean | undefined {
  let at = 0;
  if (bytes.length >= 10 && bytes[0] === 0x49 && bytes[1] === 0x44 && bytes[2] === 0x33) {
    // ID3v2: 10-byte header, a syncsafe size, and a 10-byte footer when flag bit 4 is set.
    const size =
      ((bytes[6]! & 0x7f) << 21) |
      ((bytes[7]! & 0x7f) << 14) |
      ((bytes[8]! & 0x7f) << 7) |
      (bytes[9]! & 0x7f);
    at = 10 + size + (bytes[5]! & 0x10 ? 10 : 0);
  }
  for (; at + 3 < bytes.length; at++) {
    if (bytes[at] !== 0xff || (bytes[at + 1]! & 0xe0) !== 0xe0) continue;
    const version = (bytes[at + 1]! >> 3) & 0x03;
    const layer = (bytes[at + 1]! >> 1) & 0x03;
    const bitrate = bytes[at + 2]! >> 4;
    const rate = (bytes[at + 2]! >> 2) & 0x03;
    // Layer III (01), a known version, a bitrate index other than free (0) and bad (15), a rate index other than 3.
    if (version === 1 || layer !== 1 || bitrate === 0 || bitrate === 15 || rate === 3) continue;
    return bytes[at + 3]! >> 6 === 3;
  }
  return undefined;
}

function joined(pieces: Int16Array[], length: number): Int16Array {
  const out = new Int16Array(length);
  let offset = 0;
  for (const piece of pieces) {
    out.set(piece.subarray(0, length - offset), offset);
    offset += piece.length;
  }
  return out;
}

/** Constant bitrates for mono speech that keep the rate asked for (LAME lowers the rate below them). */
const SPEECH_KBPS: Readonly<Record<number, number>> = { 8000: 24, 16000: 48, 24000: 64, 48000: 96 };
export const MP3_RATES = [8000, 16000, 24000, 48000] as const;

/**
 * Mono PCM16 to MP3 as a stream (LAME, through `@breezystack/lamejs`, at a constant bitrate for speech):
 * `encode` returns the frames each chunk completes, `flush` the rest.
 */
export class Mp3StreamEncoder {
  readonly #encoder: Mp3Encoder;

  constructor(readonly sampleRate: number) {
    const kbps = SPEECH_KBPS[sampleRate];
    if (kbps === undefined)
      throw new RangeError(`MP3 is written at ${MP3_RATES.join(', ')} Hz, not ${sampleRate}`);
    this.#encoder = new Mp3Encoder(1, sampleRate, kbps);
  }

  encode(samples: Int16Array): Buffer {
    return asBuffer(this.#encoder.encodeBuffer(samples));
  }

  flush(): Buffer {
    return asBuffer(this.#encoder.flush());
  }
}

/** LAME hands back signed-byte views that may share its buffer: copied, as bytes. */
function asBuffer(bytes: ArrayBufferView): Buffer {
  return Buffer.from(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength));
}
