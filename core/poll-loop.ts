/**
 * A background loop that runs one pass after another: at once when woken during a pass, else after `pollMs` of
 * sleep (a wake ends the sleep early). A pass that throws is reported and the loop goes on. The worker's
 * dialers run on it.
 */
export class PollLoop {
  private running = false;
  private loop: Promise<void> | undefined;
  private woken = false;
  private wakeSleeper: (() => void) | undefined;

  constructor(
    private readonly pass: () => Promise<unknown>,
    private readonly pollMs: number,
    private readonly reportError: (error: unknown) => void,
  ) {}

  /** Whether a started loop was told to stop: a pass in progress should end early. */
  get stopping(): boolean {
    return !this.running && this.loop !== undefined;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = this.run();
  }

  /** Resolves once the pass in progress (if any) has ended. */
  async stop(): Promise<void> {
    this.running = false;
    this.wake();
    await this.loop;
  }

  /** Run a pass now (or right after the one in progress). */
  wake(): void {
    this.woken = true;
    this.wakeSleeper?.();
  }

  private async run(): Promise<void> {
    while (this.running) {
      this.woken = false;
      try {
        await this.pass();
      } catch (error) {
        this.reportError(error);
      }
      if (!this.woken && this.running) await this.sleep();
    }
  }

  private sleep(): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wakeSleeper = undefined;
        resolve();
      };
      const timer = setTimeout(done, this.pollMs);
      this.wakeSleeper = done;
    });
  }
}
