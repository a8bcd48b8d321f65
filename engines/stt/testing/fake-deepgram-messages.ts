/** Server messages of the Deepgram live protocol, as a fake server sends them (times in seconds, as Deepgram's). */

export interface ResultsSpec {
  transcript: string;
  isFinal?: boolean;
  speechFinal?: boolean;
  fromFinalize?: boolean;
  /** Start of the segment in the stream, seconds. */
  start?: number;
  duration?: number;
  confidence?: number;
}

export function resultsMessage(spec: ResultsSpec): Record<string, unknown> {
  const start = spec.start ?? 0;
  const duration = spec.duration ?? 1;
  const words = spec.transcript.split(/\s+/).filter(Boolean);
  const step = words.length > 0 ? duration / words.length : 0;
  return {
    type: 'Results',
    channel_index: [0, 1],
    duration,
    start,
    is_final: spec.isFinal ?? false,
    speech_final: spec.speechFinal ?? false,
    from_finalize: spec.fromFinalize ?? false,
    channel: {
      alternatives: [
        {
          transcript: spec.transcript,
          confidence: spec.confidence ?? 0.98,
          words: words.map((word, i) => ({
            word: word.toLowerCase().replace(/[^a-z0-9']/g, ''),
            punctuated_word: word,
            start: round(start + i * step),
            end: round(start + (i + 1) * step),
            confidence: spec.confidence ?? 0.98,
          })),
        },
      ],
    },
    metadata: { request_id: 'fake', model_info: { name: 'fake' } },
  };
}

export function utteranceEndMessage(lastWordEnd: number): Record<string, unknown> {
  return { type: 'UtteranceEnd', channel: [0, 1], last_word_end: round(lastWordEnd) };
}

export function speechStartedMessage(timestamp: number): Record<string, unknown> {
  return { type: 'SpeechStarted', channel: [0], timestamp: round(timestamp) };
}

export function metadataMessage(durationS: number): Record<string, unknown> {
  return { type: 'Metadata', request_id: 'fake', duration: round(durationS), channels: 1 };
}

function round(seconds: number): number {
  return Math.round(seconds * 1000) / 1000;
}
