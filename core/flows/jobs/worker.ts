/**
 * The worker role's flow job runner: takes running jobs nobody holds (new ones, and those whose worker died:
 * its claim lapsed), runs each with a claim it renews while it works, and deletes jobs past their 24 hours.
 */
import { runDraft } from '../generate.ts';
import { FlowJobRun, type RunnerDeps } from './runner.ts';
import { storedJobInput, storedJobState } from './stored.ts';

export const FLOW_JOB_RETENTION_MS = 24 * 60 * 60 * 1000;
/** How often a worker deletes jobs past their retention. */
const PURGE_EVERY_MS = 10 * 60 * 1000;

export interface FlowJobWorkerOptions extends RunnerDeps {
  /** This worker's name on its claims. */
  owner: string;
  pollMs: number;
  concurrency: number;
  now: () => number;
}

export class FlowJobWorker {
  private readonly running = new Map<string, Promise<void>>();
  private readonly stopping = new AbortController();
  private timer: NodeJS.Timeout | undefined;
  private polling: Promise<void> | undefined;
  private lastPurge = 0;

  constructor(private readonly options: FlowJobWorkerOptions) {}

  start(): void {
    const tick = () => {
      this.polling ??= this.poll()
        .catch((err: unknown) => this.options.logger.error({ err }, 'flow job poll failed'))
        .finally(() => {
          this.polling = undefined;
        });
    };
    tick();
    this.timer = setInterval(tick, this.options.pollMs);
  }

  /** Stops taking jobs and hands the running ones back at once, for another worker to resume. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.stopping.abort();
    await this.polling;
    await Promise.allSettled([...this.running.values()]);
  }

  private async poll(): Promise<void> {
    const { store, concurrency, now } = this.options;
    if (now() - this.lastPurge > PURGE_EVERY_MS) {
      this.lastPurge = now();
      await store.flowJobs.deleteStartedBefore(now() - FLOW_JOB_RETENTION_MS);
    }
    const room = concurrency - this.running.size;
    if (room <= 0 || this.stopping.signal.aborted) return;
    for (const id of await store.flowJobs.claimable(room)) {
      if (this.running.has(id) || this.stopping.signal.aborted) continue;
      const job = await store.flowJobs.claim(id, this.options.owner, this.options.leaseMs);
      if (!job) continue;
      const run = this.runJob(job.id, job.kind, job.workspaceId, job.input, job.state).finally(() =>
        this.running.delete(id),
      );
      this.running.set(id, run);
    }
  }

  private async runJob(
    id: string,
    kind: 'refine' | 'generate',
    workspaceId: string,
    input: unknown,
    state: unknown,
  ): Promise<void> {
    const { store, owner, leaseMs, logger } = this.options;
    // The claim is renewed while a step waits on a slow model, so only a dead worker's claim lapses.
    const renewal = setInterval(
      () => void store.flowJobs.renew(id, owner, leaseMs).catch(() => undefined),
      Math.max(50, Math.floor(leaseMs / 3)),
    );
    try {
      const outcome =
        kind === 'generate'
          ? await runDraft(this.options, { id, workspaceId, input, state }, owner, this.stopping.signal)
          : await new FlowJobRun(
              this.options,
              { id, workspaceId, input: storedJobInput(input), state: storedJobState(state) },
              owner,
              this.stopping.signal,
            ).run();
      if (outcome === 'lost' && this.stopping.signal.aborted) await store.flowJobs.release(id, owner);
    } catch (err) {
      logger.error({ err, job_id: id }, 'flow job runner failed');
    } finally {
      clearInterval(renewal);
    }
  }
}
