/**
 * Decides which VAD windows are quiet enough that the model need not run on them.
 *
 * Most of a call's caller audio is silence: the caller listens while the agent talks, and pauses between
 * turns. Windows whose RMS level is well below any speech (default -60 dBFS: 10 dB under the -50 dBFS below
 * which a phone caller is not talking to us) are skipped, and reported as probability 0, but only after
 * `hangoverWindows` quiet windows in a row have still gone through the model. Those keep the model's
 * recurrent state honest: it follows the sound down to silence (the probability decays as the model has it
 * decay after speech), and then rests in the state silence leads to, which is where it would stay through a
 * longer silence anyway. The first window loud enough is judged by the model from that state.
 *
 * A line with background noise above the gate never skips a window: it behaves exactly as without a gate.
 */

/** Default gate: windows whose RMS is below this (dBFS) may be skipped. */
export const DEFAULT_SILENCE_GATE_DBFS = -60;
/**
 * Quiet windows still evaluated after sound, before skipping starts: 16 x 32 ms = 512 ms, longer than most
 * pauses inside an utterance. Measured on eSpeak NG speech after long silences, against the model on every
 * window: 16 windows leave the probabilities within 0.17 of the model's (no window on the other side of 0.5
 * on digital silence), 8 within 0.3 (one window across 0.5); restarting the state from zero when sound
 * returns instead is worse (0.76, seven windows across).
 */
export const SILENCE_GATE_HANGOVER_WINDOWS = 16;

export class SilenceGate {
  /** Mean square of float samples (-1..1) below which a window is quiet. */
  readonly #quietMeanSquare: number;
  readonly #hangoverWindows: number;
  #quietRun = 0;

  constructor(gateDbfs: number, hangoverWindows = SILENCE_GATE_HANGOVER_WINDOWS) {
    this.#quietMeanSquare = 10 ** (gateDbfs / 10);
    this.#hangoverWindows = hangoverWindows;
  }

  /** One window, by the mean square of its samples (float, -1..1): true when the model may skip it. */
  skip(meanSquare: number): boolean {
    if (meanSquare >= this.#quietMeanSquare) {
      this.#quietRun = 0;
      return false;
    }
    this.#quietRun++;
    return this.#quietRun > this.#hangoverWindows;
  }

  reset(): void {
    this.#quietRun = 0;
  }
}
