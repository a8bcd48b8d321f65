import { type ChildProcess, fork } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';

const STOP_GRACE_MS = 12_000;

/**
 * One forked child of `bench/api.ts` with typed IPC messages. Every message is buffered until a `next` call
 * takes it, so a message that arrives before anyone waits for it is not lost. An `error` message, or the child
 * exiting, fails every waiter.
 */
export class BenchChild<In extends object, Out extends { type: string }> {
  readonly process: ChildProcess;
  readonly exited: Promise<void>;
  private readonly inbox: Out[] = [];
  private readonly waiters = new Set<() => void>();
  private failure: Error | undefined;
  private exitedFlag = false;

  constructor(
    readonly name: string,
    script: string,
    options: { cwd: string; env: NodeJS.ProcessEnv; execArgv: string[]; stdout: NodeJS.WritableStream },
  ) {
    this.process = fork(script, [], {
      cwd: options.cwd,
      env: options.env,
      execArgv: options.execArgv,
      stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
      serialization: 'json',
    });
    // Children write nothing to stdout in normal runs; anything they do write goes to the parent's stderr so
    // the parent's stdout stays the table (and the JSON line).
    this.process.stdout?.pipe(options.stdout, { end: false });
    this.process.on('message', (message: Out | { type: 'error'; message: string }) => {
      if (message.type === 'error' && 'message' in message) {
        this.fail(new Error(`${this.name}: ${message.message}`));
        return;
      }
      this.inbox.push(message as Out);
      this.wake();
    });
    this.exited = new Promise((resolve) => {
      this.process.once('exit', (code, signal) => {
        this.exitedFlag = true;
        this.fail(new Error(`${this.name} exited (code ${code}, signal ${signal})`));
        resolve();
      });
      this.process.once('error', (error) => {
        this.fail(new Error(`${this.name}: ${error.message}`));
      });
    });
  }

  get pid(): number | undefined {
    return this.process.pid;
  }

  private fail(error: Error): void {
    this.failure ??= error;
    this.wake();
  }

  private wake(): void {
    for (const waiter of [...this.waiters]) waiter();
  }

  send(message: In): void {
    if (!this.process.connected) throw this.failure ?? new Error(`${this.name}: IPC channel is closed`);
    this.process.send(message);
  }

  /** The next message of `type` (that also passes `accept`), or a rejection after `timeoutMs`. */
  next<T extends Out['type']>(
    type: T,
    timeoutMs: number,
    accept: (message: Extract<Out, { type: T }>) => boolean = () => true,
  ): Promise<Extract<Out, { type: T }>> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.delete(check);
        reject(new Error(`${this.name}: no "${type}" message within ${timeoutMs} ms`));
      }, timeoutMs);
      const check = (): void => {
        const index = this.inbox.findIndex((m) => m.type === type && accept(m as Extract<Out, { type: T }>));
        if (index >= 0) {
          const [message] = this.inbox.splice(index, 1);
          clearTimeout(timer);
          this.waiters.delete(check);
          resolve(message as Extract<Out, { type: T }>);
        } else if (this.failure) {
          clearTimeout(timer);
          this.waiters.delete(check);
          reject(this.failure);
        }
      };
      this.waiters.add(check);
      check();
    });
  }

  /** Asks the child to stop (`stopMessage`), then SIGTERM, then SIGKILL; resolves once it has exited. */
  async stop(stopMessage: In): Promise<void> {
    if (this.exitedFlag) return;
    try {
      if (this.process.connected) this.process.send(stopMessage);
    } catch {
      // the channel closed in between; the signals below still apply
    }
    const exited = (ms: number) =>
      Promise.race([
        this.exited.then(() => true),
        sleep(ms, undefined, { ref: false }).then(() => this.exitedFlag),
      ]);
    if (await exited(STOP_GRACE_MS)) return;
    this.process.kill('SIGTERM');
    if (await exited(3_000)) return;
    this.process.kill('SIGKILL');
    await exited(3_000);
  }
}
