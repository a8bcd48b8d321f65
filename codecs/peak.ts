import { wasmKernel } from './wasm/kernel.ts';
import { PEAK_WASM_BASE64 } from './wasm/peak-binary.ts';

/**
 * The peak of a run of samples, for per-frame level telemetry: WebAssembly SIMD (wasm/peak.wat) over a copy of
 * the samples, several times cheaper than a loop over them in JS for a 20 ms frame.
 */

const kernel = wasmKernel<{ peak(bytes: number): number }>(PEAK_WASM_BASE64);
/** Samples the kernel takes at once: its page, less room to pad to a whole vector. */
const CAPACITY = 32_760;
const kernelInput = new Int16Array(kernel.memory.buffer, 0, CAPACITY + 8);

/** The largest magnitude among `samples` (32768 for -32768); 0 for none. */
export function samplePeak(samples: Int16Array): number {
  let peak = 0;
  for (let start = 0; start < samples.length; start += CAPACITY) {
    const chunk =
      start === 0 && samples.length <= CAPACITY ? samples : samples.subarray(start, start + CAPACITY);
    kernelInput.set(chunk);
    const padded = (chunk.length + 7) & ~7;
    if (padded !== chunk.length) kernelInput.fill(0, chunk.length, padded);
    peak = Math.max(peak, kernel.peak(2 * padded));
  }
  return peak;
}
