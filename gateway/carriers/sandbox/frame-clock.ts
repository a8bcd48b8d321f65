/**
 * A real-time ticker for audio frames: tick `n` is due `n * periodMs` after `start`, each due time computed from
 * the start, so timer lateness never accumulates into drift. Ticks that fall behind (a busy event loop) run back
 * to back when the loop is free, up to `maxCatchUp` of them; older ones are skipped, as a live audio source
 * would lose them, and the tick index keeps counting real time.
 */
export class FrameClock {
  private timer: NodeJS.Timeout | undefined;
  private origin = 0;
  private next = 0;
  private running = false;

  constructor(
    private readonly periodMs: number,
    private readonly tick: (index: number) => void,
    private readonly maxCatchUp = 50,
  ) {}

  get started(): boolean {
    return this.running;
  }

  /** Runs tick 0 at once, then every period. */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.origin = performance.now();
    this.next = 0;
    this.run();
  }

  stop(): void {
    this.running = false;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private readonly run = (): void => {
    const due = Math.floor((performance.now() - this.origin) / this.periodMs) + 1;
    if (due - this.next > this.maxCatchUp) this.next = due - this.maxCatchUp;
    while (this.running && this.next < due) this.tick(this.next++);
    if (!this.running) return;
    const wait = this.origin + this.next * this.periodMs - performance.now();
    this.timer = setTimeout(this.run, Math.max(0, wait));
  };
}
