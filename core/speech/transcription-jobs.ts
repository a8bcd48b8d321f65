import { rootCertificates } from 'node:tls';
import type { Logger } from 'pino';
import { Agent, request } from 'undici';
import type {
  DecodedRecording,
  RecordingDecoder,
  RecordingTranscriber,
} from '../../engines/stt/recording-transcriber.ts';
import type { Clock } from '../clock.ts';
import type { Coordinator, Unsubscribe } from '../coord/types.ts';
import { ApiError } from '../errors.ts';
import { newId } from '../ids.ts';
import { AddressPolicyError, assertPublicHost, guardedLookup } from '../net/address-policy.ts';
import { PollLoop } from '../poll-loop.ts';
import type { TranscriptionOutcome, TranscriptionRecord } from '../store/transcription-types.ts';
import type { Store } from '../store/types.ts';
import { billedAudioSeconds, transcriptionCost } from './prices.ts';
import type { TranscriptionAudio } from './transcription-audio.ts';
import { TranscriptionCharges } from './transcription-charges.ts';

/** Transcription jobs and their audio are kept this long, as call recordings and transcripts are. */
export const TRANSCRIPTION_RETENTION_MS = 30 * 24 * 60 * 60 * 1000;
/** The largest recording a job takes, uploaded or fetched. */
export const TRANSCRIPTION_MAX_BYTES = 100 * 1024 * 1024;
/** A job whose worker died this many times (its claim lapsed mid-job) ends `failed` on the next claim. */
export const TRANSCRIPTION_MAX_ATTEMPTS = 3;
/** Fetching a job's `audio_url`: connect and each read at most this long. */
const FETCH_TIMEOUT_MS = 30_000;
/** The coordinator channel a queued job is announced on, so an idle worker starts it without waiting to poll. */
export const TRANSCRIPTIONS_QUEUED_CHANNEL = 'transcriptions:queued';
/** How often a worker deletes jobs past their retention. */
const PURGE_EVERY_MS = 10 * 60 * 1000;

/** The API's side of transcription jobs: create (upload or URL), read, list, delete. */
export class TranscriptionJobs {
  private readonly charges: TranscriptionCharges;

  constructor(
    private readonly store: Store,
    private readonly audio: TranscriptionAudio,
    private readonly clock: Clock,
    private readonly options: {
      allowPrivate: boolean;
      decode: RecordingDecoder;
      /** The node's STT, when it runs one: a language it cannot transcribe is refused at once. */
      transcriber?: RecordingTranscriber | undefined;
      /** Called after a job is queued, so a worker on this node starts it without waiting for its poll. */
      wake?: () => void;
    },
  ) {
    this.charges = new TranscriptionCharges(store);
  }

  /**
   * An uploaded recording: decoded now (a bad one is a 400), its price held (a wallet that cannot cover it is a
   * 402), the audio kept on disk, the job queued.
   */
  async createFromUpload(
    workspaceId: string,
    languageCode: string,
    upload: { bytes: Uint8Array; mediaType: string | null },
  ): Promise<TranscriptionRecord> {
    this.checkLanguage(languageCode);
    let audio: DecodedRecording;
    try {
      audio = this.options.decode(upload.bytes, upload.mediaType);
    } catch (error) {
      throw new ApiError('invalid_request', `file: ${(error as Error).message}`);
    }
    const id = newId('transcription', this.clock.now());
    const durationMs = audio.durationMs;
    const seconds = billedAudioSeconds(durationMs);
    const cost = transcriptionCost(seconds);
    if (cost > 0 && !(await this.charges.reserve(workspaceId, id, cost)))
      throw new ApiError(
        'insufficient_balance',
        `the wallet cannot cover ${seconds} s of audio (${cost} paise)`,
      );
    try {
      await this.audio.save(workspaceId, id, upload.bytes);
      const job = await this.store.transcriptions.create({
        id,
        workspaceId,
        languageCode,
        source: 'upload',
        audioUrl: null,
        mediaType: upload.mediaType,
        audioBytes: upload.bytes.length,
        durationMs: Math.round(durationMs),
        channels: audio.channels,
      });
      this.options.wake?.();
      return job;
    } catch (error) {
      await this.charges.settle(workspaceId, id, false, '').catch(() => undefined);
      await this.audio.remove(workspaceId, id).catch(() => undefined);
      throw error;
    }
  }

  /** A recording at an HTTPS URL: the address checked now, fetched by the worker (through the same guard). */
  async createFromUrl(
    workspaceId: string,
    languageCode: string,
    audioUrl: string,
  ): Promise<TranscriptionRecord> {
    this.checkLanguage(languageCode);
    const url = checkAudioUrl(audioUrl, this.options.allowPrivate);
    try {
      await assertPublicHost(url.hostname, { allowPrivate: this.options.allowPrivate });
    } catch (error) {
      if (error instanceof AddressPolicyError)
        throw new ApiError('invalid_request', `audio_url: refused: ${error.message}`);
      throw new ApiError('invalid_request', `audio_url: ${url.hostname} does not resolve`);
    }
    const job = await this.store.transcriptions.create({
      id: newId('transcription', this.clock.now()),
      workspaceId,
      languageCode,
      source: 'url',
      audioUrl: url.toString(),
      mediaType: null,
      audioBytes: 0,
      durationMs: null,
      channels: null,
    });
    this.options.wake?.();
    return job;
  }

  async get(workspaceId: string, id: string): Promise<TranscriptionRecord> {
    const job = await this.store.transcriptions.get(workspaceId, id, this.retainedSince());
    if (!job) throw new ApiError('not_found', `no transcription ${id}`);
    return job;
  }

  list(workspaceId: string, options: { limit: number; after?: string | undefined }) {
    return this.store.transcriptions.list(workspaceId, { ...options, since: this.retainedSince() });
  }

  /**
   * Deletes the job's text and audio. A job not ended yet is stopped (its worker's finish finds no row) and its
   * hold released; an ended job's charge stays in the ledger.
   */
  async delete(workspaceId: string, id: string): Promise<void> {
    const removed = await this.store.transaction(async (repos) => {
      const job = await repos.transcriptions.delete(workspaceId, id);
      if (job && (job.status === 'queued' || job.status === 'running'))
        await repos.wallet.release(workspaceId, id);
      return job;
    });
    if (!removed) throw new ApiError('not_found', `no transcription ${id}`);
    await this.audio.remove(workspaceId, id);
  }

  private retainedSince(): number {
    return this.clock.now() - TRANSCRIPTION_RETENTION_MS;
  }

  private checkLanguage(languageCode: string): void {
    const transcriber = this.options.transcriber;
    if (transcriber && !transcriber.transcribes(languageCode))
      throw new ApiError(
        'invalid_request',
        `language_code: no speech engine here transcribes ${languageCode}`,
      );
  }
}

function checkAudioUrl(value: string, allowPrivate: boolean): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ApiError('invalid_request', 'audio_url: not a URL');
  }
  if (url.protocol !== 'https:' && !(allowPrivate && url.protocol === 'http:'))
    throw new ApiError('invalid_request', 'audio_url: must be an https:// URL');
  if (url.username || url.password)
    throw new ApiError('invalid_request', 'audio_url: must not carry a user name or password');
  return url;
}

export interface TranscriptionWorkerOptions {
  store: Store;
  audio: TranscriptionAudio;
  decode: RecordingDecoder;
  transcriber: RecordingTranscriber;
  clock: Clock;
  logger: Logger;
  /** This worker's name on its claims. */
  owner: string;
  pollMs: number;
  leaseMs: number;
  concurrency: number;
  allowPrivate: boolean;
  /** A CA trusted for `audio_url` besides the public roots (the one webhooks and tools trust). */
  extraCa?: string | undefined;
  /** Where queued jobs are announced (`TRANSCRIPTIONS_QUEUED_CHANNEL`). */
  coord?: Pick<Coordinator, 'subscribe'>;
}

/**
 * The worker role's transcription runner. Takes queued jobs and those whose worker died (their claim lapsed:
 * they are run again from the start, the audio being kept), runs each under a claim it renews while it works,
 * and ends it in one transaction with its charge: `completed` captures the held price (one ledger entry, kind
 * `transcription`, reference the `trn_` id), `degraded` and `failed` release it. A worker that lost its claim
 * (another took the job over) finds its finish refused and charges nothing, so a job is billed once at most.
 * Deletes jobs and audio past their 30 days.
 */
export class TranscriptionWorker {
  private readonly loop: PollLoop;
  private readonly running = new Map<string, Promise<void>>();
  private readonly charges: TranscriptionCharges;
  private readonly http: Agent;
  private lastPurge = Number.NEGATIVE_INFINITY;
  private unsubscribe: Unsubscribe | undefined;
  private readonly stopping = new AbortController();

  constructor(private readonly options: TranscriptionWorkerOptions) {
    this.charges = new TranscriptionCharges(options.store);
    this.loop = new PollLoop(
      () => this.pass(),
      options.pollMs,
      (err) => options.logger.error({ err }, 'transcription worker failed'),
    );
    this.http = new Agent({
      connect: {
        lookup: guardedLookup({ allowPrivate: options.allowPrivate }),
        timeout: FETCH_TIMEOUT_MS,
        ...(options.extraCa ? { ca: [...rootCertificates, options.extraCa] } : {}),
      },
      headersTimeout: FETCH_TIMEOUT_MS,
      bodyTimeout: FETCH_TIMEOUT_MS,
    });
  }

  async start(): Promise<void> {
    if (this.options.coord)
      this.unsubscribe = await this.options.coord.subscribe(TRANSCRIPTIONS_QUEUED_CHANNEL, () => this.wake());
    this.loop.start();
  }

  wake(): void {
    this.loop.wake();
  }

  /**
   * Stops taking jobs and hands the running ones back (at the end of the turn being transcribed): their claims
   * are released, so another worker takes them over at once, from the start.
   */
  async stop(): Promise<void> {
    this.stopping.abort();
    await this.unsubscribe?.().catch(() => undefined);
    await this.loop.stop();
    await Promise.allSettled([...this.running.values()]);
    await this.http.close();
  }

  /** One pass: the retention purge when due, then as many jobs as there is room for. */
  async pass(): Promise<void> {
    const { store, clock, concurrency, owner, leaseMs } = this.options;
    if (clock.now() - this.lastPurge >= PURGE_EVERY_MS) {
      this.lastPurge = clock.now();
      await this.purge();
    }
    const room = concurrency - this.running.size;
    if (room <= 0 || this.loop.stopping) return;
    for (const id of await store.transcriptions.claimable(room)) {
      if (this.running.has(id) || this.loop.stopping) continue;
      const job = await store.transcriptions.claim(id, owner, leaseMs);
      if (!job) continue;
      const run = this.run(job).finally(() => this.running.delete(id));
      this.running.set(id, run);
    }
  }

  /** Resolves once every job this worker is running has ended. */
  async idle(): Promise<void> {
    while (this.running.size > 0) await Promise.allSettled([...this.running.values()]);
  }

  /** Deletes jobs (rows and audio) past their retention; returns how many. */
  async purge(): Promise<number> {
    const { store, audio, clock } = this.options;
    let deleted = 0;
    for (;;) {
      const old = await store.transcriptions.createdBefore(clock.now() - TRANSCRIPTION_RETENTION_MS, 100);
      for (const job of old) {
        await store.transaction(async (repos) => {
          const removed = await repos.transcriptions.delete(job.workspaceId, job.id);
          if (removed && (removed.status === 'queued' || removed.status === 'running'))
            await repos.wallet.release(job.workspaceId, job.id);
        });
        await audio.remove(job.workspaceId, job.id);
        deleted++;
      }
      if (old.length < 100) return deleted;
    }
  }

  private async run(job: TranscriptionRecord): Promise<void> {
    const { store, owner, leaseMs, logger } = this.options;
    const renewal = setInterval(
      () => void store.transcriptions.renew(job.id, owner, leaseMs).catch(() => undefined),
      Math.max(50, Math.floor(leaseMs / 3)),
    );
    try {
      const outcome = await this.outcomeOf(job);
      if (this.stopping.signal.aborted) {
        // Handed back: whatever it came to, another worker runs it again.
        await store.transcriptions.release(job.id, owner);
        return;
      }
      const ended = await this.finish(job, outcome);
      // Deleted while it ran: the audio a URL job wrote after the delete goes too.
      if (!ended && !(await store.transcriptions.get(job.workspaceId, job.id, 0)))
        await this.options.audio.remove(job.workspaceId, job.id);
      if (ended)
        logger.info(
          { transcription_id: job.id, workspace_id: job.workspaceId, status: outcome.status },
          'transcription ended',
        );
    } catch (err) {
      // A store or disk failure: the claim lapses and another pass (or worker) runs the job again.
      logger.error({ err, transcription_id: job.id }, 'transcription job failed to run');
    } finally {
      clearInterval(renewal);
    }
  }

  private async outcomeOf(job: TranscriptionRecord): Promise<TranscriptionOutcome> {
    const failed = (failure: string, audio?: DecodedRecording): TranscriptionOutcome => ({
      status: 'failed',
      durationMs: audio ? audio.durationMs : job.durationMs,
      channels: audio ? audio.channels : job.channels,
      segments: [],
      speakersMethod: null,
      failure,
      costPaise: 0,
    });
    if (job.attempts > TRANSCRIPTION_MAX_ATTEMPTS)
      return failed(`the job stopped its worker ${job.attempts - 1} times`);
    const { transcriber, owner } = this.options;
    if (!transcriber.transcribes(job.languageCode))
      return failed(`no speech engine transcribes ${job.languageCode}`);
    let bytes: Uint8Array | undefined;
    let mediaType = job.mediaType;
    if (job.source === 'url' && job.audioUrl) {
      const fetched = await this.fetchAudio(job.audioUrl);
      if ('failure' in fetched) return failed(fetched.failure);
      bytes = fetched.bytes;
      mediaType = fetched.mediaType;
      await this.options.audio.save(job.workspaceId, job.id, bytes);
    } else {
      bytes = await this.options.audio.read(job.workspaceId, job.id);
    }
    if (!bytes) return failed('the audio is gone');
    let audio: DecodedRecording;
    try {
      audio = this.options.decode(bytes, mediaType);
    } catch (error) {
      return failed(`the audio cannot be read: ${(error as Error).message}`);
    }
    const durationMs = audio.durationMs;
    await this.options.store.transcriptions.describe(job.id, owner, {
      durationMs,
      channels: audio.channels,
    });
    const seconds = billedAudioSeconds(durationMs);
    const cost = transcriptionCost(seconds);
    // Uploads were held when they were taken; a URL's price is known once fetched. Holding is idempotent.
    if (cost > 0 && !(await this.charges.reserve(job.workspaceId, job.id, cost)))
      return failed(`the wallet cannot cover ${seconds} s of audio (${cost} paise)`, audio);
    try {
      const heard = await transcriber.transcribe(audio, job.languageCode, this.stopping.signal);
      return {
        status: heard.status,
        durationMs,
        channels: audio.channels,
        segments: heard.segments,
        speakersMethod: heard.speakersMethod,
        failure: null,
        costPaise: heard.status === 'completed' ? cost : 0,
      };
    } catch (error) {
      return failed(`the speech engine failed: ${(error as Error).message}`, audio);
    }
  }

  /** Ends the job and settles its money in one transaction; false when this worker no longer holds it. */
  private finish(job: TranscriptionRecord, outcome: TranscriptionOutcome): Promise<boolean> {
    const { store, owner } = this.options;
    return store.transaction(async (repos) => {
      if (!(await repos.transcriptions.finish(job.id, owner, outcome))) return false;
      const seconds = billedAudioSeconds(outcome.durationMs ?? 0);
      const charged = await this.charges.settle(
        job.workspaceId,
        job.id,
        outcome.costPaise > 0,
        `Transcription, ${seconds} s of audio`,
      );
      if (charged !== outcome.costPaise)
        throw new Error(`charged ${charged} paise, not ${outcome.costPaise}`);
      return true;
    });
  }

  private async fetchAudio(
    address: string,
  ): Promise<{ bytes: Buffer; mediaType: string | null } | { failure: string }> {
    const url = new URL(address);
    try {
      await assertPublicHost(url.hostname, { allowPrivate: this.options.allowPrivate });
      const response = await request(url, {
        method: 'GET',
        dispatcher: this.http,
        signal: AbortSignal.timeout(10 * FETCH_TIMEOUT_MS),
      });
      if (response.statusCode < 200 || response.statusCode >= 300) {
        await response.body.dump().catch(() => {});
        return { failure: `audio_url answered HTTP ${response.statusCode}` };
      }
      const declared = Number(response.headers['content-length'] ?? 0);
      if (declared > TRANSCRIPTION_MAX_BYTES) {
        await response.body.dump().catch(() => {});
        return { failure: `audio_url: the recording is larger than ${TRANSCRIPTION_MAX_BYTES} bytes` };
      }
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of response.body) {
        size += (chunk as Buffer).length;
        if (size > TRANSCRIPTION_MAX_BYTES) {
          response.body.destroy();
          return { failure: `audio_url: the recording is larger than ${TRANSCRIPTION_MAX_BYTES} bytes` };
        }
        chunks.push(chunk as Buffer);
      }
      const type = response.headers['content-type'];
      const mediaType = typeof type === 'string' ? type.split(';')[0]!.trim().toLowerCase() : null;
      return { bytes: Buffer.concat(chunks), mediaType };
    } catch (error) {
      if (error instanceof AddressPolicyError) return { failure: `audio_url: refused: ${error.message}` };
      return { failure: `audio_url could not be fetched: ${(error as Error).message}` };
    }
  }
}
