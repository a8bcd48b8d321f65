import type { WavAudio } from '../../codecs/index.ts';
import type { VoiceActivityDetector } from '../vad/types.ts';
import { transcribesLanguage } from './language.ts';
import { decodeRecording, recordingDurationMs, transcribeRecording } from './recording.ts';
import { separateSpeakers } from './speakers.ts';
import type { SpeechToText } from './types.ts';

/** A recording read and checked: its audio, length and channels (one or two). */
export interface DecodedRecording {
  readonly audio: WavAudio;
  readonly durationMs: number;
  readonly channels: number;
}

/** Reads a recording (format told by its first bytes); throws an Error whose message says what is wrong. */
export type RecordingDecoder = (bytes: Uint8Array, mediaType: string | null) => DecodedRecording;

export const decodeTranscriptionRecording: RecordingDecoder = (bytes, mediaType) => {
  const audio = decodeRecording(bytes, mediaType);
  if (audio.channels.length > 2) throw new Error(`${audio.channels.length} channels; one or two are taken`);
  const durationMs = recordingDurationMs(audio);
  if (durationMs === 0) throw new Error('the recording has no audio');
  return { audio, durationMs, channels: audio.channels.length };
};

export interface TranscribedSegment {
  speaker: string;
  startMs: number;
  endMs: number;
  text: string;
  language: string;
}

export interface TranscribedRecording {
  /** `completed` (billed) when speakers were told apart, else `degraded` (free). */
  status: 'completed' | 'degraded';
  segments: TranscribedSegment[];
  /** How: one speaker per channel, voices clustered (mono), or not told apart. */
  speakersMethod: 'channels' | 'voice_clusters' | 'none';
}

/** A node's STT and VAD, transcribing whole recordings with speakers. */
export interface RecordingTranscriber {
  transcribes(language: string): boolean;
  /** Throws when the engine fails, and when `signal` aborts (between turns). */
  transcribe(
    recording: DecodedRecording,
    language: string,
    signal?: AbortSignal,
  ): Promise<TranscribedRecording>;
}

export function recordingTranscriber(engines: {
  stt: SpeechToText;
  vad: VoiceActivityDetector;
}): RecordingTranscriber {
  return {
    transcribes: (language) => transcribesLanguage(engines.stt.languages, language),
    transcribe: (recording, language, signal) =>
      transcribeWithSpeakers(recording.audio, engines, language, signal),
  };
}

/**
 * A decoded recording transcribed with speakers: a two-channel recording gives one speaker per channel; a mono
 * one is cut into turns by the VAD and its turns' voices are clustered into two speakers (speakers.ts). When the
 * voices cannot be told apart (one speaker, or too few turns) every turn is `speaker_1` and the result is
 * `degraded`. Throws when the engine fails.
 */
export async function transcribeWithSpeakers(
  audio: WavAudio,
  engines: { stt: SpeechToText; vad: VoiceActivityDetector },
  language: string,
  signal?: AbortSignal,
): Promise<TranscribedRecording> {
  // Turns the engine hears as nothing still show whose voice they are in; they are dropped after.
  const turns = await transcribeRecording(audio, engines, language, {
    keepUnheard: true,
    ...(signal ? { signal } : {}),
  });
  const segments = turns.filter((s) => s.text !== '');
  if (audio.channels.length === 2) {
    return {
      status: 'completed',
      speakersMethod: 'channels',
      segments: segments.map((s) => ({
        speaker: `speaker_${s.channel + 1}`,
        startMs: Math.round(s.startMs),
        endMs: Math.round(s.endMs),
        text: s.text,
        language: s.language,
      })),
    };
  }
  const speakers = separateSpeakers(
    audio.channels[0] ?? new Int16Array(0),
    audio.sampleRate,
    turns.map((s) => [s.startMs, s.endMs] as const),
  );
  const heard = turns.flatMap((s, i) => (s.text === '' ? [] : [{ ...s, label: speakers.labels[i] ?? 0 }]));
  const separated = speakers.separated && new Set(heard.map((s) => s.label)).size === 2;
  return {
    status: separated ? 'completed' : 'degraded',
    speakersMethod: separated ? 'voice_clusters' : 'none',
    segments: heard.map((s) => ({
      speaker: `speaker_${(separated ? s.label : 0) + 1}`,
      startMs: Math.round(s.startMs),
      endMs: Math.round(s.endMs),
      text: s.text,
      language: s.language,
    })),
  };
}
