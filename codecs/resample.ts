import { HalfBandDecimator, HalfBandUpsampler } from './resample-halfband.ts';
import { checkConversion, type ResampleQuality } from './resample-kernel.ts';
import { PolyphaseStage } from './resample-polyphase.ts';
import type { ResampleStage } from './resample-stage.ts';

export type { ResampleQuality } from './resample-kernel.ts';

export interface ResamplerOptions {
  /**
   * 'voice' (default): >= 70 dB stopband from 1.15 x the lower Nyquist frequency, passband to 0.85 of it.
   * 'high': 90 dB, transition 0.91..1.09, about twice the cost.
   */
  quality?: ResampleQuality;
}

/**
 * Streaming sample-rate converter for PCM16. Exact 2:1 and 1:2 ratios at 'voice' quality (8k <-> 16k, the
 * telephony hot path, and 24k <-> 48k) run through a fixed-point half-band filter (resample-halfband.ts); every
 * other ratio, and 'high' quality, through a polyphase windowed-sinc FIR (Kaiser window) for any rational ratio
 * (resample-kernel.ts). Made for the rates we carry (8000, 16000, 22050, 24000, 48000 Hz) and accepting any
 * integer rates whose reduced ratio is at most 1024 on either side.
 *
 * One instance per stream. The filter state lives across calls, so a signal fed in chunks of any sizes gives
 * exactly the same samples as fed whole, with no discontinuity at frame edges. Output sample n stands for input
 * time (n - delaySamples) / toHz: the first `delaySamples` outputs are the filter's run-in. Over a whole stream,
 * `process` returns ceil(inputSamples * toHz / fromHz) samples in total and `flush` the last `delaySamples`.
 * The delay is about 1.7 ms for 8k<->16k (27 samples at 16 kHz, 14 at 8 kHz), 1 ms for 16k<->24k and 16k<->48k.
 *
 * Filters are shared between instances of the same conversion, so an instance holds only its history (at most
 * about 2 KB). In a per-frame hot path prefer `processInto` with a preallocated output: it allocates nothing,
 * where `process` makes a new array (and garbage) per call.
 */
export class Resampler {
  readonly fromHz: number;
  readonly toHz: number;
  /** Group delay of the filter, in output samples (a whole number). */
  readonly delaySamples: number;

  readonly #stage: ResampleStage;
  #inputTotal = 0;
  #outputTotal = 0;

  constructor(fromHz: number, toHz: number, options: ResamplerOptions = {}) {
    const quality = options.quality ?? 'voice';
    checkConversion(fromHz, toHz, quality);
    this.fromHz = fromHz;
    this.toHz = toHz;
    this.#stage = stageFor(fromHz, toHz, quality);
    this.delaySamples = this.#stage.delay;
  }

  /** How many samples `process` returns for the next input of `inputLength` samples. */
  outputLength(inputLength: number): number {
    return this.#stage.outputLength(inputLength);
  }

  /**
   * Resample the next chunk of the stream. Writes into `out` when given (it must hold `outputLength(input.length)`
   * samples; the result is `out` itself when the length matches, else a view of its start), otherwise into a
   * new array.
   */
  process(input: Int16Array, out?: Int16Array): Int16Array {
    const count = this.#stage.outputLength(input.length);
    if (!out) {
      const target = new Int16Array(count);
      this.processInto(input, target);
      return target;
    }
    this.processInto(input, out);
    return out.length === count ? out : out.subarray(0, count);
  }

  /** As `process`, into `out`, without allocating; returns the number of samples written. */
  processInto(input: Int16Array, out: Int16Array): number {
    const count = this.#stage.outputLength(input.length);
    if (out.length < count) throw new RangeError(`output holds ${out.length} samples, ${count} needed`);
    this.#stage.run(input, out);
    this.#inputTotal += input.length;
    this.#outputTotal += count;
    return count;
  }

  /**
   * End of stream: returns the filter's tail (the outputs still owed, `delaySamples` over the whole stream), as if
   * the input went on with silence, then resets for a new stream.
   */
  flush(): Int16Array {
    const owed =
      Math.ceil((this.#inputTotal * this.toHz) / this.fromHz) + this.delaySamples - this.#outputTotal;
    let tail = new Int16Array(0);
    if (owed > 0) {
      let silence = Math.ceil((owed * this.fromHz) / this.toHz);
      while (this.#stage.outputLength(silence) < owed) silence++;
      tail = this.process(new Int16Array(silence)).slice(0, owed);
    }
    this.reset();
    return tail;
  }

  /** Forget the stream: silence history, start position. */
  reset(): void {
    this.#stage.reset();
    this.#inputTotal = 0;
    this.#outputTotal = 0;
  }
}

function stageFor(fromHz: number, toHz: number, quality: ResampleQuality): ResampleStage {
  if (quality === 'voice' && toHz === 2 * fromHz) return new HalfBandUpsampler();
  if (quality === 'voice' && fromHz === 2 * toHz) return new HalfBandDecimator();
  return new PolyphaseStage(fromHz, toHz, quality);
}
