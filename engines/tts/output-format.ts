import { mulawEncode, pcm16ToBytes, Resampler, wavHeader } from '../../codecs/index.ts';
import { MP3_RATES, Mp3StreamEncoder } from '../../codecs/mp3.ts';

export type SpeechFormat = 'wav' | 'pcm16' | 'mulaw' | 'mp3';

/** The rates each format is written at. */
export const SPEECH_RATES: Readonly<Record<SpeechFormat, readonly number[]>> = {
  wav: [8000, 16000, 24000, 48000],
  pcm16: [8000, 16000, 24000, 48000],
  mulaw: [8000, 16000],
  mp3: MP3_RATES,
};

/** The engines' rate: synthesised audio is PCM16 mono 16 kHz. */
const ENGINE_RATE = 16_000;
/** A WAV written as a stream does not know its length: its sizes are the streaming convention's 0xFFFFFFFF. */
const STREAMING_SIZE = 0xffff_ffff;

/** Synthesised audio into a response format: resampled to the asked rate, then encoded. */
export class SpeechEncoder {
  private readonly resampler: Resampler | undefined;
  private readonly mp3: Mp3StreamEncoder | undefined;
  private samples = 0;

  constructor(
    readonly format: SpeechFormat,
    readonly sampleRate: number,
  ) {
    this.resampler = sampleRate === ENGINE_RATE ? undefined : new Resampler(ENGINE_RATE, sampleRate);
    this.mp3 = format === 'mp3' ? new Mp3StreamEncoder(sampleRate) : undefined;
  }

  get contentType(): string {
    if (this.format === 'wav') return 'audio/wav';
    if (this.format === 'pcm16') return `audio/L16; rate=${this.sampleRate}; channels=1`;
    if (this.format === 'mp3') return 'audio/mpeg';
    return this.sampleRate === 8000 ? 'audio/basic' : `audio/PCMU; rate=${this.sampleRate}`;
  }

  /** Milliseconds of audio encoded so far. */
  get audioMs(): number {
    return (this.samples * 1000) / this.sampleRate;
  }

  header(): Buffer {
    if (this.format !== 'wav') return Buffer.alloc(0);
    const header = wavHeader(this.sampleRate, 1, 0);
    header.writeUInt32LE(STREAMING_SIZE, 4);
    header.writeUInt32LE(STREAMING_SIZE, 40);
    return header;
  }

  encode(chunk: Int16Array): Buffer {
    return this.bytes(this.resampler ? this.resampler.process(chunk) : chunk);
  }

  flush(): Buffer {
    const tail = this.resampler ? this.bytes(this.resampler.flush()) : Buffer.alloc(0);
    return this.mp3 ? Buffer.concat([tail, this.mp3.flush()]) : tail;
  }

  private bytes(samples: Int16Array): Buffer {
    this.samples += samples.length;
    if (this.format === 'mulaw') {
      const encoded = mulawEncode(samples);
      return Buffer.from(encoded.buffer, encoded.byteOffset, encoded.byteLength);
    }
    if (this.mp3) return this.mp3.encode(samples);
    return pcm16ToBytes(samples);
  }
}
