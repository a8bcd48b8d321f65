import { type ChildProcess, spawn } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * One `voiceagent serve --roles ...` child, started the way an operator starts it (`node bin/voiceagent.js`),
 * so the CPU read from /proc for its pid is the whole platform process and nothing else.
 *
 * It counts as started once it has printed what `serve` prints after start-up (`Control API: <url>`,
 * `Media gateway: <url>`). A worker-only process prints neither, so it must run at LOG_LEVEL=info and its
 * start is its "worker role: ..." log line. Log lines (pino JSON on stdout) at warn and above are passed on to
 * this process's stderr, a few of them, so the benchmark's own stdout stays the report.
 */

const STOP_GRACE_MS = 15_000;
const KILL_WAIT_MS = 5_000;
const TAIL_CHARS = 4_000;
const FORWARDED_LOG_LINES = 20;
const WARN_LEVEL = 40;
const WORKER_STARTED = 'worker role:';

export interface PlatformProcessOptions {
  /** What the reports call it, e.g. "api,gateway". */
  name: string;
  roles: readonly string[];
  root: string;
  env: NodeJS.ProcessEnv;
  startTimeoutMs: number;
  log: (line: string) => void;
  /** Options for node itself, before the script (e.g. --cpu-prof, which NODE_OPTIONS does not take). */
  nodeArgs?: readonly string[];
}

/** A TCP port on 127.0.0.1 nothing listens on right now (the platform is told it; PORT=0 would not say). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

export class PlatformProcess {
  apiUrl: string | undefined;
  gatewayUrl: string | undefined;
  private readonly child: ChildProcess;
  private readonly exited: Promise<void>;
  private exitedFlag = false;
  private stopping = false;
  private exitDescription: string | undefined;
  private stderrTail = '';
  private stdoutTail = '';
  private forwardedLogs = 0;
  private suppressedLogs = 0;
  private workerStarted = false;
  private readonly onLine = new Set<() => void>();

  private constructor(private readonly options: PlatformProcessOptions) {
    this.child = spawn(
      process.execPath,
      [
        ...(options.nodeArgs ?? []),
        path.join(options.root, 'bin/voiceagent.js'),
        'serve',
        '--roles',
        options.roles.join(','),
      ],
      { cwd: options.root, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    this.exited = new Promise((resolve) => {
      this.child.once('exit', (code, signal) => {
        this.exitedFlag = true;
        this.exitDescription = signal ? `signal ${signal}` : `code ${code}`;
        this.notify();
        resolve();
      });
      this.child.once('error', (error) => {
        this.exitedFlag = true;
        this.exitDescription = error.message;
        this.notify();
        resolve();
      });
    });
    this.child.stderr?.setEncoding('utf8');
    this.child.stderr?.on('data', (text: string) => {
      this.stderrTail = (this.stderrTail + text).slice(-TAIL_CHARS);
    });
    if (this.child.stdout) {
      createInterface({ input: this.child.stdout }).on('line', (line) => this.readLine(line));
    }
  }

  /**
   * Starts the process; `serving` then says when it serves. The caller registers `stop` at once, so a failed
   * or interrupted start still ends the process.
   */
  static launch(options: PlatformProcessOptions): PlatformProcess {
    return new PlatformProcess(options);
  }

  get name(): string {
    return this.options.name;
  }

  get pid(): number {
    const { pid } = this.child;
    if (pid === undefined) throw new Error(`${this.options.name}: the process has no pid`);
    return pid;
  }

  /** Why the process is gone when nobody stopped it; undefined while it runs (or once stopped on purpose). */
  unexpectedExit(): Error | undefined {
    if (!this.exitedFlag || this.stopping) return undefined;
    return new Error(`the platform (${this.options.name}) exited (${this.exitDescription})${this.tails()}`);
  }

  /** SIGTERM (`serve` closes cleanly on it), then SIGKILL; resolves once the process has exited. */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.exitedFlag) return;
    this.child.kill('SIGTERM');
    if (await this.exitWithin(STOP_GRACE_MS)) return;
    this.options.log(`${this.options.name}: no exit ${STOP_GRACE_MS / 1000} s after SIGTERM; killing it`);
    this.child.kill('SIGKILL');
    await this.exitWithin(KILL_WAIT_MS);
  }

  private async exitWithin(ms: number): Promise<boolean> {
    await Promise.race([this.exited, sleep(ms, undefined, { ref: false })]);
    return this.exitedFlag;
  }

  private started(): boolean {
    const { roles } = this.options;
    if (roles.includes('api') && !this.apiUrl) return false;
    if (roles.includes('gateway') && !this.gatewayUrl) return false;
    if (roles.every((role) => role === 'worker') && !this.workerStarted) return false;
    return true;
  }

  /** Resolves once the process serves; rejects, saying why, when it exits first or takes too long. */
  serving(): Promise<void> {
    const { name, startTimeoutMs } = this.options;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.onLine.delete(check);
        reject(
          new Error(`the platform (${name}) did not start within ${startTimeoutMs / 1000} s${this.tails()}`),
        );
      }, startTimeoutMs);
      const check = (): void => {
        if (this.started()) {
          clearTimeout(timer);
          this.onLine.delete(check);
          resolve();
        } else if (this.exitedFlag) {
          clearTimeout(timer);
          this.onLine.delete(check);
          reject(
            new Error(
              `the platform (${name}) did not start: exited (${this.exitDescription})${this.tails()}`,
            ),
          );
        }
      };
      this.onLine.add(check);
      check();
    });
  }

  private notify(): void {
    for (const listener of [...this.onLine]) listener();
  }

  private readLine(line: string): void {
    if (line.startsWith('{')) this.readLogLine(line);
    else {
      // The first start of an empty store prints an API key; it stays out of every message.
      if (!line.startsWith('API key')) this.stdoutTail = `${this.stdoutTail}${line}\n`.slice(-TAIL_CHARS);
      const api = /^Control API: (\S+)/.exec(line);
      if (api) this.apiUrl = api[1];
      const gateway = /^Media gateway: (\S+)/.exec(line);
      if (gateway) this.gatewayUrl = gateway[1];
    }
    this.notify();
  }

  private readLogLine(line: string): void {
    let entry: { level?: unknown; msg?: unknown };
    try {
      entry = JSON.parse(line) as { level?: unknown; msg?: unknown };
    } catch {
      return;
    }
    if (typeof entry.msg === 'string' && entry.msg.startsWith(WORKER_STARTED)) this.workerStarted = true;
    if (typeof entry.level !== 'number' || entry.level < WARN_LEVEL) return;
    this.stdoutTail = `${this.stdoutTail}${line}\n`.slice(-TAIL_CHARS);
    if (this.forwardedLogs < FORWARDED_LOG_LINES) {
      this.forwardedLogs++;
      this.options.log(`[${this.options.name}] ${line}`);
    } else if (this.suppressedLogs++ === 0) {
      this.options.log(`[${this.options.name}] further warnings are not shown`);
    }
  }

  private tails(): string {
    const parts: string[] = [];
    if (this.stderrTail.trim()) parts.push(`stderr:\n${this.stderrTail.trimEnd()}`);
    if (this.stdoutTail.trim()) parts.push(`stdout:\n${this.stdoutTail.trimEnd()}`);
    return parts.length > 0 ? `\n${parts.join('\n')}` : '';
  }
}
