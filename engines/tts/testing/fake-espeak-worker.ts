/**
 * A scripted stand-in for espeak-worker.ts, speaking the same protocol, to test how EspeakRuntime survives its
 * thread failing. The entry URL's query picks the behaviour: `?load=fail` reports a failed load; otherwise it is
 * ready at once and answers each job with three 100 ms blocks of a tone, except that a job whose text is `crash`
 * kills the thread, and `crash-later` kills it after one block.
 */
import { parentPort } from 'node:worker_threads';
import type { EspeakJob, EspeakWorkerMessage } from '../providers/espeak-protocol.ts';

const port = parentPort!;
const post = (message: EspeakWorkerMessage) => port.postMessage(message);

/** How long `crash-later` lives after its first block: long enough for that block to reach the runtime. */
const CRASH_LATER_MS = 20;

function block(): Int16Array {
  const samples = new Int16Array(2205);
  for (let i = 0; i < samples.length; i++)
    samples[i] = Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / 22_050));
  return samples;
}

if (new URL(import.meta.url).searchParams.get('load') === 'fail') {
  post({ type: 'load-failed', message: 'scripted load failure' });
} else {
  port.on('message', (job: EspeakJob) => {
    if (job.text === 'crash') process.exit(3);
    post({ type: 'audio', id: job.id, samples: block() });
    if (job.text === 'crash-later') setTimeout(() => process.exit(3), CRASH_LATER_MS);
    else {
      post({ type: 'audio', id: job.id, samples: block() });
      post({ type: 'audio', id: job.id, samples: block() });
      post({ type: 'done', id: job.id, cancelled: false });
    }
  });
  post({ type: 'ready', sampleRate: 22_050 });
}
