type Undo = () => Promise<void> | void;

/**
 * Everything the benchmark started or created, undone newest first. `defer` returns a function that runs its
 * step now (once); `runAll` runs whatever is left, on success, on failure and on a signal alike. A failing step
 * is reported and does not stop the others.
 */
export class Cleanups {
  private readonly pending: Array<{ what: string; undo: Undo }> = [];

  constructor(private readonly report: (line: string) => void) {}

  defer(what: string, undo: Undo): () => Promise<void> {
    const entry = { what, undo };
    this.pending.push(entry);
    return async () => {
      const index = this.pending.indexOf(entry);
      if (index < 0) return;
      this.pending.splice(index, 1);
      await this.attempt(entry);
    };
  }

  async runAll(): Promise<void> {
    for (let entry = this.pending.pop(); entry; entry = this.pending.pop()) await this.attempt(entry);
  }

  private async attempt(entry: { what: string; undo: Undo }): Promise<void> {
    try {
      await entry.undo();
    } catch (error) {
      this.report(`cleanup: ${entry.what} failed: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
}
