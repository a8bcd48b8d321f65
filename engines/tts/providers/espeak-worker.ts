/**
 * The eSpeak NG thread. Synthesis is synchronous WASM (about 20-200 ms of CPU per sentence here), so it runs off
 * the event loop that carries live calls. Jobs arrive one at a time (EspeakRuntime queues them); each audio block
 * is posted as soon as eSpeak makes it, and the shared cancel cell is read between blocks to stop a job early.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { EspeakJob, EspeakWorkerData, EspeakWorkerMessage } from './espeak-protocol.ts';
import { type EspeakWasm, loadEspeakWasm } from './espeak-wasm.ts';

const port = parentPort!;
const { cancel } = workerData as EspeakWorkerData;

function post(message: EspeakWorkerMessage, transfer: ArrayBuffer[] = []): void {
  port.postMessage(message, transfer);
}

function run(wasm: EspeakWasm, job: EspeakJob): void {
  const { id } = job;
  if (Atomics.load(cancel, 0) === id) {
    post({ type: 'done', id, cancelled: true });
    return;
  }
  if (!wasm.setVoice(job.voice)) {
    post({ type: 'failed', id, message: `eSpeak NG has no voice '${job.voice}'`, unknownVoice: true });
    return;
  }
  wasm.setRate(job.rate);
  let cancelled = false;
  try {
    wasm.speak(job.text, (samples) => {
      if (Atomics.load(cancel, 0) === id) {
        cancelled = true;
        return true;
      }
      if (samples.length > 0) post({ type: 'audio', id, samples }, [samples.buffer as ArrayBuffer]);
      return false;
    });
  } catch (error) {
    post({ type: 'failed', id, message: String(error), unknownVoice: false });
    return;
  }
  post({ type: 'done', id, cancelled });
}

try {
  const wasm = await loadEspeakWasm();
  port.on('message', (job: EspeakJob) => run(wasm, job));
  post({ type: 'ready', sampleRate: wasm.sampleRate });
} catch (error) {
  // Nothing listens on the port then, so the thread ends by itself; the runtime terminates it anyway.
  post({ type: 'load-failed', message: String(error) });
}
