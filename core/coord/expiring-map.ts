/**
 * A map whose entries expire at a clock time, for the in-process coordinator. Expiry is lazy: an expired entry
 * is dropped when read, and every entry is checked at most once per `SWEEP_INTERVAL_MS` of clock time on a
 * write, so keys nobody asks for again do not pile up and no timer keeps the process alive.
 */
const SWEEP_INTERVAL_MS = 60_000;

export class ExpiringMap<V> {
  private readonly entries = new Map<string, { value: V; expiresAt: number }>();
  private nextSweepAt = Number.NEGATIVE_INFINITY;

  /** The live value of `key` at `now`; an entry expires when `now >= expiresAt`. */
  get(key: string, now: number): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (now >= entry.expiresAt) {
      this.entries.delete(key);
      return undefined;
    }
    return entry.value;
  }

  set(key: string, value: V, expiresAt: number, now: number): void {
    this.sweep(now);
    this.entries.set(key, { value, expiresAt });
  }

  delete(key: string): void {
    this.entries.delete(key);
  }

  clear(): void {
    this.entries.clear();
  }

  private sweep(now: number): void {
    if (now < this.nextSweepAt) return;
    this.nextSweepAt = now + SWEEP_INTERVAL_MS;
    for (const [key, entry] of this.entries) {
      if (now >= entry.expiresAt) this.entries.delete(key);
    }
  }
}
