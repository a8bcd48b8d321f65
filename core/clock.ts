/** Injectable time. Everything that needs "now" takes a Clock so tests can control it. */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** A clock that only moves when told to; for tests. */
export class ManualClock implements Clock {
  constructor(private current = Date.UTC(2026, 0, 1)) {}
  now(): number {
    return this.current;
  }
  advance(ms: number): void {
    this.current += ms;
  }
  set(ms: number): void {
    this.current = ms;
  }
}

/** ISO 8601 UTC with milliseconds, the one timestamp format of the API. */
export function isoTime(ms: number): string {
  return new Date(ms).toISOString();
}
