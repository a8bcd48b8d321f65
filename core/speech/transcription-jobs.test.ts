/**
 * Transcription jobs through the store, on SQLite and PostgreSQL (when DATABASE_URL is set), with a manual
 * clock: the worker runs a job and charges it once in the transaction that ends it; a job whose worker died is
 * taken over once its claim lapses (the dead worker's late finish is refused, nothing is charged twice); a job
 * that keeps killing its workers ends `failed`; an engine failure is free; jobs and audio past 30 days are
 * deleted. The engine is scripted here (its speech recognition has its own suites); the audio is not decoded.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import pino from 'pino';
import type {
  DecodedRecording,
  RecordingTranscriber,
  TranscribedRecording,
} from '../../engines/stt/recording-transcriber.ts';
import { ManualClock } from '../clock.ts';
import { storeTargets } from '../store/testing/targets.ts';
import type { Store } from '../store/types.ts';
import { TranscriptionAudio } from './transcription-audio.ts';
import {
  TRANSCRIPTION_MAX_ATTEMPTS,
  TRANSCRIPTION_RETENTION_MS,
  TranscriptionJobs,
  TranscriptionWorker,
} from './transcription-jobs.ts';

const LEASE_MS = 5_000;
const targets = await storeTargets('transcriptions');

/** Every recording is 90 s of mono audio: 45 paise at ₹18 an hour. */
const decode = (): DecodedRecording =>
  ({ audio: { sampleRate: 8000, channels: [new Int16Array(8)] }, durationMs: 90_000, channels: 1 }) as never;

function scripted(result: () => Promise<TranscribedRecording>): RecordingTranscriber {
  return { transcribes: (language) => language === 'en-IN', transcribe: result };
}

const twoVoices = async (): Promise<TranscribedRecording> => ({
  status: 'completed',
  speakersMethod: 'voice_clusters',
  segments: [
    { speaker: 'speaker_1', startMs: 0, endMs: 900, text: 'hello', language: 'en-IN' },
    { speaker: 'speaker_2', startMs: 1200, endMs: 2000, text: 'hi', language: 'en-IN' },
  ],
});

for (const target of targets) {
  describe(`transcription jobs on ${target.name}`, () => {
    const clock = new ManualClock(Date.UTC(2026, 10, 1));
    const dir = mkdtempSync(path.join(tmpdir(), 'transcriptions-'));
    const audio = new TranscriptionAudio(dir);
    let store: Store;
    let workspaceId: string;
    let jobs: TranscriptionJobs;

    const worker = (transcriber: RecordingTranscriber, owner = 'worker-a') =>
      new TranscriptionWorker({
        store,
        audio,
        decode,
        transcriber,
        clock,
        logger: pino({ level: 'silent' }),
        owner,
        pollMs: 1_000,
        leaseMs: LEASE_MS,
        concurrency: 2,
        allowPrivate: false,
      });
    const runOnce = async (w: TranscriptionWorker) => {
      await w.pass();
      await w.idle();
    };
    const ledger = async (reference: string) =>
      (await store.wallet.transactions(workspaceId, { limit: 100 })).items.filter(
        (e) => e.reference === reference,
      );
    const upload = () =>
      jobs.createFromUpload(workspaceId, 'en-IN', { bytes: Buffer.from('RIFF-ish'), mediaType: 'audio/wav' });

    before(async () => {
      store = await target.open(clock);
      workspaceId = (await store.workspaces.create({ name: 'Acme', mode: 'production' })).id;
      await store.wallet.credit(workspaceId, { amountPaise: 10_000, reference: 'topup-1' });
      jobs = new TranscriptionJobs(store, audio, clock, { allowPrivate: false, decode });
    });
    after(async () => {
      await store.close();
      await target.cleanup();
      rmSync(dir, { recursive: true, force: true });
    });

    test('an upload is held when queued, completed by a worker and charged once, in one ledger entry', async () => {
      const job = await upload();
      assert.equal(job.status, 'queued');
      assert.equal((await store.wallet.balance(workspaceId)).heldPaise, 45);
      await runOnce(worker(scripted(twoVoices)));
      const done = await jobs.get(workspaceId, job.id);
      assert.equal(done.status, 'completed');
      assert.equal(done.costPaise, 45);
      assert.equal(done.segments.length, 2);
      assert.equal(done.attempts, 1);
      assert.deepEqual(
        (await ledger(job.id)).map((e) => [e.kind, e.amountPaise]),
        [['transcription', -45]],
      );
      assert.equal((await store.wallet.balance(workspaceId)).heldPaise, 0);
    });

    test('a worker that died mid-job: its job is taken over once the claim lapses, billed once', async () => {
      const job = await upload();
      assert.ok(await store.transcriptions.claim(job.id, 'dead-worker', LEASE_MS));
      const survivor = worker(scripted(twoVoices));
      await runOnce(survivor);
      assert.equal((await jobs.get(workspaceId, job.id)).status, 'running', 'the claim still holds');
      clock.advance(LEASE_MS + 1);
      await runOnce(survivor);
      const done = await jobs.get(workspaceId, job.id);
      assert.equal(done.status, 'completed');
      assert.equal(done.attempts, 2);
      assert.equal(done.leaseOwner, 'worker-a');
      const late = await store.transaction((repos) =>
        repos.transcriptions.finish(job.id, 'dead-worker', {
          status: 'completed',
          durationMs: 90_000,
          channels: 1,
          segments: [],
          speakersMethod: 'none',
          failure: null,
          costPaise: 45,
        }),
      );
      assert.equal(late, false);
      assert.equal((await ledger(job.id)).length, 1);
    });

    test('a worker that stops hands its running job back at once; another completes it', async () => {
      const job = await upload();
      let started: () => void = () => {};
      const running = new Promise<void>((resolve) => {
        started = resolve;
      });
      const stopping = worker(
        scripted(
          () =>
            new Promise((_resolve, reject) => {
              started();
              // An engine that is mid-recording until the worker stops (the real one stops between turns).
              setTimeout(() => reject(new Error('stopped')), 50);
            }),
        ),
        'worker-stopping',
      );
      await stopping.pass();
      await running;
      await stopping.stop();
      const handedBack = await jobs.get(workspaceId, job.id);
      assert.equal(handedBack.status, 'running');
      assert.equal(handedBack.leaseUntil, null);
      assert.equal(handedBack.attempts, 0, 'a hand-back is not a death');
      await runOnce(worker(scripted(twoVoices), 'worker-b'));
      const done = await jobs.get(workspaceId, job.id);
      assert.equal(done.status, 'completed');
      assert.equal(done.leaseOwner, 'worker-b');
      assert.equal((await ledger(job.id)).length, 1);
    });

    test('a job that kills its worker every time ends failed, free', async () => {
      const job = await upload();
      for (let i = 0; i < TRANSCRIPTION_MAX_ATTEMPTS; i++) {
        assert.ok(await store.transcriptions.claim(job.id, `doomed-${i}`, LEASE_MS));
        clock.advance(LEASE_MS + 1);
      }
      await runOnce(worker(scripted(twoVoices)));
      const done = await jobs.get(workspaceId, job.id);
      assert.equal(done.status, 'failed');
      assert.match(done.failure ?? '', /stopped its worker 3 times/);
      assert.equal(done.costPaise, 0);
      assert.deepEqual(await ledger(job.id), []);
      assert.equal((await store.wallet.getHold(workspaceId, job.id))?.status, 'released');
    });

    test('an engine failure and a degraded job are free; the hold is released', async () => {
      const failing = await upload();
      await runOnce(
        worker(
          scripted(async () => {
            throw new Error('engine down');
          }),
        ),
      );
      const failed = await jobs.get(workspaceId, failing.id);
      assert.equal(failed.status, 'failed');
      assert.match(failed.failure ?? '', /engine down/);
      const degraded = await upload();
      await runOnce(
        worker(
          scripted(async () => ({
            status: 'degraded',
            speakersMethod: 'none',
            segments: [{ speaker: 'speaker_1', startMs: 0, endMs: 500, text: 'hello', language: 'en-IN' }],
          })),
        ),
      );
      assert.equal((await jobs.get(workspaceId, degraded.id)).status, 'degraded');
      for (const id of [failing.id, degraded.id]) {
        assert.deepEqual(await ledger(id), []);
        assert.equal((await store.wallet.getHold(workspaceId, id))?.status, 'released');
      }
    });

    test('deleting a queued job releases its hold; jobs past 30 days are deleted with their audio', async () => {
      const queued = await upload();
      await jobs.delete(workspaceId, queued.id);
      assert.equal((await store.wallet.getHold(workspaceId, queued.id))?.status, 'released');
      await assert.rejects(jobs.get(workspaceId, queued.id), /no transcription/);
      const old = await upload();
      await runOnce(worker(scripted(twoVoices)));
      const file = path.join(dir, workspaceId, `${old.id}.audio`);
      assert.ok(existsSync(file));
      clock.advance(TRANSCRIPTION_RETENTION_MS + 1);
      await assert.rejects(jobs.get(workspaceId, old.id), /no transcription/, 'hidden once past retention');
      const purged = await worker(scripted(twoVoices)).purge();
      assert.ok(purged >= 1);
      assert.equal(existsSync(file), false);
      assert.equal(await store.transcriptions.get(workspaceId, old.id, 0), undefined);
      assert.equal((await ledger(old.id)).length, 1, 'the charge stays in the ledger');
    });
  });
}
