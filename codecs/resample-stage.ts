/** One streaming conversion between two fixed rates, with its filter history: the engine behind a Resampler. */
export interface ResampleStage {
  /** Group delay of the filter in output samples (a whole number). */
  readonly delay: number;
  /** How many samples the next `run` yields for an input of `inputLength` samples. */
  outputLength(inputLength: number): number;
  /** Converts the next chunk of the stream into `out`, which holds `outputLength(input.length)`; returns that count. */
  run(input: Int16Array, out: Int16Array): number;
  /** Silence as history, back to the start position. */
  reset(): void;
}
