import { CANONICAL_RATE, mulawDecode, Resampler } from '../../../codecs/index.ts';
import { EnergyVad, type EnergyVadStream } from '../../../engines/vad/providers/energy.ts';

/**
 * The simulated callee's ear: voice activity (energy VAD) over the agent audio as it plays, 20 ms at a time,
 * telling when the agent has finished talking: speech heard, then `pauseMs` without it.
 */

const SPEECH_PROBABILITY = 0.5;
const FRAME_MS = 20;

export class AgentListener {
  private readonly upsampler = new Resampler(8000, CANONICAL_RATE);
  private readonly vad: EnergyVadStream = new EnergyVad().createStream();
  private speechSinceReset = false;
  private quietMs = 0;
  private heardSpeech = false;

  constructor(private readonly pauseMs: number) {}

  /** Whether the agent has said anything at all. */
  get heardAnything(): boolean {
    return this.heardSpeech;
  }

  /** One played 20 ms frame (mu-law 8 kHz). True, once per turn, when the agent's pause reaches `pauseMs`. */
  hear(mulaw: Uint8Array): boolean {
    const probabilities = this.vad.analyse(this.upsampler.process(mulawDecode(mulaw)));
    if (probabilities.some((p) => p >= SPEECH_PROBABILITY)) {
      this.speechSinceReset = true;
      this.heardSpeech = true;
      this.quietMs = 0;
      return false;
    }
    if (!this.speechSinceReset) return false;
    this.quietMs += FRAME_MS;
    if (this.quietMs < this.pauseMs) return false;
    this.speechSinceReset = false;
    return true;
  }

  /** Forgets the speech heard so far: the next turn ends after new speech. */
  reset(): void {
    this.speechSinceReset = false;
    this.quietMs = 0;
  }
}
