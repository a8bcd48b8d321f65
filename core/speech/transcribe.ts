import type { WavAudio } from '../../codecs/index.ts';
import { transcribeRecording } from '../../engines/stt/recording.ts';
import { separateSpeakers } from '../../engines/stt/speakers.ts';
import type { SpeechToText } from '../../engines/stt/types.ts';
import type { VoiceActivityDetector } from '../../engines/vad/types.ts';
import type { SpeakersMethod, TranscriptionSegmentRecord } from '../store/transcription-types.ts';

export interface TranscriptionEngines {
  stt: SpeechToText;
  vad: VoiceActivityDetector;
}

export interface TranscribedAudio {
  /** `completed` (billed) when speakers were told apart, else `degraded` (free). */
  status: 'completed' | 'degraded';
  segments: TranscriptionSegmentRecord[];
  speakersMethod: SpeakersMethod;
}

/**
 * A decoded recording transcribed with speakers: a two-channel recording gives one speaker per channel; a mono
 * one is cut into turns by the VAD and its turns' voices are clustered into two speakers (engines/stt/speakers.ts).
 * When the voices cannot be told apart (one speaker, or too few turns) every turn is `speaker_1` and the job is
 * `degraded`. Throws when the engine fails.
 */
export async function transcribeWithSpeakers(
  audio: WavAudio,
  engines: TranscriptionEngines,
  language: string,
): Promise<TranscribedAudio> {
  const segments = await transcribeRecording(audio, engines, language);
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
    segments.map((s) => [s.startMs, s.endMs] as const),
  );
  return {
    status: speakers.separated ? 'completed' : 'degraded',
    speakersMethod: speakers.separated ? 'voice_clusters' : 'none',
    segments: segments.map((s, i) => ({
      speaker: `speaker_${(speakers.separated ? (speakers.labels[i] ?? 0) : 0) + 1}`,
      startMs: Math.round(s.startMs),
      endMs: Math.round(s.endMs),
      text: s.text,
      language: s.language,
    })),
  };
}
