/**
 * The local English STT on phone speech: the resident PocketSphinx decoder (kept loaded, decoding while the
 * caller speaks) against the spawned one (`pocketsphinx_continuous` per utterance), on the same audio, in one run.
 *
 *   node --import tsx bench/stt.ts [--json] [--speed 1]
 *
 * Audio: the sandbox callee's English lines (gateway/carriers/sandbox) and a set of everyday agent-call
 * utterances (yes/no, numbers, dates, days, common requests), spoken by the catalogue's eSpeak NG voices,
 * turned into 8 kHz mu-law carrier frames exactly as the sandbox callee sends them, and decoded back to 16 kHz
 * as the gateway does. Each utterance goes to a fresh stream (Silero VAD, the engine's default segmentation)
 * in 20 ms frames at `--speed` times real time (1: as a call would), between 300 ms of silence before and
 * silence after until the final comes. `--silence-ms` sets the silence that ends an utterance (default: the
 * engine's, the platform's 500 ms endpointing).
 *
 * Per decoder: final latency after the end of speech (wall time from pushing the frame holding the utterance's
 * last audible sample, -50 dBFS, to the first final: the resident decoder's words are final at the first pause,
 * the spawned one's at the utterance's end), p50/p95; how long after the end of speech the stream says the speech
 * ended (a final ending the turn, or `utterance_end`), p50/p95; partials seen; word error rate (one scoring function,
 * engines/stt/testing/word-error-rate.ts) over all utterances and over the callee's lines alone. The decoders
 * take turns utterance by utterance, so both see the same machine load. With `--json` the last line is one JSON
 * object: `{ "spawn": {...}, "resident": {...} }`, each with `final_p50_ms`, `final_p95_ms`, `speech_end_p50_ms`,
 * `speech_end_p95_ms` and `wer`.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { CANONICAL_RATE, mulawDecode, Resampler } from '../codecs/index.ts';
import {
  SPHINX_DEFAULTS,
  type SphinxDecoderKind,
  type SphinxLanguageModel,
  SphinxTranscriber,
  type SttEvent,
  VAD_SEGMENTATION_DEFAULTS,
} from '../engines/stt/index.ts';
import { concat, frames, silence } from '../engines/stt/testing/speech.ts';
import { wordErrorRate } from '../engines/stt/testing/word-error-rate.ts';
import { createTextToSpeech } from '../engines/tts/index.ts';
import { SileroVad } from '../engines/vad/providers/silero.ts';

const defaultSilence = VAD_SEGMENTATION_DEFAULTS.thresholds.minSilenceMs;

import {
  CALLEE_VOICE_ID,
  DEFAULT_CALLER_SCRIPT,
  MACHINE_VOICE_ID,
} from '../gateway/carriers/sandbox/behaviour.ts';
import { toCarrierFrames } from '../gateway/carriers/sandbox/callee-audio.ts';
import { percentile } from './calls/stats.ts';

/**
 * What callers say to voice agents, written for this bench (not the sandbox's script): confirmations and
 * refusals, numbers, dates and days, and common requests. Numbers are written as spoken, so the reference is
 * the words eSpeak says.
 */
const AGENT_CALL_UTTERANCES: readonly string[] = [
  "Yes, that's right.",
  'No, not today.',
  'Yes please.',
  'No thank you.',
  'Can you call me back tomorrow?',
  'I would like to book an appointment for Monday.',
  'What time do you open on Saturday?',
  'My phone number is nine eight seven six five four three two one zero.',
  'The order number is four five six seven.',
  'I need to cancel my booking.',
  'Can I speak to a person?',
  "Friday at three o'clock works for me.",
  'The twenty first of March.',
  'I want to pay my bill.',
  'How much does it cost?',
  'Please send me the details by email.',
  'Wednesday morning is better.',
  'I already paid last week.',
  'Sorry, can you repeat that?',
  'That is all, thank you.',
  'Sunday the fifth of June.',
  'Two hundred and fifty rupees.',
  "I'm not interested.",
  'Where is my delivery?',
];

const FRAME_MS = 20;
const SAMPLES_PER_MS = 16;
const LEAD_SILENCE_MS = 300;
/**
 * Silence pushed after the speech while waiting for the final; past this the utterance has no final. Longer
 * than the spawned decoder's own time limit (SPHINX_DEFAULTS.timeoutMs), so on a busy machine its slow finals
 * still count in the word error rate.
 */
const MAX_WAIT_MS = SPHINX_DEFAULTS.timeoutMs + 5_000;
/** The last sample at least this loud (-50 dBFS) is the end of speech. */
const AUDIBLE = 104;

interface Utterance {
  text: string;
  voiceId: string;
  /** From the sandbox callee's script. */
  callee: boolean;
  /** 16 kHz, after the 8 kHz mu-law round trip. */
  audio: Int16Array;
  /** Sample index just past the last audible sample. */
  speechEnd: number;
}

interface Outcome {
  heard: string;
  finals: number;
  partials: number;
  /** Null when no final came. */
  latencyMs: number | null;
  /** Until the stream said the speech ended; null when it never did. */
  speechEndMs: number | null;
}

interface DecoderFigures {
  final_p50_ms: number | null;
  final_p95_ms: number | null;
  final_max_ms: number | null;
  speech_end_p50_ms: number | null;
  speech_end_p95_ms: number | null;
  wer: number;
  wer_callee_lines: number;
  partials: number;
  utterances: number;
  without_final: number;
  split_into_several_finals: number;
}

/**
 * The decoders compared: the spawned one (before: the model's general language model), the resident one as
 * configured by default (after: the agent-call model), and the resident one on the general model.
 */
const DECODERS: readonly { name: string; decoder: SphinxDecoderKind; languageModel?: SphinxLanguageModel }[] =
  [
    { name: 'spawn', decoder: 'spawn' },
    { name: 'resident', decoder: 'resident', languageModel: 'agent-calls' },
    { name: 'resident_general_lm', decoder: 'resident', languageModel: 'general' },
  ];

function options(): {
  json: boolean;
  speed: number;
  silenceMs: number | undefined;
  decoders: typeof DECODERS;
} {
  const { values } = parseArgs({
    options: {
      json: { type: 'boolean', default: false },
      speed: { type: 'string', default: '1' },
      'silence-ms': { type: 'string' },
      decoders: { type: 'string', default: DECODERS.map((d) => d.name).join(',') },
    },
    strict: true,
  });
  const speed = Number(values.speed);
  if (!(speed > 0)) throw new Error(`--speed must be positive, got ${values.speed}`);
  const silenceMs = values['silence-ms'] === undefined ? undefined : Number(values['silence-ms']);
  if (silenceMs !== undefined && !(silenceMs > 0)) throw new Error('--silence-ms must be positive');
  const names = values.decoders.split(',');
  const decoders = DECODERS.filter((d) => names.includes(d.name));
  if (decoders.length !== names.length) {
    throw new Error(`--decoders: a comma-separated list of ${DECODERS.map((d) => d.name).join(', ')}`);
  }
  return { json: values.json === true, speed, silenceMs, decoders };
}

async function render(): Promise<Utterance[]> {
  const tts = createTextToSpeech({ espeak: true });
  try {
    const lines = [
      ...DEFAULT_CALLER_SCRIPT.map((text) => ({ text, voiceId: CALLEE_VOICE_ID, callee: true })),
      // Both English catalogue voices, so no figure rests on one voice.
      ...AGENT_CALL_UTTERANCES.map((text, i) => ({
        text,
        voiceId: i % 2 === 0 ? CALLEE_VOICE_ID : MACHINE_VOICE_ID,
        callee: false,
      })),
    ];
    const out: Utterance[] = [];
    for (const line of lines) {
      const chunks: Int16Array[] = [];
      for await (const chunk of tts.synthesize({ voiceId: line.voiceId, text: line.text }))
        chunks.push(chunk);
      const audio = throughCarrier(chunks);
      out.push({ ...line, audio, speechEnd: lastAudible(audio) });
    }
    return out;
  } finally {
    await tts.close();
  }
}

/** As the sandbox callee sends it (8 kHz mu-law frames) and as the gateway hands it on (16 kHz PCM). */
function throughCarrier(pcm16k: Int16Array[]): Int16Array {
  const resampler = new Resampler(8000, CANONICAL_RATE);
  const parts = toCarrierFrames(pcm16k).map((frame) => resampler.process(mulawDecode(frame)));
  parts.push(resampler.flush());
  return concat(...parts);
}

function lastAudible(audio: Int16Array): number {
  for (let i = audio.length - 1; i >= 0; i--) if (Math.abs(audio[i]!) >= AUDIBLE) return i + 1;
  return 0;
}

/** Plays one utterance into a fresh stream in real time (scaled by `speed`) and waits for its final. */
async function listen(stt: SphinxTranscriber, utterance: Utterance, speed: number): Promise<Outcome> {
  const stream = stt.stream({ language: 'en-IN' });
  const events: { event: SttEvent; atMs: number }[] = [];
  const reading = (async () => {
    for await (const event of stream) events.push({ event, atMs: performance.now() });
  })();
  const speech = frames(concat(silence(LEAD_SILENCE_MS), utterance.audio));
  const endSample = LEAD_SILENCE_MS * SAMPLES_PER_MS + utterance.speechEnd;
  const quiet = silence(FRAME_MS);
  const started = performance.now();
  let speechEndAt: number | null = null;
  const isSpeechEnd = (event: SttEvent): boolean =>
    event.type === 'utterance_end' || (event.type === 'final' && event.endOfTurn);
  const speechEnded = (): boolean => events.some((e) => isSpeechEnd(e.event));
  for (let i = 0; ; i++) {
    const due = started + (i * FRAME_MS) / speed;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    stream.push(speech[i] ?? quiet);
    const pushedTo = (i + 1) * FRAME_MS * SAMPLES_PER_MS;
    if (speechEndAt === null && pushedTo >= endSample) {
      // The end of speech lies inside this frame: when its last audible sample was "heard".
      const intoFrameMs = (FRAME_MS - (pushedTo - endSample) / SAMPLES_PER_MS) / speed;
      speechEndAt = performance.now() - FRAME_MS / speed + intoFrameMs;
    }
    if (i >= speech.length && (speechEnded() || (i - speech.length) * FRAME_MS > MAX_WAIT_MS)) break;
  }
  await stream.end();
  await reading;
  const finals = events.filter((e) => e.event.type === 'final');
  const first = finals[0];
  const end = events.find((e) => isSpeechEnd(e.event));
  return {
    speechEndMs: end && speechEndAt !== null ? end.atMs - speechEndAt : null,
    heard: finals.map((e) => (e.event.type === 'final' ? e.event.text : '')).join(' '),
    finals: finals.length,
    partials: events.filter((e) => e.event.type === 'partial').length,
    latencyMs: first && speechEndAt !== null ? first.atMs - speechEndAt : null,
  };
}

function figures(utterances: Utterance[], outcomes: Outcome[]): DecoderFigures {
  const latencies = outcomes.flatMap((o) => (o.latencyMs === null ? [] : [o.latencyMs]));
  const ends = outcomes.flatMap((o) => (o.speechEndMs === null ? [] : [o.speechEndMs]));
  const pairs = utterances.map((u, i) => ({ hypothesis: outcomes[i]!.heard, reference: u.text }));
  const round = (value: number | null): number | null => (value === null ? null : Math.round(value));
  return {
    final_p50_ms: round(latencies.length ? percentile(latencies, 50) : null),
    final_p95_ms: round(latencies.length ? percentile(latencies, 95) : null),
    final_max_ms: round(latencies.length ? Math.max(...latencies) : null),
    speech_end_p50_ms: round(ends.length ? percentile(ends, 50) : null),
    speech_end_p95_ms: round(ends.length ? percentile(ends, 95) : null),
    wer: Number(wordErrorRate(pairs).toFixed(3)),
    wer_callee_lines: Number(wordErrorRate(pairs.filter((_, i) => utterances[i]!.callee)).toFixed(3)),
    partials: outcomes.reduce((n, o) => n + o.partials, 0),
    utterances: outcomes.length,
    without_final: outcomes.filter((o) => o.finals === 0).length,
    split_into_several_finals: outcomes.filter((o) => o.finals > 1).length,
  };
}

async function main(): Promise<void> {
  const { json, speed, silenceMs, decoders } = options();
  const thresholds = { ...VAD_SEGMENTATION_DEFAULTS.thresholds, minSilenceMs: silenceMs ?? 0 };
  const segmentation = silenceMs === undefined ? {} : { segmentation: { thresholds } };
  for (const { decoder } of decoders) {
    if (!SphinxTranscriber.available({ decoder })) {
      throw new Error(
        `the ${decoder} sphinx decoder is not available (apt-get install pocketsphinx pocketsphinx-en-us libpocketsphinx-dev, then npm ci)`,
      );
    }
  }
  const utterances = await render();
  const vad = await SileroVad.load();
  const engines = decoders.map(
    ({ decoder, languageModel }) =>
      new SphinxTranscriber({ decoder, vad, ...(languageModel ? { languageModel } : {}), ...segmentation }),
  );
  const outcomes: Outcome[][] = decoders.map(() => []);
  // One unmeasured utterance each: the resident pool loads its first decoder, the page cache fills.
  for (const stt of engines) await listen(stt, utterances[0]!, speed);
  for (const utterance of utterances) {
    for (const [d, stt] of engines.entries()) {
      const outcome = await listen(stt, utterance, speed);
      outcomes[d]!.push(outcome);
      if (!json) {
        const latency = outcome.latencyMs === null ? 'no final' : `${Math.round(outcome.latencyMs)} ms`;
        console.log(
          `${decoders[d]!.name.padEnd(24)} ${latency.padStart(8)}  "${utterance.text}" -> "${outcome.heard}"`,
        );
      }
    }
  }
  const report: Record<string, DecoderFigures> = Object.fromEntries(
    decoders.map((d, i) => [d.name, figures(utterances, outcomes[i]!)]),
  );
  await SileroVad.releaseAll();
  if (json) {
    console.log(
      JSON.stringify({ speed, end_silence_ms: thresholds.minSilenceMs || defaultSilence, ...report }),
    );
    return;
  }
  console.log(
    `\n${utterances.length} utterances, ${speed}x real time; final latency after the end of speech:`,
  );
  for (const [decoder, f] of Object.entries(report)) {
    console.log(
      `${decoder.padEnd(24)} final p50 ${f.final_p50_ms} ms, p95 ${f.final_p95_ms} ms, max ${f.final_max_ms} ms; ` +
        `speech end said p50 ${f.speech_end_p50_ms} ms, p95 ${f.speech_end_p95_ms} ms; ` +
        `WER ${f.wer} (callee lines ${f.wer_callee_lines}); partials ${f.partials}; ` +
        `no final ${f.without_final}, several finals ${f.split_into_several_finals}`,
    );
  }
}

await main();
