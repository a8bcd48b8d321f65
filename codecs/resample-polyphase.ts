import { type ResampleKernel, type ResampleQuality, resampleKernel } from './resample-kernel.ts';
import { loopFor, type ResampleLoop } from './resample-loops.ts';
import type { ResampleStage } from './resample-stage.ts';

/** The loops' input, shared: `kernel.history` samples of the past, then the current input, as doubles. */
let work = new Float64Array(4096);

/**
 * Any rational ratio through the polyphase windowed-sinc filter of resample-kernel.ts. Keeps `kernel.history`
 * past input samples and the position (input index and phase) of the next output.
 */
export class PolyphaseStage implements ResampleStage {
  readonly delay: number;
  readonly #kernel: ResampleKernel;
  readonly #loop: ResampleLoop;
  readonly #history: Float64Array;
  /** Index, relative to the start of the next input, of the newest input sample of the next output. */
  #base = 0;
  #phase = 0;

  constructor(fromHz: number, toHz: number, quality: ResampleQuality) {
    this.#kernel = resampleKernel(fromHz, toHz, quality);
    this.#loop = loopFor(this.#kernel);
    this.delay = this.#kernel.delay;
    this.#history = new Float64Array(this.#kernel.history);
  }

  outputLength(inputLength: number): number {
    const { up, down } = this.#kernel;
    const position = this.#base * up + this.#phase;
    const end = inputLength * up;
    return position < end ? Math.ceil((end - position) / down) : 0;
  }

  run(input: Int16Array, out: Int16Array): number {
    const count = this.outputLength(input.length);
    const k = this.#kernel;
    const history = k.history;
    const length = input.length;
    if (history + length > work.length) work = new Float64Array(Math.max(history + length, 2 * work.length));
    const buffer = work;
    buffer.set(this.#history, 0);
    buffer.set(input, history);
    this.#loop(k, buffer, this.#base, this.#phase, out, count);
    const position = this.#base * k.up + this.#phase + count * k.down;
    this.#base = Math.floor(position / k.up) - length;
    this.#phase = position % k.up;
    const past = this.#history;
    for (let k = 0; k < history; k++) past[k] = buffer[length + k]!;
    return count;
  }

  reset(): void {
    this.#history.fill(0);
    this.#base = 0;
    this.#phase = 0;
  }
}
