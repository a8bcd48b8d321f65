/** Samples in one 20 ms window of 16 kHz audio. */
export const VOICE_WINDOW_SAMPLES = 320;

/** Mean absolute amplitude of a window of PCM16 samples. */
export function meanAbs(window: Int16Array): number {
  let sum = 0;
  for (const v of window) sum += Math.abs(v);
  return sum / window.length;
}

/**
 * Cuts 16 kHz audio, in pieces of any size, into 20 ms windows and says of each whether it is loud enough to be
 * voice: how the fake speech-to-text servers hear a caller, by energy alone.
 */
export class VoiceWindows {
  readonly #window = new Int16Array(VOICE_WINDOW_SAMPLES);
  #filled = 0;

  constructor(private readonly level: number) {}

  /** The windows these samples complete, in order: true where voiced. */
  push(samples: Int16Array): boolean[] {
    const voiced: boolean[] = [];
    let at = 0;
    while (at < samples.length) {
      const take = Math.min(samples.length - at, VOICE_WINDOW_SAMPLES - this.#filled);
      this.#window.set(samples.subarray(at, at + take), this.#filled);
      this.#filled += take;
      at += take;
      if (this.#filled === VOICE_WINDOW_SAMPLES) {
        this.#filled = 0;
        voiced.push(meanAbs(this.#window) >= this.level);
      }
    }
    return voiced;
  }
}
