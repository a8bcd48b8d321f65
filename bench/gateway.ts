/**
 * Gateway benchmark (`npm run bench:gateway [-- --json] [-- --levels=200,400 --window=5000 --warmup=2000]`).
 *
 * N concurrent Twilio-protocol streams (20 ms mu-law frames; the echo handler, so every frame goes through
 * JSON parse, base64, mu-law decode, 8->16 kHz resampling, framing, 16->8 kHz, encode and JSON back) for
 * N = 200..1,200 step 200, first against the uWebSockets.js gateway, then against a plain `ws` server running
 * the same session code and handler, in the same run. The server runs in its own process pinned to CPU 0, the
 * load generator in another pinned to CPU 1 (taskset, when present). Printed per level: server CPU (share of
 * one core), event-loop delay p50/p99, round-trip p50/p99 at the load generator, server memory per stream, lost
 * frames, the generator's own CPU (it must stay well under one core for the figures to mean anything), and the
 * server's CPU per frame pair with the transport and kernel included, with the kernel's share of it: one core
 * divided by that figure bounds the streams a core can carry, whatever the gateway's own code costs.
 * Also measured in this process: the gateway's compute per frame pair with the transport excluded.
 *
 * With `--json` the last line is one JSON object: max_streams_p99_under_20ms, ws_max_streams_p99_under_20ms,
 * uws_vs_ws_ratio, per_frame_compute_us, and the rows.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { systemClock } from '../core/clock.ts';
import { MEDIA_ADAPTERS } from '../gateway/carriers/index.ts';
import { echoHandler } from '../gateway/handlers/echo.ts';
import { DEFAULT_STREAM_LIMITS } from '../gateway/limits.ts';
import { MediaSession } from '../gateway/media-session.ts';
import { GatewayMetrics } from '../gateway/metrics.ts';
import { Pacer } from '../gateway/pacer.ts';
import { startGateway } from '../gateway/server.ts';
import { type LoadResult, TwilioLoad } from '../gateway/testing/load-generator.ts';
import { startWsBaseline } from '../gateway/testing/ws-baseline.ts';
import { MemoryTokenClaims, StreamTokens } from '../gateway/tokens.ts';

const SECRET = 'gateway-benchmark-secret-0123456789abcdef';
const HOST = '127.0.0.1';
const P99_BUDGET_MS = 20;
/** A level counts only if (nearly) every frame came back. */
const MAX_LOSS = 0.01;

type Kind = 'uws' | 'ws';

interface ServerWindow {
  readonly cpu: number;
  /** Share of that CPU spent in the kernel (socket reads and writes, epoll). */
  readonly kernelShare: number;
  readonly loopP50Ms: number;
  readonly loopP99Ms: number;
  readonly rssKbPerStream: number;
  readonly heapKbPerStream: number;
  readonly streams: number;
  /** Summed over the open streams, since they opened. */
  readonly framesIn: number;
  readonly rateLimited: number;
  readonly droppedOut: number;
  readonly backpressureEvents: number;
}

interface Row extends ServerWindow {
  readonly kind: Kind;
  readonly n: number;
  readonly load: LoadResult;
  readonly ok: boolean;
}

const args = new Map(
  process.argv.slice(2).map((a) => {
    const [k, v] = a.replace(/^--/, '').split('=');
    return [k!, v ?? 'true'] as const;
  }),
);
const silent = pino({ level: 'silent' });
const tokensFor = () => new StreamTokens({ secret: SECRET, claims: new MemoryTokenClaims() });

// ---- roles ----

async function serverRole(kind: Kind): Promise<void> {
  const tokens = tokensFor();
  const server =
    kind === 'uws'
      ? await startGateway({
          host: HOST,
          port: 0,
          allowFallback: false,
          tokens,
          handlerFactory: echoHandler,
          registry: new Registry(),
          logger: silent,
        })
      : await startWsBaseline({ host: HOST, port: 0, tokens, handlerFactory: echoHandler, logger: silent });
  let base = { rss: 0, heap: 0 };
  const gc = (globalThis as { gc?: () => void }).gc;
  const send = (msg: object) => process.send?.(msg);
  // The server times its own window: an overloaded server reads its IPC late, so a start and an end message
  // would both arrive late and together, and frame nothing.
  const measure = (ms: number): void => {
    gc?.();
    const m = process.memoryUsage();
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    const loop = monitorEventLoopDelay({ resolution: 5 });
    loop.enable();
    setTimeout(() => {
      loop.disable();
      const cpu = process.cpuUsage(cpu0);
      const summaries = 'stats' in server ? server.stats().streams : server.summaries();
      const per = Math.max(1, summaries.length);
      const sum = (pick: (s: (typeof summaries)[number]) => number) =>
        summaries.reduce((n, s) => n + pick(s), 0);
      const window: ServerWindow = {
        cpu: (cpu.user + cpu.system) / 1000 / (performance.now() - t0),
        kernelShare: cpu.system / Math.max(1, cpu.user + cpu.system),
        loopP50Ms: loop.percentile(50) / 1e6,
        loopP99Ms: loop.percentile(99) / 1e6,
        rssKbPerStream: (m.rss - base.rss) / 1024 / per,
        heapKbPerStream: (m.heapUsed - base.heap) / 1024 / per,
        streams: summaries.length,
        framesIn: sum((s) => s.inbound.frames),
        rateLimited: sum((s) => s.inbound.rateLimited),
        droppedOut: sum((s) => s.outbound.droppedMessages),
        backpressureEvents: sum((s) => s.outbound.backpressureEvents),
      };
      send({ type: 'window', window });
    }, ms);
  };
  process.on('message', (msg: { cmd: string; ms?: number }) => {
    if (msg.cmd === 'baseline') {
      gc?.();
      const m = process.memoryUsage();
      base = { rss: m.rss, heap: m.heapUsed };
      send({ type: 'baseline' });
    } else if (msg.cmd === 'measure') {
      measure(msg.ms ?? 1000);
    } else if (msg.cmd === 'exit') {
      void server.close().then(() => process.exit(0));
    }
  });
  send({ type: 'listening', port: server.port });
}

async function loadRole(port: number, n: number, warmupMs: number, windowMs: number): Promise<void> {
  const tokens = tokensFor();
  const load = new TwilioLoad(HOST, port);
  await load.open(Array.from({ length: n }, (_, i) => tokens.mint(`call_bench_${i}`, 'twilio', 300_000)));
  load.start();
  await new Promise((resolve) => setTimeout(resolve, warmupMs));
  process.send?.({ type: 'measuring' });
  const result = await load.measure(windowMs);
  process.send?.({ type: 'result', result });
  // Keep the streams open until the server has taken its own figures.
  process.once('message', () => {
    load.stop();
    setTimeout(() => process.exit(0), 100);
  });
}

// ---- compute per frame, in process, transport excluded ----

async function perFrameComputeUs(): Promise<number> {
  const tokens = tokensFor();
  const session = new MediaSession({
    carrier: 'twilio',
    adapter: MEDIA_ADAPTERS.twilio({
      query: new URLSearchParams(),
      pathCallId: undefined,
      newStreamId: () => 's',
    }),
    transport: { send: () => 'sent', bufferedAmount: () => 0, cork: (fn) => fn(), close: () => {} },
    tokens,
    handlerFactory: echoHandler,
    metrics: new GatewayMetrics(new Registry()),
    pacer: new Pacer(),
    logger: silent,
    clock: systemClock,
    limits: {
      ...DEFAULT_STREAM_LIMITS,
      messagesPerSec: 1e9,
      messageBurst: 1e9,
      bytesPerSec: 1e12,
      byteBurst: 1e12,
    },
    urlToken: undefined,
    statedCallId: undefined,
    onEnd: () => {},
  });
  session.open();
  const { twilioStartText } = await import('../gateway/testing/load-generator.ts');
  session.receive(Buffer.from(twilioStartText(tokens.mint('call_cpu', 'twilio', 60_000))), false);
  await new Promise((resolve) => setTimeout(resolve, 10));
  const media = Buffer.from(
    JSON.stringify({
      event: 'media',
      streamSid: 'MZ00000000000000000000000000bench',
      media: { track: 'inbound', payload: Buffer.alloc(160, 0x55).toString('base64') },
    }),
  );
  for (let i = 0; i < 20_000; i++) session.receive(media, false);
  const frames = 100_000;
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < frames; i++) session.receive(media, false);
  const us = Number(process.hrtime.bigint() - t0) / 1000 / frames;
  session.close('normal');
  return us;
}

// ---- orchestration ----

function spawnRole(cpu: number, roleArgs: string[]): ChildProcess {
  const script = fileURLToPath(import.meta.url);
  const node = [process.execPath, '--expose-gc', '--import', 'tsx', script, ...roleArgs];
  const pinned = args.get('pin') !== 'false' && spawnSync('taskset', ['-c', '0', 'true']).status === 0;
  const [cmd, ...rest] = pinned ? ['taskset', '-c', String(cpu), ...node] : node;
  return spawn(cmd!, rest, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
}

function next<T>(child: ChildProcess, type: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const onMessage = (msg: { type: string } & Record<string, unknown>) => {
      if (msg.type !== type) return;
      child.off('message', onMessage);
      child.off('exit', onExit);
      resolve(msg as unknown as T);
    };
    const onExit = (code: number | null) => reject(new Error(`child exited (${code}) before "${type}"`));
    child.on('message', onMessage);
    child.once('exit', onExit);
  });
}

async function runKind(kind: Kind, levels: number[], warmupMs: number, windowMs: number): Promise<Row[]> {
  const server = spawnRole(0, ['--role=server', `--kind=${kind}`]);
  const serverExited = new Promise((resolve) => server.once('exit', resolve));
  const { port } = await next<{ port: number }>(server, 'listening');
  const rows: Row[] = [];
  for (const n of levels) {
    server.send({ cmd: 'baseline' });
    await next(server, 'baseline');
    const load = spawnRole(1, [
      '--role=load',
      `--port=${port}`,
      `--n=${n}`,
      `--warmup=${warmupMs}`,
      `--window=${windowMs}`,
    ]);
    const loadExited = new Promise((resolve) => load.once('exit', resolve));
    await next(load, 'measuring');
    const serverWindow = next<{ window: ServerWindow }>(server, 'window');
    server.send({ cmd: 'measure', ms: windowMs });
    const { result } = await next<{ result: LoadResult }>(load, 'result');
    const { window } = await serverWindow;
    load.send({ cmd: 'stop' });
    await loadExited;
    const loss = result.sent > 0 ? 1 - result.received / result.sent : 1;
    const ok = result.closedEarly === 0 && loss <= MAX_LOSS && result.rttP99Ms < P99_BUDGET_MS;
    const row: Row = { kind, n, load: result, ok, ...window };
    rows.push(row);
    printRow(row, loss);
    // Let the server notice the closed sockets before the next baseline.
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  server.send({ cmd: 'exit' });
  await serverExited;
  return rows;
}

const f = (x: number, digits = 1) => (Number.isFinite(x) ? x.toFixed(digits) : '-');

/** Frames each stream sends (and gets back) per second: one per 20 ms. */
const FRAMES_PER_STREAM_PER_S = 50;

/** The server's CPU per frame pair, transport and kernel included: what one core's capacity divides. */
const usPerFramePair = (r: Row) => (r.cpu * 1e6) / (r.n * FRAMES_PER_STREAM_PER_S);

function printRow(r: Row, loss: number): void {
  console.log(
    [
      r.kind.padEnd(4),
      String(r.n).padStart(5),
      `${f(r.cpu * 100, 0)}%`.padStart(6),
      `${f(r.loopP50Ms, 2)}/${f(r.loopP99Ms, 2)}`.padStart(13),
      `${f(r.load.rttP50Ms, 2)}/${f(r.load.rttP99Ms, 2)}`.padStart(13),
      f(r.rssKbPerStream, 1).padStart(9),
      f(r.heapKbPerStream, 1).padStart(9),
      `${f(loss * 100, 2)}%`.padStart(7),
      `${f(r.load.cpu * 100, 0)}%`.padStart(8),
      `${f(usPerFramePair(r), 1)} µs`.padStart(9),
      `${f(r.kernelShare * 100, 0)}%`.padStart(7),
      r.ok ? 'ok' : 'over',
      `(in ${r.framesIn} limited ${r.rateLimited} dropped ${r.droppedOut} bp ${r.backpressureEvents})`,
    ].join('  '),
  );
}

const maxOk = (rows: Row[]) => rows.filter((r) => r.ok).reduce((m, r) => Math.max(m, r.n), 0);

async function main(): Promise<void> {
  const role = args.get('role');
  if (role === 'server') return serverRole(args.get('kind') === 'ws' ? 'ws' : 'uws');
  if (role === 'load') {
    return loadRole(
      Number(args.get('port')),
      Number(args.get('n')),
      Number(args.get('warmup')),
      Number(args.get('window')),
    );
  }
  const levels = (args.get('levels') ?? '200,400,600,800,1000,1200').split(',').map(Number);
  const warmupMs = Number(args.get('warmup') ?? 2000);
  const windowMs = Number(args.get('window') ?? 5000);
  const computeUs = await perFrameComputeUs();
  console.log(`gateway compute per frame pair (transport excluded): ${f(computeUs, 2)} µs`);
  console.log(
    'kind  streams    cpu   loop p50/p99 ms  rtt p50/p99 ms  rss KB/s  heap KB/s    lost  loadgen cpu' +
      '  cpu/pair  kernel',
  );
  const kinds = (args.get('kinds') ?? 'uws,ws').split(',');
  const uws = kinds.includes('uws') ? await runKind('uws', levels, warmupMs, windowMs) : [];
  const ws = kinds.includes('ws') ? await runKind('ws', levels, warmupMs, windowMs) : [];
  const uwsMax = maxOk(uws);
  const wsMax = maxOk(ws);
  const summary = {
    max_streams_p99_under_20ms: uwsMax,
    ws_max_streams_p99_under_20ms: wsMax,
    uws_vs_ws_ratio: wsMax > 0 ? Number((uwsMax / wsMax).toFixed(2)) : null,
    per_frame_compute_us: Number(computeUs.toFixed(2)),
    loadgen_max_cpu: Number(Math.max(...[...uws, ...ws].map((r) => r.load.cpu)).toFixed(2)),
    levels,
    window_ms: windowMs,
    rows: [...uws, ...ws].map((r) => ({
      kind: r.kind,
      streams: r.n,
      server_cpu: Number(r.cpu.toFixed(3)),
      server_us_per_frame_pair: Number(usPerFramePair(r).toFixed(1)),
      server_kernel_share: Number(r.kernelShare.toFixed(2)),
      loop_p50_ms: Number(r.loopP50Ms.toFixed(2)),
      loop_p99_ms: Number(r.loopP99Ms.toFixed(2)),
      rtt_p50_ms: Number(r.load.rttP50Ms.toFixed(2)),
      rtt_p99_ms: Number(r.load.rttP99Ms.toFixed(2)),
      rss_kb_per_stream: Number(r.rssKbPerStream.toFixed(1)),
      heap_kb_per_stream: Number(r.heapKbPerStream.toFixed(1)),
      sent: r.load.sent,
      received: r.load.received,
      loadgen_cpu: Number(r.load.cpu.toFixed(3)),
      ok: r.ok,
    })),
  };
  console.log(
    `max streams with round-trip p99 < ${P99_BUDGET_MS} ms: uws ${uwsMax}, ws ${wsMax}` +
      (wsMax > 0 ? ` (x${summary.uws_vs_ws_ratio})` : ''),
  );
  if (args.has('json')) console.log(JSON.stringify(summary));
}

await main();
