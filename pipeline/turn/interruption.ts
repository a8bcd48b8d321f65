import type { AgentBehavior, InterruptionMode } from '../../core/agents/types.ts';
import type { SttEvent } from '../../engines/stt/types.ts';
import type { SegmentEvent } from '../../engines/vad/segmenter.ts';
import { findStopPhrase, isBackchannel, normalizeWords } from './lexicon.ts';

/**
 * Interruption (barge-in) while the agent speaks. Caller speech during agent speech opens an *episode*
 * (`heard`); the agent talks on while the evidence comes in, so a backchannel leaves no hole in its voice, and
 * the episode ends with exactly one outcome:
 *   - `interrupted` (final: flush, abort the reply): a stop phrase ("stop", "ruko", "ek minute"), always and
 *     at once; or `min_words` words; or speech of at least the mode's threshold confirmed by words that are
 *     not all backchannels; or, before any words, voice sustained longer than a backchannel lasts
 *     (`sustainedSpeechMs`: a streaming STT's words for an interruption come within it, and a batch STT gives
 *     none while the caller talks);
 *   - `resumed` (the reply went on; nothing was held): no words by the deadline and the caller is silent (a
 *     false interruption: noise, a cough); or, with `adaptive_interruptions`, only backchannels ("haan",
 *     "ok"), reported as `ignored_backchannel` first; or words that stayed below the thresholds;
 *   - `ignored` (`agent_finished`): the reply ended by itself first.
 * With interruptions `off`, or a reply that is not interruptible (a flow node's `allow_interrupt: false`),
 * caller speech is only reported as `ignored`. Every event carries the episode, the reason and the evidence.
 *
 * Words count from the speech they belong to: interim words the STT gives before the VAD confirms the
 * caller's voice (`minSpeechMs` later, or more on a busy node) are kept and decide the episode as it opens.
 *
 * The trade-off: the agent's audio stops only on evidence that the caller takes the turn. A backchannel and
 * the start of a real interruption are both a few hundred ms of voice with no word yet (a streaming STT names
 * a word about 150 ms after its audio: "okay" once it is over, "Actually" of "Actually I need..." 400-500 ms
 * after the caller began), so nothing before the first word tells them apart: at the default mode an
 * interruption stops at its first non-backchannel word, or after `sustainedSpeechMs` of voice (650 ms); at
 * `high` voice alone stops it after 325 ms, and backchannels longer than that stop the agent too.
 *
 * A pure state machine: time is ms of audio, given with every input; `tick` lets time pass.
 */

/** How each mode scales `min_interrupt_ms` (null: never interrupt). */
export const MODE_FACTORS: Readonly<Record<InterruptionMode, number | null>> = {
  off: null,
  low: 2,
  normal: 1,
  high: 0.5,
};

/**
 * Words must arrive within this time of the caller's speech starting, or the episode is a false interruption
 * (the reply resumes) unless the caller is still talking (then it interrupts). Long enough for a streaming
 * STT's first partial (~300-800 ms), short enough that a paused agent does not feel stuck.
 */
export const FALSE_INTERRUPTION_TIMEOUT_MS = 1500;

/**
 * Voice over the agent that lasts this long with no words yet interrupts (when backchannels may not):
 * backchannels ("uh-huh", "okay", "haan ji", "achha") are over within about 600 ms of voice, and a streaming
 * STT names the first word of a real interruption within it. Counted from the speech's onset to its latest
 * voiced window, so the VAD's hangover after a short "hmm" does not count as speech.
 */
export const BACKCHANNEL_MAX_MS = 650;

/**
 * Voice with no words yet that interrupts (null: never). Without adaptive interruptions a backchannel
 * interrupts too, so nothing is gained by waiting for one: the mode's threshold. With them, a backchannel's
 * length scaled by the mode, as `min_interrupt_ms` is: `normal` waits out every backchannel (650 ms); `high`
 * (325 ms) stops on voice before a streaming STT names the first word, and cuts the agent off on backchannels
 * longer than that ("okay", "uh-huh", "haan ji": 380-560 ms of voice at a conversational pace); `low` (1.3 s)
 * leaves the decision to the words. Never below the mode's threshold.
 */
export function sustainedSpeechMs(settings: InterruptionSettings): number | null {
  const factor = MODE_FACTORS[settings.mode];
  if (factor === null) return null;
  const thresholdMs = settings.minInterruptMs * factor;
  return settings.adaptive ? Math.max(thresholdMs, BACKCHANNEL_MAX_MS * factor) : thresholdMs;
}

export interface InterruptionSettings {
  mode: InterruptionMode;
  /** Backchannels do not interrupt. */
  adaptive: boolean;
  /** Caller speech that interrupts at mode `normal`, ms. */
  minInterruptMs: number;
  /** Words that interrupt (0: off). */
  minWords: number;
}

export function interruptionSettings(behavior: AgentBehavior): InterruptionSettings {
  return {
    mode: behavior.interruptions,
    adaptive: behavior.adaptive_interruptions,
    minInterruptMs: behavior.min_interrupt_ms,
    minWords: behavior.min_words,
  };
}

export type InterruptionDecision =
  /** Caller speech over the agent: an episode opens, the agent talks on while the evidence comes in. */
  | { type: 'heard'; reason: 'caller_speech' }
  | { type: 'interrupted'; reason: 'stop_phrase' | 'min_words' | 'min_duration' | 'sustained_speech' }
  | { type: 'resumed'; reason: 'false_interruption' | 'backchannel' | 'below_threshold' }
  | { type: 'ignored_backchannel'; reason: 'backchannel' }
  | { type: 'ignored'; reason: 'interruptions_off' | 'not_interruptible' | 'agent_finished' };

export interface InterruptionEvidence {
  /** Caller speech in the episode so far, ms. */
  speechMs: number;
  /** Normalized words heard in the episode. */
  words: string[];
  /** The transcript as received. */
  text: string;
  /** Speech that interrupts in this mode, ms (null: never). */
  thresholdMs: number | null;
  /** The stop phrase heard, for `stop_phrase`. */
  stopPhrase?: string;
}

export type InterruptionEvent = InterruptionDecision & {
  /** Episode number (1, 2, ...), to group a `paused` with its outcome. */
  episode: number;
  atMs: number;
  evidence: InterruptionEvidence;
};

type TranscriptEvent = Extract<SttEvent, { type: 'partial' | 'final' }>;

interface Episode {
  id: number;
  startMs: number;
  /** Speech of closed VAD segments in the episode. */
  closedSpeechMs: number;
  /** Start of the open VAD segment, if the caller is speaking. */
  segmentStartMs: number | null;
  /** End of the latest window the VAD heard voice in, during the open segment. */
  lastVoicedMs: number | null;
  finals: string[];
  partial: string;
  /** The latest transcript was a final (nothing pending). */
  settled: boolean;
}

interface AgentReply {
  interruptible: boolean;
  /** Interrupted: nothing more happens until the next reply. */
  interrupted: boolean;
}

export class InterruptionPolicy {
  readonly settings: Readonly<InterruptionSettings>;
  readonly thresholdMs: number | null;
  /** Voice with no words yet that interrupts (null: never). */
  readonly sustainedSpeechMs: number | null;
  #agent: AgentReply | null = null;
  #episode: Episode | null = null;
  #episodes = 0;
  /** Start of the caller's open VAD segment, whatever the agent does. */
  #callerSegmentStartMs: number | null = null;
  /**
   * Interim words received while the agent speaks and no episode is open, and when: the STT can name the
   * caller's first word before the VAD confirms their voice (a VAD behind on a busy node, its `minSpeechMs`).
   * An episode that opens on speech begun before they came takes them at once.
   */
  #early: { text: string; atMs: number; final: boolean } | null = null;
  #nowMs = 0;

  constructor(settings: InterruptionSettings) {
    this.settings = Object.freeze({ ...settings });
    const factor = MODE_FACTORS[settings.mode];
    this.thresholdMs = factor === null ? null : settings.minInterruptMs * factor;
    this.sustainedSpeechMs = sustainedSpeechMs(settings);
  }

  get agentSpeaking(): boolean {
    return this.#agent !== null;
  }

  /** The agent starts playing a reply; `interruptible: false` for a flow node with `allow_interrupt: false`. */
  agentStarted(nowMs: number, options: { interruptible?: boolean } = {}): InterruptionEvent[] {
    // A new reply replaces one still playing: that one has ended.
    const ended = this.#agent ? this.agentStopped(nowMs) : [];
    this.#advance(nowMs);
    this.#agent = { interruptible: options.interruptible ?? true, interrupted: false };
    // Words before the reply began are the caller's previous turn's.
    this.#early = null;
    // The caller is already talking: their speech counts from now.
    if (this.#callerSegmentStartMs === null) return ended;
    return [...ended, ...this.#open(this.#nowMs)];
  }

  /**
   * The caller's turn was taken: its words are in (the STT committed). Speech the VAD still counts as open is
   * that turn's (a VAD that decides late, its hangover), so a reply to it that starts now does not open an
   * episode on it; new speech does.
   */
  callerTurnTaken(): void {
    this.#callerSegmentStartMs = null;
    this.#early = null;
  }

  /** The reply ended (played out, or stopped after `interrupted`). */
  agentStopped(nowMs: number): InterruptionEvent[] {
    this.#advance(nowMs);
    const open = this.#episode;
    const events = open ? [this.#event(open, { type: 'ignored', reason: 'agent_finished' })] : [];
    this.#agent = null;
    this.#episode = null;
    this.#early = null;
    return events;
  }

  onVad(event: SegmentEvent): InterruptionEvent[] {
    this.#advance(event.decidedAtMs);
    const episode = this.#episode;
    if (event.type === 'speech_start') {
      this.#callerSegmentStartMs = event.atMs;
      if (episode) {
        episode.segmentStartMs = event.atMs;
        episode.lastVoicedMs = event.decidedAtMs;
        return this.#evaluate();
      }
      return this.#open(event.atMs);
    }
    this.#callerSegmentStartMs = null;
    if (episode && episode.segmentStartMs !== null) {
      episode.closedSpeechMs += Math.max(0, event.atMs - episode.segmentStartMs);
      episode.segmentStartMs = null;
      episode.lastVoicedMs = null;
    }
    return this.#evaluate();
  }

  /** The VAD heard voice in the window that ends at `atMs` (speech confirmed or not). */
  voiced(atMs: number): InterruptionEvent[] {
    this.#advance(atMs);
    const episode = this.#episode;
    if (!episode || episode.segmentStartMs === null) return [];
    episode.lastVoicedMs = Math.max(episode.lastVoicedMs ?? atMs, atMs);
    return this.#evaluate();
  }

  /**
   * A transcript received at `nowMs`. Only an open episode takes words: transcripts outside one are the end of
   * the caller's previous turn (finals arrive after the reply may have started) or speech the VAD did not
   * count as such, and open nothing. Interim words while the agent speaks are kept, though: when the VAD then
   * confirms speech that began before they came (a VAD behind the STT), its episode has them from the start.
   */
  onTranscript(event: TranscriptEvent, nowMs: number): InterruptionEvent[] {
    this.#advance(nowMs);
    const text = event.text.trim();
    const episode = this.#episode;
    if (!episode) {
      const agent = this.#agent;
      const listening = text !== '' && agent !== null && !agent.interrupted;
      // A final with no interim before it is the end of the caller's previous turn; one after an interim
      // completes the words of the speech in progress.
      if (!listening) this.#early = null;
      else if (event.type === 'partial') this.#early = { text, atMs: this.#nowMs, final: false };
      else if (this.#early) Object.assign(this.#early, { text, final: true });
      return [];
    }
    if (event.type === 'partial') {
      episode.partial = text;
      episode.settled = false;
    } else {
      if (text) episode.finals.push(text);
      episode.partial = '';
      episode.settled = true;
    }
    return this.#evaluate();
  }

  tick(nowMs: number): InterruptionEvent[] {
    this.#advance(nowMs);
    return this.#evaluate();
  }

  /** When an open episode will be decided by time alone (ms of audio), or null. */
  nextDeadlineMs(): number | null {
    const episode = this.#episode;
    if (!episode || this.thresholdMs === null) return null;
    const times: number[] = [];
    const deadline = episode.startMs + FALSE_INTERRUPTION_TIMEOUT_MS;
    if (deadline > this.#nowMs) times.push(deadline);
    if (this.sustainedSpeechMs !== null && episode.segmentStartMs !== null) {
      const sustained = episode.segmentStartMs + this.sustainedSpeechMs - episode.closedSpeechMs;
      if (sustained > this.#nowMs) times.push(sustained);
    }
    if (episode.segmentStartMs !== null) {
      const crossing = episode.segmentStartMs + this.thresholdMs - episode.closedSpeechMs;
      if (crossing > this.#nowMs) times.push(crossing);
    }
    return times.length > 0 ? Math.min(...times) : null;
  }

  #advance(nowMs: number): void {
    if (nowMs > this.#nowMs) this.#nowMs = nowMs;
  }

  #enabled(): boolean {
    return this.thresholdMs !== null && this.#agent?.interruptible === true;
  }

  /** Caller speech began at `startMs` while the agent speaks. */
  #open(startMs: number): InterruptionEvent[] {
    const agent = this.#agent;
    if (!agent || agent.interrupted || this.#episode) return [];
    const episode: Episode = {
      id: ++this.#episodes,
      startMs,
      closedSpeechMs: 0,
      segmentStartMs: startMs,
      lastVoicedMs: this.#nowMs,
      finals: [],
      partial: '',
      settled: true,
    };
    // Words the STT gave for this speech before the VAD confirmed it count from the start.
    const early = this.#early;
    this.#early = null;
    if (early && early.atMs >= startMs) {
      if (early.final) episode.finals.push(early.text);
      else {
        episode.partial = early.text;
        episode.settled = false;
      }
    }
    if (!this.#enabled()) {
      const reason = this.thresholdMs === null ? 'interruptions_off' : 'not_interruptible';
      return [this.#event(episode, { type: 'ignored', reason })];
    }
    this.#episode = episode;
    return [this.#event(episode, { type: 'heard', reason: 'caller_speech' }), ...this.#evaluate()];
  }

  #words(episode: Episode): string[] {
    return normalizeWords([...episode.finals, episode.partial].join(' '));
  }

  #speechMs(episode: Episode): number {
    const open = episode.segmentStartMs === null ? 0 : Math.max(0, this.#nowMs - episode.segmentStartMs);
    return episode.closedSpeechMs + open;
  }

  /** Speech in the episode up to its latest voiced window: what a short sound's VAD hangover does not pad. */
  #voicedMs(episode: Episode): number {
    const start = episode.segmentStartMs;
    const open = start === null ? 0 : Math.max(0, (episode.lastVoicedMs ?? start) - start);
    return episode.closedSpeechMs + open;
  }

  #evaluate(): InterruptionEvent[] {
    const episode = this.#episode;
    const threshold = this.thresholdMs;
    if (!episode || threshold === null) return [];
    const { adaptive, minWords } = this.settings;
    const words = this.#words(episode);
    const speechMs = this.#speechMs(episode);
    const talking = episode.segmentStartMs !== null;
    const pastDeadline = this.#nowMs >= episode.startMs + FALSE_INTERRUPTION_TIMEOUT_MS;
    const stopPhrase = findStopPhrase(words);
    if (stopPhrase !== null) return this.#interrupt(episode, 'stop_phrase', stopPhrase);
    const onlyBackchannel = adaptive && isBackchannel(words);
    if (words.length > 0 && !onlyBackchannel) {
      if (minWords > 0 && words.length >= minWords) return this.#interrupt(episode, 'min_words');
      if (speechMs >= threshold) return this.#interrupt(episode, 'min_duration');
    }
    const sustained = this.sustainedSpeechMs ?? threshold;
    const voicedMs = this.#voicedMs(episode);
    if (words.length === 0) {
      if (talking && voicedMs >= sustained) return this.#interrupt(episode, 'sustained_speech');
      if (!pastDeadline) return [];
      if (talking) return speechMs >= threshold ? this.#interrupt(episode, 'sustained_speech') : [];
      return this.#resume(episode, 'false_interruption');
    }
    // "Okay, so what about..." while the STT has named only the "okay": voice well past a backchannel's length.
    if (onlyBackchannel && talking && voicedMs >= 2 * sustained)
      return this.#interrupt(episode, 'sustained_speech');
    // Words that do not interrupt: decide once the caller is silent and the STT has settled (or time is up).
    if (talking || !(episode.settled || pastDeadline)) return [];
    if (onlyBackchannel) {
      const ignored = this.#event(episode, { type: 'ignored_backchannel', reason: 'backchannel' });
      return [ignored, ...this.#resume(episode, 'backchannel')];
    }
    return this.#resume(episode, 'below_threshold');
  }

  #interrupt(
    episode: Episode,
    reason: Extract<InterruptionDecision, { type: 'interrupted' }>['reason'],
    stopPhrase?: string,
  ): InterruptionEvent[] {
    const event = this.#event(episode, { type: 'interrupted', reason }, stopPhrase);
    this.#episode = null;
    if (this.#agent) this.#agent.interrupted = true;
    return [event];
  }

  #resume(
    episode: Episode,
    reason: Extract<InterruptionDecision, { type: 'resumed' }>['reason'],
  ): InterruptionEvent[] {
    this.#episode = null;
    return [this.#event(episode, { type: 'resumed', reason })];
  }

  #event(episode: Episode, decision: InterruptionDecision, stopPhrase?: string): InterruptionEvent {
    const evidence: InterruptionEvidence = {
      speechMs: this.#speechMs(episode),
      words: this.#words(episode),
      text: [...episode.finals, episode.partial].filter(Boolean).join(' '),
      thresholdMs: this.thresholdMs,
    };
    if (stopPhrase !== undefined) evidence.stopPhrase = stopPhrase;
    return { ...decision, episode: episode.id, atMs: this.#nowMs, evidence };
  }
}
