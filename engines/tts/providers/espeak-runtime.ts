/**
 * The eSpeak NG runtime: one worker thread holding the WASM module and its voice data (about 40 MB), shared by
 * every `EspeakSynthesizer` handed the same runtime. Started on first use (or `warmup()`), kept unreferenced
 * while idle so it never holds the process open.
 *
 * The module is not re-entrant (eSpeak keeps one global synthesizer), so jobs run one at a time, first come first
 * served. A job is one sentence: long replies queue sentence by sentence behind other calls' sentences instead of
 * holding the thread for a whole paragraph. Audio is forwarded block by block (about 100 ms at 22050 Hz) as eSpeak
 * makes it. Cancelling a queued job removes it; cancelling the running job sets a shared cell the worker reads
 * between blocks, so it stops within one block.
 */
import { Worker } from 'node:worker_threads';
import { EngineError } from '../../errors.ts';
import { Channel } from '../channel.ts';
import {
  ESPEAK_DEFAULT_WPM,
  type EspeakJob,
  type EspeakWorkerData,
  type EspeakWorkerMessage,
} from './espeak-protocol.ts';

/**
 * Budget for starting the thread and loading the module with its 24 MB data file: about 0.5-1 s here, several
 * seconds on a busy 2-core machine. Past this the runtime is stuck, and a call should fail over, not wait.
 */
const LOAD_TIMEOUT_MS = 30_000;

const WORKER_ENTRY = new URL('./espeak-worker.ts', import.meta.url);

export interface EspeakRuntimeOptions {
  /** The worker script; tests substitute a scripted one that speaks the same protocol. */
  workerEntry?: URL;
}

interface Job {
  message: EspeakJob;
  channel: Channel<Int16Array>;
}

/** Worker threads do not inherit tsx's loader on Node 20, so a TypeScript entry registers it first. */
function startWorker(entry: URL, data: EspeakWorkerData): Worker {
  if (!entry.pathname.endsWith('.ts')) return new Worker(entry, { workerData: data });
  const tsx = import.meta.resolve('tsx/esm/api');
  const boot = `import(${JSON.stringify(tsx)}).then((m) => { m.register(); return import(${JSON.stringify(entry.href)}); });`;
  return new Worker(boot, { eval: true, workerData: data });
}

export class EspeakRuntime {
  readonly #entry: URL;
  readonly #cancel = new Int32Array(new SharedArrayBuffer(4));
  readonly #queue: Job[] = [];
  #worker: Worker | undefined;
  #ready: Promise<void> | undefined;
  /** The load deadline while the thread starts; cleared by close, so a closed runtime holds the process no longer. */
  #loadTimer: NodeJS.Timeout | undefined;
  #isReady = false;
  #running: Job | undefined;
  #nextId = 1;
  #closed = false;

  constructor(options: EspeakRuntimeOptions = {}) {
    this.#entry = options.workerEntry ?? WORKER_ENTRY;
  }

  /**
   * Starts the thread and loads eSpeak now rather than on the first synthesis, then speaks a word with each of
   * `voices`: the first use of a language loads its rules and dictionary, about 0.1-1 s that would otherwise
   * delay a caller's first reply.
   */
  async warmup(voices: readonly string[] = []): Promise<void> {
    await this.#start();
    for (const voice of voices) for await (const _block of this.speak('1', voice, ESPEAK_DEFAULT_WPM));
  }

  /** Jobs queued or running; 0 once every synthesis has finished or been cancelled. */
  get pendingJobs(): number {
    return this.#queue.length + (this.#running ? 1 : 0);
  }

  /**
   * Speaks one piece of text with an eSpeak voice (such as `hi+f3`) at `rate` words per minute: PCM16 mono at
   * 22050 Hz, block by block. Aborting, or leaving the loop early, cancels the job and ends the iteration.
   * Throws EngineError: not retryable for an unknown voice, retryable when the runtime failed.
   */
  async *speak(text: string, voice: string, rate: number, signal?: AbortSignal): AsyncGenerator<Int16Array> {
    if (this.#closed)
      throw new EngineError('eSpeak NG runtime is closed', { engine: 'espeak', retryable: false });
    if (signal?.aborted) return;
    const job: Job = {
      message: { type: 'job', id: this.#nextId++, text, voice, rate },
      channel: new Channel<Int16Array>(),
    };
    const cancel = () => this.#cancelJob(job);
    signal?.addEventListener('abort', cancel, { once: true });
    this.#queue.push(job);
    this.#start().then(
      () => this.#pump(),
      () => {}, // #start already failed every queued job
    );
    try {
      yield* job.channel;
    } finally {
      signal?.removeEventListener('abort', cancel);
      cancel();
    }
  }

  /** Stops the thread; queued and running jobs end with a non-retryable EngineError. */
  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#loadTimer);
    const worker = this.#worker;
    this.#failAll(new EngineError('eSpeak NG runtime closed', { engine: 'espeak', retryable: false }));
    if (worker) await worker.terminate();
  }

  #start(): Promise<void> {
    if (this.#closed) {
      return Promise.reject(
        new EngineError('eSpeak NG runtime is closed', { engine: 'espeak', retryable: false }),
      );
    }
    if (this.#ready) return this.#ready;
    const worker = startWorker(this.#entry, { cancel: this.#cancel });
    this.#worker = worker;
    this.#ready = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => fail(new Error(`not ready after ${LOAD_TIMEOUT_MS} ms`)),
        LOAD_TIMEOUT_MS,
      );
      this.#loadTimer = timer;
      const fail = (error: Error): void => {
        clearTimeout(timer);
        const engineError = new EngineError(`eSpeak NG failed to load: ${error.message}`, {
          engine: 'espeak',
          retryable: true,
          cause: error,
        });
        this.#crash(worker, engineError);
        reject(engineError);
      };
      worker.on('message', (message: EspeakWorkerMessage) => {
        if (message.type === 'ready') {
          clearTimeout(timer);
          this.#isReady = true;
          resolve();
        } else if (message.type === 'load-failed') fail(new Error(message.message));
        else this.#onJobMessage(message);
      });
      worker.on('error', (error) => (this.#isReady ? this.#crash(worker, crashError(error)) : fail(error)));
      worker.on('exit', (code) => {
        if (this.#closed) return;
        const error = new Error(`worker exited with code ${code}`);
        if (this.#isReady) this.#crash(worker, crashError(error));
        else fail(error);
      });
    });
    this.#ready.catch(() => {});
    this.#updateRef();
    return this.#ready;
  }

  #onJobMessage(message: Exclude<EspeakWorkerMessage, { type: 'ready' | 'load-failed' }>): void {
    const job = this.#running;
    if (!job || job.message.id !== message.id) return;
    if (message.type === 'audio') {
      job.channel.push(message.samples);
      return;
    }
    if (message.type === 'done') job.channel.close();
    else {
      const retryable = !message.unknownVoice;
      job.channel.fail(new EngineError(message.message, { engine: 'espeak', retryable }));
    }
    this.#running = undefined;
    this.#pump();
  }

  #pump(): void {
    const job = this.#isReady && !this.#running && this.#worker ? this.#queue.shift() : undefined;
    if (job && this.#worker) {
      this.#running = job;
      this.#worker.postMessage(job.message);
    }
    this.#updateRef();
  }

  #cancelJob(job: Job): void {
    if (job.channel.closed) return;
    job.channel.discard();
    const queued = this.#queue.indexOf(job);
    if (queued >= 0) this.#queue.splice(queued, 1);
    // The running job stays `#running` until the worker confirms it stopped, so no two jobs ever overlap.
    else if (this.#running === job) Atomics.store(this.#cancel, 0, job.message.id);
    this.#updateRef();
  }

  /** The worker died: fail its jobs; the next synthesis starts a fresh one. */
  #crash(worker: Worker, error: EngineError): void {
    if (this.#worker !== worker) return;
    this.#worker = undefined;
    this.#ready = undefined;
    this.#isReady = false;
    this.#failAll(error);
    void worker.terminate();
  }

  #failAll(error: EngineError): void {
    const jobs = [...this.#queue, ...(this.#running ? [this.#running] : [])];
    this.#queue.length = 0;
    this.#running = undefined;
    for (const job of jobs) job.channel.fail(error);
  }

  /** Hold the process open only while there is work, so an idle runtime never keeps a CLI or test alive. */
  #updateRef(): void {
    if (!this.#worker) return;
    if (this.pendingJobs > 0) this.#worker.ref();
    else this.#worker.unref();
  }
}

function crashError(error: Error): EngineError {
  return new EngineError(`eSpeak NG worker failed: ${error.message}`, {
    engine: 'espeak',
    retryable: true,
    cause: error,
  });
}
