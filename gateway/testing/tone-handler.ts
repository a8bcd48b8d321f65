import { CANONICAL_RATE } from '../../codecs/index.ts';
import type { MediaHandler, MediaHandlerFactory, StreamContext } from '../media-handler.ts';

/**
 * Plays a sine tone when the stream starts and marks its end (`tone-1`, `tone-2`, ...); once a tone's mark
 * comes back played, waits `gapMs` and plays the next, `repeats` times in all. Any DTMF digit clears what is
 * playing and stops the sequence. Inbound audio is ignored. For checking a carrier's outbound path by ear or
 * by test.
 */

export interface ToneOptions {
  readonly frequencyHz: number;
  readonly durationMs: number;
  readonly repeats: number;
  readonly gapMs: number;
  /** Peak amplitude, 0..1 of full scale. */
  readonly level: number;
}

export const DEFAULT_TONE = {
  frequencyHz: 440,
  durationMs: 1000,
  repeats: 1,
  gapMs: 500,
  level: 0.3,
} as const satisfies ToneOptions;

export function toneSamples(frequencyHz: number, durationMs: number, level: number): Int16Array {
  const n = Math.round((CANONICAL_RATE * durationMs) / 1000);
  const samples = new Int16Array(n);
  const amplitude = Math.round(32767 * Math.min(1, Math.max(0, level)));
  for (let i = 0; i < n; i++)
    samples[i] = Math.round(amplitude * Math.sin((2 * Math.PI * frequencyHz * i) / CANONICAL_RATE));
  return samples;
}

export function toneHandlerFactory(options: Partial<ToneOptions> = {}): MediaHandlerFactory {
  const o: ToneOptions = { ...DEFAULT_TONE, ...options };
  const tone = toneSamples(o.frequencyHz, o.durationMs, o.level);
  return (ctx: StreamContext): MediaHandler => {
    let played = 0;
    let stopped = false;
    let timer: NodeJS.Timeout | undefined;
    const playNext = (): void => {
      if (stopped || ctx.signal.aborted || played >= o.repeats) return;
      played++;
      ctx.output.sendAudio(tone);
      ctx.output.sendMark(`tone-${played}`);
    };
    ctx.signal.addEventListener('abort', () => clearTimeout(timer), { once: true });
    return {
      onStart: playNext,
      onAudio() {},
      onDtmf() {
        stopped = true;
        clearTimeout(timer);
        ctx.output.clear();
      },
      onPlaybackAck(ack) {
        if (ack.dropped || stopped || ack.name !== `tone-${played}`) return;
        timer = setTimeout(playNext, o.gapMs);
      },
    };
  };
}
