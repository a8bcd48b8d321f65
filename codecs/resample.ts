import { type ResampleKernel, type ResampleQuality, resampleKernel } from './resample-kernel.ts';
import { loopFor, type ResampleLoop } from './resample-loops.ts';

export type { ResampleQuality } from './resample-kernel.ts';

export interface ResamplerOptions {
  /** 'voice' (default): 32 taps per phase at 8k<->16k, >= 70 dB stopband. 'high': twice the taps, 90 dB. */
  quality?: ResampleQuality;
}

/**
 * Streaming sample-rate converter for PCM16: a polyphase windowed-sinc FIR (Kaiser window) for any rational
 * ratio, designed in resample-kernel.ts. Made for the rates we carry (8000, 16000, 22050, 24000, 48000 Hz) and
 * accepting any integer rates whose reduced ratio is at most 1024 on either side.
 *
 * One instance per stream. The filter state lives across calls, so a signal fed in chunks of any sizes gives
 * exactly the same samples as fed whole, with no discontinuity at frame edges. Output sample n stands for input
 * time (n - delaySamples) / toHz: the first `delaySamples` outputs are the filter's run-in. Over a whole stream,
 * `process` returns ceil(inputSamples * toHz / fromHz) samples in total and `flush` the last `delaySamples`.
 * The delay is 2 ms for 8k<->16k (32 samples at 16 kHz, 16 at 8 kHz), 1 ms for 16k<->24k and 16k<->48k.
 *
 * Filters are shared between instances of the same conversion, so an instance holds only its history (about
 * 2 KB). In a per-frame hot path prefer `processInto` with a preallocated output: it allocates nothing, where
 * `process` makes a new array (and garbage) per call.
 */
export class Resampler {
  readonly fromHz: number;
  readonly toHz: number;
  /** Group delay of the filter, in output samples (a whole number). */
  readonly delaySamples: number;

  readonly #kernel: ResampleKernel;
  readonly #loop: ResampleLoop;
  /** `kernel.history` samples of the past, then the current input. */
  #buffer: Int16Array;
  /** Index, relative to the start of the next input, of the newest input sample of the next output. */
  #base = 0;
  #phase = 0;
  #inputTotal = 0;
  #outputTotal = 0;

  constructor(fromHz: number, toHz: number, options: ResamplerOptions = {}) {
    this.#kernel = resampleKernel(fromHz, toHz, options.quality ?? 'voice');
    this.fromHz = fromHz;
    this.toHz = toHz;
    this.#loop = loopFor(this.#kernel);
    this.delaySamples = this.#kernel.delay;
    this.#buffer = new Int16Array(this.#kernel.history + 1024);
  }

  /** How many samples `process` returns for the next input of `inputLength` samples. */
  outputLength(inputLength: number): number {
    const { up, down } = this.#kernel;
    const position = this.#base * up + this.#phase;
    const end = inputLength * up;
    return position < end ? Math.ceil((end - position) / down) : 0;
  }

  /**
   * Resample the next chunk of the stream. Writes into `out` when given (it must hold `outputLength(input.length)`
   * samples; the result is `out` itself when the length matches, else a view of its start), otherwise into a
   * new array.
   */
  process(input: Int16Array, out?: Int16Array): Int16Array {
    const count = this.outputLength(input.length);
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
    const count = this.outputLength(input.length);
    if (out.length < count) throw new RangeError(`output holds ${out.length} samples, ${count} needed`);
    const k = this.#kernel;
    const history = k.history;
    const length = input.length;
    if (history + length > this.#buffer.length) {
      const grown = new Int16Array(history + Math.max(length, this.#buffer.length * 2));
      grown.set(this.#buffer.subarray(0, history));
      this.#buffer = grown;
    }
    const buffer = this.#buffer;
    buffer.set(input, history);

    this.#loop(k, buffer, this.#base, this.#phase, out, count);
    const position = this.#base * k.up + this.#phase + count * k.down;
    this.#base = Math.floor(position / k.up) - length;
    this.#phase = position % k.up;
    buffer.copyWithin(0, length, length + history);
    this.#inputTotal += length;
    this.#outputTotal += count;
    return count;
  }

  /**
   * End of stream: returns the filter's tail (the outputs still owed, `delaySamples` over the whole stream), as if
   * the input went on with silence, then resets for a new stream.
   */
  flush(): Int16Array {
    const { up, down } = this.#kernel;
    const owed = Math.ceil((this.#inputTotal * up) / down) + this.delaySamples - this.#outputTotal;
    let tail = new Int16Array(0);
    if (owed > 0) {
      const position = this.#base * up + this.#phase;
      const silence = Math.floor((position + (owed - 1) * down) / up) + 1;
      tail = this.process(new Int16Array(silence)).slice(0, owed);
    }
    this.reset();
    return tail;
  }

  /** Forget the stream: silence history, start position. */
  reset(): void {
    this.#buffer.fill(0);
    this.#base = 0;
    this.#phase = 0;
    this.#inputTotal = 0;
    this.#outputTotal = 0;
  }
}
