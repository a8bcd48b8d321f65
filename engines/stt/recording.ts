import { CANONICAL_RATE, mulawDecode, Resampler, readWav, type WavAudio } from '../../codecs/index.ts';
import { readMp3 } from '../../codecs/mp3.ts';
import { readOggOpus } from '../../codecs/ogg-opus.ts';
import { SpeechSegmenter } from '../vad/segmenter.ts';
import { DEFAULT_VAD_THRESHOLDS, type VoiceActivityDetector } from '../vad/types.ts';
import type { SpeechToText } from './types.ts';

/**
 * A whole recording transcribed: each channel cut into speech segments by the VAD (the segmenter's hysteresis,
 * with the silence that ends a segment at `SEGMENT_SILENCE_MS`), each segment transcribed whole by the engine.
 * Times are ms from the start of the recording. Segments that the engine hears as nothing are dropped.
 */
export interface RecordingSegment {
  /** 0 for the first (or only) channel. */
  channel: number;
  startMs: number;
  endMs: number;
  text: string;
  language: string;
}

/** Silence that ends a segment: a speaker's pause between sentences, not between words. */
const SEGMENT_SILENCE_MS = 600;
/** Audio kept around a segment, so soft word edges reach the engine. */
const SEGMENT_PADDING_MS = 200;
/** The VAD is given audio in pieces this long (its windows straddle them). */
const VAD_PIECE_SAMPLES = 16_000;

/** The recording formats a transcription takes as a request body, by media type. */
export const RECORDING_MEDIA_TYPES = [
  'audio/wav',
  'audio/x-wav',
  'audio/wave',
  'audio/basic',
  'audio/ogg',
  'audio/opus',
  'audio/mpeg',
  'audio/mp3',
] as const;

/** What a recording is, by its first bytes; `mediaType` (as sent) decides only for headerless mu-law. */
export function recordingFormat(
  bytes: Uint8Array,
  mediaType: string | null,
): 'wav' | 'ogg' | 'mulaw' | 'mp3' | undefined {
  const head = Buffer.from(bytes.subarray(0, 4)).toString('latin1');
  if (head === 'RIFF') return 'wav';
  if (head === 'OggS') return 'ogg';
  // Raw mu-law has no header (its silence is 0xFF bytes, which look like an MP3 frame's sync): the type decides.
  if (mediaType === 'audio/basic' || mediaType === 'audio/x-mulaw' || mediaType === 'audio/mulaw')
    return 'mulaw';
  if (head.startsWith('ID3') || (bytes.length > 1 && bytes[0] === 0xff && (bytes[1]! & 0xe0) === 0xe0))
    return 'mp3';
  return undefined;
}

/**
 * A recording's channels: WAV (16-bit PCM, 8-bit mu-law or A-law, any rate the resampler takes, one or two
 * channels), Ogg Opus (one or two channels, decoded by libopus), MP3 (mono or stereo, decoded by mpg123 in
 * WebAssembly), or raw 8 kHz mu-law (`audio/basic`, one channel). The format is told by the file's first bytes.
 * Rejects with an Error whose message says what is wrong.
 */
export async function decodeRecording(bytes: Uint8Array, mediaType: string | null): Promise<WavAudio> {
  switch (recordingFormat(bytes, mediaType)) {
    case 'wav':
      return readWav(bytes);
    case 'ogg':
      return readOggOpus(bytes);
    case 'mulaw':
      return { sampleRate: 8000, channels: [mulawDecode(bytes)] };
    case 'mp3':
      return readMp3(bytes);
    default:
      throw new Error(
        'not a recording this platform reads: send WAV, Ogg Opus, MP3 or raw 8 kHz mu-law (audio/basic)',
      );
  }
}

export function recordingDurationMs(audio: WavAudio): number {
  const longest = Math.max(0, ...audio.channels.map((c) => c.length));
  return (longest * 1000) / audio.sampleRate;
}

export async function transcribeRecording(
  audio: WavAudio,
  engines: { stt: SpeechToText; vad: VoiceActivityDetector },
  language: string,
  options: { keepUnheard?: boolean; signal?: AbortSignal } = {},
): Promise<RecordingSegment[]> {
  const segments: RecordingSegment[] = [];
  for (const [channel, samples] of audio.channels.entries()) {
    const canonical = toCanonical(samples, audio.sampleRate);
    for (const [startMs, endMs] of await speechSpans(canonical, engines.vad)) {
      const from = Math.max(0, msToSample(startMs - SEGMENT_PADDING_MS));
      const to = Math.min(canonical.length, msToSample(endMs + SEGMENT_PADDING_MS));
      options.signal?.throwIfAborted();
      const heard = await engines.stt.transcribe(canonical.slice(from, to), { language });
      const text = heard.text.trim();
      if (text || options.keepUnheard)
        segments.push({ channel, startMs, endMs, text, language: heard.language ?? language });
    }
  }
  return segments.sort((a, b) => a.startMs - b.startMs || a.channel - b.channel);
}

function toCanonical(samples: Int16Array, rate: number): Int16Array {
  return resampleWhole(samples, rate, CANONICAL_RATE);
}

/** A whole recording's samples at another rate (the resampler flushed); the same array when the rates match. */
export function resampleWhole(samples: Int16Array, rate: number, toRate: number): Int16Array {
  if (rate === toRate) return samples;
  const resampler = new Resampler(rate, toRate);
  const head = resampler.process(samples);
  const tail = resampler.flush();
  const out = new Int16Array(head.length + tail.length);
  out.set(head);
  out.set(tail, head.length);
  return out;
}

/** [start, end] ms of each stretch of speech the VAD hears. */
async function speechSpans(
  samples: Int16Array,
  vad: VoiceActivityDetector,
): Promise<Array<[number, number]>> {
  const stream = vad.createStream();
  const segmenter = SpeechSegmenter.for(vad, { ...DEFAULT_VAD_THRESHOLDS, minSilenceMs: SEGMENT_SILENCE_MS });
  const spans: Array<[number, number]> = [];
  const take = (event: ReturnType<SpeechSegmenter['push']>): void => {
    if (event?.type === 'speech_end') spans.push([event.startMs, event.atMs]);
  };
  for (let at = 0; at < samples.length; at += VAD_PIECE_SAMPLES) {
    const probabilities = await stream.push(samples.subarray(at, at + VAD_PIECE_SAMPLES));
    for (const probability of probabilities) take(segmenter.push(probability));
  }
  take(segmenter.finish());
  return spans;
}

function msToSample(ms: number): number {
  return Math.round((ms * CANONICAL_RATE) / 1000);
}
