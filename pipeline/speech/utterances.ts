import { setTimeout as sleep } from 'node:timers/promises';
import { DEFAULT_BEHAVIOR } from '../../core/agents/types.ts';
import { transcribesLanguage } from '../../engines/stt/language.ts';
import type { SpeechToText, SttEvent, SttStream, TranscriptWord } from '../../engines/stt/types.ts';
import type { VoiceActivityDetector } from '../../engines/vad/types.ts';
import { interruptionSettings } from '../turn/interruption.ts';
import { type CallerTurn, TurnTaking } from '../turn/turn-taking.ts';

/** A word with its times, ms of session audio. */
export interface WordOut {
  word: string;
  start_ms: number;
  end_ms: number;
  confidence?: number;
}

/** The engines a live speech-to-text session uses: the node's call STT, and its VAD for `auto` endpointing. */
export interface LiveSttEngines {
  /** Undefined: no language is served. */
  readonly stt: SpeechToText | undefined;
  readonly vad: VoiceActivityDetector;
}

/** The engine's name when it transcribes `language`, else undefined. */
export function engineFor(engines: LiveSttEngines, language: string): string | undefined {
  const stt = engines.stt;
  return stt && transcribesLanguage(stt.languages, language) ? stt.provider : undefined;
}

/** What the engines serve, for a refusal's message. */
export function servedLanguages(engines: LiveSttEngines): string {
  return engines.stt
    ? `${engines.stt.provider} serves ${engines.stt.languages.join(', ') || 'any language'}`
    : 'no engine';
}

/** The utterances of a session in `endpointing` mode. */
export function utterancesFor(
  engines: LiveSttEngines,
  settings: { language: string; endpointing: 'manual' | 'auto' },
  listener: UtteranceListener,
): Utterances {
  const stt = engines.stt;
  if (!stt) throw new Error('live transcription without an engine');
  return settings.endpointing === 'manual'
    ? new ManualUtterances(stt, settings.language, listener)
    : new AutoUtterances(stt, engines.vad, settings.language, listener);
}

/** One utterance's result: exactly one per utterance. Times are ms of session audio. */
export interface UtteranceFinal {
  utterance: number;
  text: string;
  words: WordOut[];
  language: string;
  startMs: number;
  endMs: number;
}

export interface UtteranceListener {
  partial(utterance: number, text: string): void;
  final(result: UtteranceFinal): void;
  /** Words can no longer be recognised in this session (the engine's stream broke). */
  lost(error: Error): void;
}

/** How utterances are cut: by the client (`manual`) or by the server's VAD and endpointer (`auto`). */
export interface Utterances {
  /** Whether an utterance is open (audio now is transcribed). */
  readonly open: boolean;
  /** `speech_start` (manual); false when one is open already or the mode has no brackets. */
  start(atMs: number): boolean;
  /** `speech_end` (manual); false when none is open. */
  stop(atMs: number): boolean;
  /** A canonical frame ending at `endMs`; true when it was taken (transcribed), false when dropped. */
  audio(frame: Int16Array, endMs: number): boolean;
  /** The session ends: the open utterance is finished and every final is out when this resolves. */
  finish(endMs: number): Promise<void>;
  /** Stops at once (the socket is gone): nothing more is emitted. */
  close(): void;
}

function wordsOut(words: readonly TranscriptWord[] | undefined, offsetMs: number): WordOut[] {
  return (words ?? []).map((w) => ({
    word: w.word,
    start_ms: Math.round(w.startMs + offsetMs),
    end_ms: Math.round(w.endMs + offsetMs),
    ...(w.confidence !== undefined ? { confidence: w.confidence } : {}),
  }));
}

const join = (parts: readonly string[]): string => parts.filter((p) => p !== '').join(' ');

/**
 * Client-bracketed utterances: each `speech_start` opens a stream of the engine, `speech_end` ends it and the
 * utterance's final is every final of that stream joined, once the stream has finished. Finals go out in
 * utterance order even when a stream finishes while the next utterance is already open.
 */
export class ManualUtterances implements Utterances {
  private current: {
    stream: SttStream;
    index: number;
    startMs: number;
    done: Promise<UtteranceFinal | null>;
  } | null = null;
  private count = 0;
  private emitted: Promise<void> = Promise.resolve();
  private readonly controller = new AbortController();
  private closed = false;

  constructor(
    private readonly stt: SpeechToText,
    private readonly language: string,
    private readonly listener: UtteranceListener,
  ) {}

  get open(): boolean {
    return this.current !== null;
  }

  start(atMs: number): boolean {
    if (this.current || this.closed) return false;
    const stream = this.stt.stream({ language: this.language, signal: this.controller.signal });
    const index = ++this.count;
    this.current = { stream, index, startMs: atMs, done: this.read(stream, index, atMs) };
    return true;
  }

  stop(atMs: number): boolean {
    const current = this.current;
    if (!current) return false;
    this.current = null;
    current.stream.end().catch(() => undefined);
    const previous = this.emitted;
    this.emitted = (async () => {
      const result = await current.done;
      await previous;
      if (result && !this.closed) this.listener.final({ ...result, endMs: Math.max(result.endMs, atMs) });
    })();
    return true;
  }

  audio(frame: Int16Array): boolean {
    if (!this.current) return false;
    this.current.stream.push(frame);
    return true;
  }

  async finish(endMs: number): Promise<void> {
    this.stop(endMs);
    await this.emitted;
  }

  close(): void {
    this.closed = true;
    this.current = null;
    this.controller.abort();
  }

  /** Reads one utterance's stream to its end; null when it broke (the listener heard why). */
  private async read(stream: SttStream, index: number, startMs: number): Promise<UtteranceFinal | null> {
    const finals: string[] = [];
    const words: WordOut[] = [];
    let language = this.language;
    let lastPartial = '';
    try {
      for await (const event of stream) {
        if (this.closed) return null;
        if (event.type === 'partial' || event.type === 'final') {
          const text = event.text.trim();
          if (event.type === 'final') {
            if (text) finals.push(text);
            words.push(...wordsOut(event.words, startMs));
            if (event.language) language = event.language;
          }
          const partial = join(event.type === 'final' ? finals : [...finals, text]);
          if (partial && partial !== lastPartial) {
            lastPartial = partial;
            this.listener.partial(index, partial);
          }
        } else if (event.type === 'error') {
          this.listener.lost(event.error);
          return null;
        }
      }
    } catch (error) {
      if (!this.closed) this.listener.lost(error instanceof Error ? error : new Error(String(error)));
      return null;
    }
    const endMs = words.at(-1)?.end_ms ?? startMs;
    return { utterance: index, text: join(finals), words, language, startMs, endMs };
  }
}

/** Audio the `auto` endpointer is given after `end` to close an utterance in progress: unbilled silence. */
const CLOSING_SILENCE_FRAMES = 5;
/** How long `end` waits for an utterance in progress to close before its words so far are its final. */
const CLOSING_WAIT_MS = 3000;

/**
 * Server-cut utterances: one stream of the engine for the whole session, and the calls' turn-taking (VAD,
 * endpointer, the wait for a batch engine's words) decides where an utterance ends, with the platform's default
 * endpointing (500 ms of silence, longer after "and", "umm"). Each ended turn with words is one final.
 */
export class AutoUtterances implements Utterances {
  private readonly listening: TurnTaking;
  private readonly stream: SttStream;
  private readonly controller = new AbortController();
  private finals: string[] = [];
  private words: WordOut[] = [];
  private language: string;
  private heardPartial = false;
  private count = 0;
  private nowMs = 0;
  private closed = false;

  constructor(
    stt: SpeechToText,
    vad: VoiceActivityDetector,
    private readonly defaultLanguage: string,
    private readonly listener: UtteranceListener,
  ) {
    this.language = defaultLanguage;
    this.stream = stt.stream({ language: defaultLanguage, signal: this.controller.signal });
    this.listening = new TurnTaking(
      vad,
      this.stream,
      {
        endpointingMs: DEFAULT_BEHAVIOR.endpointing_ms,
        interruptions: interruptionSettings(DEFAULT_BEHAVIOR),
        batchStt: !stt.capabilities.streaming,
      },
      {
        callerTurn: (turn) => this.turn(turn),
        callerTurnLost: (turn) => this.turn(turn),
        wordlessTurn: () => this.reset(),
        interruption: () => {},
        transcript: (event) => this.transcript(event),
        sttError: () => {},
        recognitionLost: (error) => this.lost(error),
        deaf: (error) => this.lost(error),
      },
      Date.now,
    );
  }

  get open(): boolean {
    return this.listening.callerSpeaking || this.finals.length > 0 || this.heardPartial;
  }

  start(): boolean {
    return false;
  }

  stop(): boolean {
    return false;
  }

  audio(frame: Int16Array, endMs: number): boolean {
    if (this.closed) return false;
    this.nowMs = endMs;
    this.listening.frame(frame, endMs);
    return true;
  }

  async finish(endMs: number): Promise<void> {
    this.nowMs = endMs;
    const silence = new Int16Array(frameSamples(1));
    const deadline = Date.now() + CLOSING_WAIT_MS;
    while (this.open && !this.closed && Date.now() < deadline) {
      for (let i = 0; i < CLOSING_SILENCE_FRAMES; i++) {
        this.nowMs += 20;
        this.listening.frame(silence, this.nowMs);
      }
      await sleep(20);
    }
    if (!this.closed && this.finals.length > 0) {
      const startMs = this.words[0]?.start_ms ?? endMs;
      this.emit(startMs, Math.min(endMs, this.words.at(-1)?.end_ms ?? endMs));
    }
    this.close();
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.listening.close();
    this.controller.abort();
  }

  private transcript(event: Extract<SttEvent, { type: 'partial' | 'final' }>): void {
    if (this.closed) return;
    const text = event.text.trim();
    if (event.type === 'final') {
      if (text) this.finals.push(text);
      this.words.push(...wordsOut(event.words, 0));
      if (event.language) this.language = event.language;
      this.heardPartial = false;
    } else if (text) {
      this.heardPartial = true;
    }
    const partial = join(event.type === 'final' ? this.finals : [...this.finals, text]);
    if (partial) this.listener.partial(this.count + 1, partial);
  }

  private turn(turn: CallerTurn): void {
    if (this.closed) return;
    this.emit(turn.speechStartMs, turn.speechEndMs);
  }

  private emit(startMs: number, endMs: number): void {
    const text = join(this.finals);
    const words = this.words;
    const language = this.language;
    this.reset();
    this.listener.final({ utterance: ++this.count, text, words, language, startMs, endMs });
  }

  private reset(): void {
    this.finals = [];
    this.words = [];
    this.heardPartial = false;
    this.language = this.defaultLanguage;
  }

  private lost(error: Error): void {
    if (!this.closed) this.listener.lost(error);
  }
}

function frameSamples(frames: number): number {
  return frames * 320;
}
