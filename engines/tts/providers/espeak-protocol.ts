/** Messages between `EspeakRuntime` (the calling thread) and `espeak-worker.ts` (the thread that owns eSpeak). */

/** eSpeak NG's output rate, fixed by its voice data. */
export const ESPEAK_RATE = 22_050;

/** eSpeak's default speaking rate, words per minute: what speed 1 means. */
export const ESPEAK_DEFAULT_WPM = 175;

export interface EspeakJob {
  type: 'job';
  /** Positive, increasing. Writing it into the shared cancel cell stops that job. */
  id: number;
  text: string;
  voice: string;
  /** Words per minute. */
  rate: number;
}

export type EspeakWorkerMessage =
  | { type: 'ready'; sampleRate: number }
  | { type: 'load-failed'; message: string }
  | { type: 'audio'; id: number; samples: Int16Array }
  | { type: 'done'; id: number; cancelled: boolean }
  | { type: 'failed'; id: number; message: string; unknownVoice: boolean };

export interface EspeakWorkerData {
  /** One Int32 over a SharedArrayBuffer: the id of the job to stop, read by the worker between audio blocks. */
  cancel: Int32Array;
}
