/**
 * Gateway benchmark (`npm run bench:gateway [-- --json] [-- --levels=200,400 --window=5000 --warmup=2000]`
 * [`--kinds=floor,uws,ws`] [`--rounds=2`] [`--pin=false`]).
 *
 * Absolute stream counts differ between hosts of the same kind; what this measures side by side, in one run, is
 * what our gateway costs against what moving the same frames costs on this host.
 *
 * N concurrent Twilio-protocol streams (20 ms mu-law frames) for N = 200..1,200 step 200, against three servers,
 * one after another at each level, `--rounds` times over, so that a change in the machine's load shows in all
 * three:
 * - floor: a bare uWebSockets.js server answering each media message with a prebuilt Twilio media message of the
 *   same size (gateway/testing/uws-floor.ts): the transport floor, no JSON parse, base64, G.711 or resampling;
 * - uws: our gateway with the echo handler, so every frame goes through JSON parse, base64, mu-law decode,
 *   8->16 kHz resampling, framing, 16->8 kHz, encode and JSON back;
 * - ws: the same session code and handler over a plain `ws` server (gateway/testing/ws-baseline.ts).
 * Each server runs in its own process pinned to CPU 0, the load generator in another pinned to CPU 1 (taskset,
 * when present). Printed per level and server: server CPU (share of one core), event-loop delay p50/p99,
 * round-trip p50/p99 at the load generator, server memory per stream, lost frames, the generator's own CPU (it
 * must stay well under one core for the figures to mean anything), and the server's CPU per frame pair answered
 * in the window, transport and kernel included (process CPU time: waiting for a core on a busy host does not
 * count), with the kernel's share of it. A level is kept up with when the generator sent at least 90% of the
 * frames the level asks for, nearly every frame came back (loss <= 1%) and no stream closed; "ok" adds round-trip
 * p99 < 20 ms. Other work on the host only ever adds to a process's CPU time, so each server's figure at a level is
 * its cheapest round that kept up, and the compute split below is the cheaper of two measurements, one before the
 * levels and one after.
 * Also measured in this process, by CPU time: the gateway's compute per frame pair with the transport excluded,
 * split into JSON, base64, G.711, resampling and our bookkeeping (bench/gateway-parts.ts).
 *
 * With `--json` the last line is one JSON object: cost_vs_floor (uws CPU per frame pair / the floor's, at the
 * highest level where both kept up; goal <= 1.3), uws_vs_ws_cpu (ws CPU per frame pair / ours, at the highest
 * level where both kept up; goal >= 1.8), each with its level and whether it was kept up at (when no level was,
 * the lowest level's figures, flagged), max_streams_p99_under_20ms, floor_max_streams_p99_under_20ms,
 * ws_max_streams_p99_under_20ms, the per-pair figures, frame_parts_us and frame_pair_shares (one uws frame pair
 * as shares: the transport floor's, and the cost above it split in the proportions of the in-process JSON,
 * base64, G.711, resampling and bookkeeping figures), and the rows.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import type { StreamSummary } from '../gateway/media-session.ts';
import { startGateway } from '../gateway/server.ts';
import { echoHandler } from '../gateway/testing/echo-handler.ts';
import { type LoadResult, TwilioLoad } from '../gateway/testing/load-generator.ts';
import { startUwsFloor } from '../gateway/testing/uws-floor.ts';
import { startWsBaseline } from '../gateway/testing/ws-baseline.ts';
import { MemoryTokenClaims, StreamTokens } from '../gateway/tokens.ts';
import { type FrameParts, measureFrameParts } from './gateway-parts.ts';

const SECRET = 'gateway-benchmark-secret-0123456789abcdef';
const HOST = '127.0.0.1';
const STREAM_SID = 'MZ00000000000000000000000000bench';
const P99_BUDGET_MS = 20;
/** A level counts only if (nearly) every frame came back. */
const MAX_LOSS = 0.01;
/** ... and the generator sent (nearly) all the frames the level asks for. */
const MIN_DELIVERED = 0.9;
/** Frames each stream sends (and gets back) per second: one per 20 ms. */
const FRAMES_PER_STREAM_PER_S = 50;

type Kind = 'floor' | 'uws' | 'ws';
const KINDS: readonly Kind[] = ['floor', 'uws', 'ws'];

interface ServerWindow {
  readonly cpu: number;
  /** CPU time over the window, µs. */
  readonly cpuUs: number;
  /** Share of that CPU spent in the kernel (socket reads and writes, epoll). */
  readonly kernelShare: number;
  readonly loopP50Ms: number;
  readonly loopP99Ms: number;
  readonly rssKbPerStream: number;
  readonly heapKbPerStream: number;
  readonly streams: number;
  /** Frame pairs the server answered within the window: what its CPU over the window paid for. */
  readonly pairs: number;
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
  readonly loss: number;
  /** Nearly every frame came back and no stream closed: the server kept up with real time. */
  readonly keptUp: boolean;
  /** Kept up, and the round trip's p99 stayed under the budget. */
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

interface Served {
  readonly port: number;
  close(): Promise<void>;
  /** The open streams' figures (none for the floor, which keeps no sessions). */
  summaries(): StreamSummary[];
  /** Frame pairs answered since the server started (media messages sent back). */
  pairs(): number;
}

async function startServed(kind: Kind): Promise<Served> {
  const tokens = tokensFor();
  if (kind === 'floor') {
    const floor = await startUwsFloor({ host: HOST, port: 0, streamSid: STREAM_SID });
    return { port: floor.port, close: floor.close, summaries: () => [], pairs: () => floor.replies };
  }
  const pairsOf = (summaries: StreamSummary[]) => summaries.reduce((n, s) => n + s.outbound.audioMessages, 0);
  if (kind === 'uws') {
    const gateway = await startGateway({
      host: HOST,
      port: 0,
      allowFallback: false,
      tokens,
      handlerFactory: echoHandler,
      registry: new Registry(),
      logger: silent,
    });
    const summaries = () => gateway.stats().streams;
    return { port: gateway.port, close: () => gateway.close(), summaries, pairs: () => pairsOf(summaries()) };
  }
  const baseline = await startWsBaseline({
    host: HOST,
    port: 0,
    tokens,
    handlerFactory: echoHandler,
    logger: silent,
  });
  return {
    port: baseline.port,
    close: () => baseline.close(),
    summaries: () => baseline.summaries(),
    pairs: () => pairsOf(baseline.summaries()),
  };
}

async function serverRole(kind: Kind): Promise<void> {
  const server = await startServed(kind);
  let base = { rss: 0, heap: 0 };
  const gc = (globalThis as { gc?: () => void }).gc;
  const send = (msg: object) => process.send?.(msg);
  // The server times its own window: an overloaded server reads its IPC late, so a start and an end message
  // would both arrive late and together, and frame nothing.
  const measure = (ms: number): void => {
    gc?.();
    const m = process.memoryUsage();
    const pairs0 = server.pairs();
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    const loop = monitorEventLoopDelay({ resolution: 5 });
    loop.enable();
    setTimeout(() => {
      loop.disable();
      const cpu = process.cpuUsage(cpu0);
      const elapsed = performance.now() - t0;
      const pairs = server.pairs() - pairs0;
      const summaries = server.summaries();
      const per = Math.max(1, summaries.length);
      const sum = (pick: (s: StreamSummary) => number) => summaries.reduce((n, s) => n + pick(s), 0);
      const window: ServerWindow = {
        cpu: (cpu.user + cpu.system) / 1000 / elapsed,
        cpuUs: cpu.user + cpu.system,
        kernelShare: cpu.system / Math.max(1, cpu.user + cpu.system),
        loopP50Ms: loop.percentile(50) / 1e6,
        loopP99Ms: loop.percentile(99) / 1e6,
        rssKbPerStream: (m.rss - base.rss) / 1024 / per,
        heapKbPerStream: (m.heapUsed - base.heap) / 1024 / per,
        streams: summaries.length,
        pairs,
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

interface Server {
  readonly child: ChildProcess;
  readonly port: number;
  readonly exited: Promise<unknown>;
}

async function startServer(kind: Kind): Promise<Server> {
  const child = spawnRole(0, ['--role=server', `--kind=${kind}`]);
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const { port } = await next<{ port: number }>(child, 'listening');
  return { child, port, exited };
}

async function runLevel(kind: Kind, server: Server, n: number, warmupMs: number, windowMs: number) {
  server.child.send({ cmd: 'baseline' });
  await next(server.child, 'baseline');
  const load = spawnRole(1, [
    '--role=load',
    `--port=${server.port}`,
    `--n=${n}`,
    `--warmup=${warmupMs}`,
    `--window=${windowMs}`,
  ]);
  const loadExited = new Promise((resolve) => load.once('exit', resolve));
  await next(load, 'measuring');
  const serverWindow = next<{ window: ServerWindow }>(server.child, 'window');
  server.child.send({ cmd: 'measure', ms: windowMs });
  const { result } = await next<{ result: LoadResult }>(load, 'result');
  const { window } = await serverWindow;
  load.send({ cmd: 'stop' });
  await loadExited;
  const loss = result.sent > 0 ? 1 - result.received / result.sent : 1;
  // A generator starved of CPU sends less than the level asks: the server's fixed per-stream costs (timers,
  // metrics) then weigh on fewer frames, and the round says nothing about the level.
  const delivered = result.sent >= MIN_DELIVERED * n * FRAMES_PER_STREAM_PER_S * (windowMs / 1000);
  const keptUp = result.closedEarly === 0 && loss <= MAX_LOSS && delivered;
  const row: Row = {
    kind,
    n,
    load: result,
    loss,
    keptUp,
    ok: keptUp && result.rttP99Ms < P99_BUDGET_MS,
    ...window,
  };
  printRow(row);
  // Let the server notice the closed sockets before the next baseline.
  await new Promise((resolve) => setTimeout(resolve, 500));
  return row;
}

const f = (x: number, digits = 1) => (Number.isFinite(x) ? x.toFixed(digits) : '-');

/** The server's CPU per frame pair answered in the window, transport and kernel included. */
const usPerFramePair = (r: Row) => (r.pairs > 0 ? r.cpuUs / r.pairs : Number.NaN);

function printRow(r: Row): void {
  console.log(
    [
      r.kind.padEnd(5),
      String(r.n).padStart(5),
      `${f(r.cpu * 100, 0)}%`.padStart(6),
      `${f(r.loopP50Ms, 2)}/${f(r.loopP99Ms, 2)}`.padStart(13),
      `${f(r.load.rttP50Ms, 2)}/${f(r.load.rttP99Ms, 2)}`.padStart(13),
      f(r.rssKbPerStream, 1).padStart(9),
      f(r.heapKbPerStream, 1).padStart(9),
      `${f(r.loss * 100, 2)}%`.padStart(7),
      `${f(r.load.cpu * 100, 0)}%`.padStart(8),
      `${f(usPerFramePair(r), 1)} µs`.padStart(9),
      `${f(r.kernelShare * 100, 0)}%`.padStart(7),
      r.ok ? 'ok' : r.keptUp ? 'slow' : 'over',
      r.kind === 'floor'
        ? `(pairs ${r.pairs})`
        : `(pairs ${r.pairs} limited ${r.rateLimited} dropped ${r.droppedOut} bp ${r.backpressureEvents})`,
    ].join('  '),
  );
}

const maxOk = (rows: Row[]) => rows.filter((r) => r.ok).reduce((m, r) => Math.max(m, r.n), 0);

/**
 * Of a server's rounds at one level that kept up with real time, the one that cost the least CPU per frame pair:
 * other work on the host only ever adds to a process's CPU time (cache and core contention), so the cheapest
 * round is the closest to the server's own cost.
 */
function best(rows: Row[], kind: Kind, n: number): Row | undefined {
  let found: Row | undefined;
  for (const r of rows) {
    if (r.kind !== kind || r.n !== n || !r.keptUp || !Number.isFinite(usPerFramePair(r))) continue;
    if (!found || usPerFramePair(r) < usPerFramePair(found)) found = r;
  }
  return found;
}

/**
 * The highest level at which every one of `kinds` kept up with real time, and their best rounds there; failing
 * that (a host too busy to give the server the CPU it needs at any level), the lowest level at which all were
 * measured, with `keptUp` false: a ratio of CPU per frame pair still, but of servers running behind.
 */
function comparableLevel(
  rows: Row[],
  kinds: readonly Kind[],
): { rows: Map<Kind, Row>; keptUp: boolean } | undefined {
  const levels = [...new Set(rows.map((r) => r.n))].sort((a, b) => b - a);
  const all = (pick: (kind: Kind) => Row | undefined) => {
    const found = new Map<Kind, Row>();
    for (const k of kinds) {
      const r = pick(k);
      if (r) found.set(k, r);
    }
    return found.size === kinds.length ? found : undefined;
  };
  for (const n of levels) {
    const found = all((k) => best(rows, k, n));
    if (found) return { rows: found, keptUp: true };
  }
  for (const n of [...levels].reverse()) {
    const cheapest = (k: Kind) =>
      rows
        .filter(
          // Streams that closed took their counts with them: their pairs are not known.
          (r) =>
            r.kind === k &&
            r.n === n &&
            r.load.closedEarly === 0 &&
            r.pairs > 0 &&
            Number.isFinite(usPerFramePair(r)),
        )
        .sort((a, b) => usPerFramePair(a) - usPerFramePair(b))[0];
    const found = all(cheapest);
    if (found) return { rows: found, keptUp: false };
  }
  return undefined;
}

const ratio = (a: number, b: number, digits = 2) =>
  Number.isFinite(a) && Number.isFinite(b) && b > 0 ? Number((a / b).toFixed(digits)) : null;

async function main(): Promise<void> {
  const role = args.get('role');
  if (role === 'server') {
    const kind = args.get('kind');
    return serverRole(kind === 'ws' || kind === 'floor' ? kind : 'uws');
  }
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
  const rounds = Math.max(1, Number(args.get('rounds') ?? 2));
  const windowMs = Number(args.get('window') ?? 5000);
  const kinds = KINDS.filter((k) => (args.get('kinds') ?? KINDS.join(',')).split(',').includes(k));
  const partsBefore = await measureFrameParts(tokensFor());
  const printParts = (parts: FrameParts) =>
    console.log(
      `gateway compute per frame pair (transport excluded): ${f(parts.sessionUs, 2)} µs` +
        ` (JSON ${f(parts.jsonUs, 2)}, base64 ${f(parts.base64Us, 2)}, G.711 ${f(parts.g711Us, 2)},` +
        ` resampling ${f(parts.resampleUs, 2)}, bookkeeping ${f(parts.bookkeepingUs, 2)})`,
    );
  printParts(partsBefore);
  console.log(
    'kind   streams    cpu   loop p50/p99 ms  rtt p50/p99 ms  rss KB/s  heap KB/s    lost  loadgen cpu' +
      '  cpu/pair  kernel',
  );
  const servers = new Map<Kind, Server>();
  for (const kind of kinds) servers.set(kind, await startServer(kind));
  const rows: Row[] = [];
  // Level by level, the three servers one after another: a change in the machine's load shows in all three.
  for (const n of levels) {
    for (let round = 0; round < rounds; round++) {
      for (const kind of kinds) rows.push(await runLevel(kind, servers.get(kind)!, n, warmupMs, windowMs));
    }
  }
  for (const server of servers.values()) {
    server.child.send({ cmd: 'exit' });
    await server.exited;
  }
  const partsAfter = await measureFrameParts(tokensFor());
  printParts(partsAfter);
  const parts = cheaperParts(partsBefore, partsAfter);
  const of = (kind: Kind) => rows.filter((r) => r.kind === kind);
  const uwsMax = maxOk(of('uws'));
  const wsMax = maxOk(of('ws'));
  const floorMax = maxOk(of('floor'));
  const vsFloor = comparableLevel(rows, ['floor', 'uws']);
  const vsWs = comparableLevel(rows, ['uws', 'ws']);
  const floorUs = vsFloor ? usPerFramePair(vsFloor.rows.get('floor')!) : Number.NaN;
  const uwsAtFloorUs = vsFloor ? usPerFramePair(vsFloor.rows.get('uws')!) : Number.NaN;
  const uwsAtWsUs = vsWs ? usPerFramePair(vsWs.rows.get('uws')!) : Number.NaN;
  const wsUs = vsWs ? usPerFramePair(vsWs.rows.get('ws')!) : Number.NaN;
  // One frame pair of our gateway, as shares: the transport floor's (measured over the sockets), and what it
  // costs above the floor, split in the proportions of the in-process measurement. The two come from different
  // processes at different moments of a shared host, so their absolute figures need not add up; the shares do.
  const floorShare = ratio(floorUs, uwsAtFloorUs, 3);
  const above = floorShare === null ? Number.NaN : 1 - floorShare;
  const share = (us: number) => round((above * us) / parts.sessionUs, 3);
  const shares = {
    transport_floor: floorShare,
    json: share(parts.jsonUs),
    base64: share(parts.base64Us),
    g711: share(parts.g711Us),
    resampling: share(parts.resampleUs),
    bookkeeping: share(parts.bookkeepingUs),
  };
  const summary = {
    cost_vs_floor: ratio(uwsAtFloorUs, floorUs),
    cost_vs_floor_at_streams: vsFloor ? vsFloor.rows.get('uws')!.n : null,
    cost_vs_floor_kept_up: vsFloor ? vsFloor.keptUp : null,
    uws_vs_ws_cpu: ratio(wsUs, uwsAtWsUs),
    uws_vs_ws_cpu_at_streams: vsWs ? vsWs.rows.get('uws')!.n : null,
    uws_vs_ws_cpu_kept_up: vsWs ? vsWs.keptUp : null,
    max_streams_p99_under_20ms: uwsMax,
    floor_max_streams_p99_under_20ms: floorMax,
    ws_max_streams_p99_under_20ms: wsMax,
    uws_vs_ws_ratio: wsMax > 0 ? Number((uwsMax / wsMax).toFixed(2)) : null,
    floor_us_per_frame_pair: round(floorUs),
    uws_us_per_frame_pair: round(uwsAtFloorUs),
    ws_us_per_frame_pair: round(wsUs),
    per_frame_compute_us: round(parts.sessionUs, 2),
    frame_parts_us: {
      json: round(parts.jsonUs, 2),
      base64: round(parts.base64Us, 2),
      g711: round(parts.g711Us, 2),
      resampling: round(parts.resampleUs, 2),
      bookkeeping: round(parts.bookkeepingUs, 2),
    },
    frame_pair_shares: shares,
    loadgen_max_cpu: Number(Math.max(...rows.map((r) => r.load.cpu)).toFixed(2)),
    levels,
    window_ms: windowMs,
    rounds,
    rows: rows.map((r) => ({
      kind: r.kind,
      streams: r.n,
      server_cpu: Number(r.cpu.toFixed(3)),
      server_us_per_frame_pair: round(usPerFramePair(r)),
      server_kernel_share: Number(r.kernelShare.toFixed(2)),
      frame_pairs: r.pairs,
      loop_p50_ms: Number(r.loopP50Ms.toFixed(2)),
      loop_p99_ms: Number(r.loopP99Ms.toFixed(2)),
      rtt_p50_ms: Number(r.load.rttP50Ms.toFixed(2)),
      rtt_p99_ms: Number(r.load.rttP99Ms.toFixed(2)),
      rss_kb_per_stream: Number(r.rssKbPerStream.toFixed(1)),
      heap_kb_per_stream: Number(r.heapKbPerStream.toFixed(1)),
      sent: r.load.sent,
      received: r.load.received,
      loadgen_cpu: Number(r.load.cpu.toFixed(3)),
      kept_up: r.keptUp,
      ok: r.ok,
    })),
  };
  console.log(
    `server CPU per frame pair by level, the cheapest of ${rounds} round(s) that kept up (floor / uws / ws, µs),` +
      ' and the ratios:',
  );
  for (const n of levels) {
    const at = (kind: Kind) => best(rows, kind, n);
    const us = (kind: Kind) => {
      const r = at(kind);
      return r ? f(usPerFramePair(r), 1) : 'over';
    };
    const u = at('uws');
    const fl = at('floor');
    const w = at('ws');
    console.log(
      `  ${String(n).padStart(5)}: ${us('floor')} / ${us('uws')} / ${us('ws')}` +
        `  uws/floor ${f(u && fl ? usPerFramePair(u) / usPerFramePair(fl) : Number.NaN, 2)}` +
        `  ws/uws ${f(u && w ? usPerFramePair(w) / usPerFramePair(u) : Number.NaN, 2)}`,
    );
  }
  console.log(
    `cost_vs_floor ${summary.cost_vs_floor ?? '-'} at ${summary.cost_vs_floor_at_streams ?? '-'} streams` +
      `${vsFloor && !vsFloor.keptUp ? ' (NOT kept up: the host gave the servers too little CPU)' : ''}` +
      ` (goal <= 1.3), uws_vs_ws_cpu ${summary.uws_vs_ws_cpu ?? '-'} at ${summary.uws_vs_ws_cpu_at_streams ?? '-'}` +
      ` streams${vsWs && !vsWs.keptUp ? ' (NOT kept up)' : ''} (goal >= 1.8)`,
  );
  console.log(
    `one frame pair of the uws gateway: transport floor ${pct(shares.transport_floor)}, JSON ${pct(shares.json)},` +
      ` base64 ${pct(shares.base64)}, G.711 ${pct(shares.g711)}, resampling ${pct(shares.resampling)},` +
      ` bookkeeping ${pct(shares.bookkeeping)}`,
  );
  console.log(
    `max streams with round-trip p99 < ${P99_BUDGET_MS} ms: floor ${floorMax}, uws ${uwsMax}, ws ${wsMax}` +
      (wsMax > 0 ? ` (uws x${summary.uws_vs_ws_ratio} ws)` : ''),
  );
  if (args.has('json')) console.log(JSON.stringify(summary));
}

function cheaperParts(a: FrameParts, b: FrameParts): FrameParts {
  const jsonUs = Math.min(a.jsonUs, b.jsonUs);
  const base64Us = Math.min(a.base64Us, b.base64Us);
  const g711Us = Math.min(a.g711Us, b.g711Us);
  const resampleUs = Math.min(a.resampleUs, b.resampleUs);
  const sessionUs = Math.min(a.sessionUs, b.sessionUs);
  const bookkeepingUs = Math.max(0, sessionUs - jsonUs - base64Us - g711Us - resampleUs);
  return { jsonUs, base64Us, g711Us, resampleUs, sessionUs, bookkeepingUs };
}

function round(x: number, digits = 1): number | null {
  return Number.isFinite(x) ? Number(x.toFixed(digits)) : null;
}

function pct(share: number | null): string {
  return share === null ? '-' : `${(share * 100).toFixed(0)}%`;
}

await main();
