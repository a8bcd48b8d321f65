/**
 * Control API throughput: requests/s for `GET /v2/agents/{id}` and `POST /v2/agents`, on SQLite and (when it
 * answers at 127.0.0.1:5432) on PostgreSQL.
 *
 *   npm run bench:api -- [--json] [--duration 5] [--warmup 1] [--runs 3] [--connections 32] [--sqlite-only]
 *                        [--cpu-prof-dir DIR]
 *
 * Three processes per store: this one orchestrates; the server under test (`bench/api-server.ts`, the platform
 * with role `api`, a fresh DATA_DIR, and for PostgreSQL a schema of its own that is dropped afterwards) and the
 * load generator (`bench/api-loadgen.ts`, undici keep-alive connections, closed loop) run in their own
 * processes. Each scenario runs `--runs` times, interleaved with the other scenario of the same store, and the
 * medians are reported, with the CPU that the server and the load generator used over the measured windows
 * (percent of one core) and how busy the whole machine was, so a reader can tell which side was the limit.
 * Everything it starts is stopped, and every directory and schema it creates is removed, on failure too.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { BenchChild } from './api-child.ts';
import type {
  CpuSample,
  FromLoadgen,
  FromServer,
  LoadResult,
  LoadSpec,
  ToLoadgen,
  ToServer,
} from './api-protocol.ts';
import { cpuPct } from './api-protocol.ts';
import { Cleanups } from './support/cleanups.ts';
import { machineTicks } from './support/proc-stat.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const POSTGRES_URL = 'postgres://postgres@127.0.0.1:5432/test';
const SERVER_START_TIMEOUT_MS = 90_000;
/** Slack on top of the warm-up or measured window before a missing message counts as a hang. */
const PHASE_SLACK_MS = 30_000;
const RESULT_TIMEOUT_MS = 45_000;

type StoreName = 'sqlite' | 'postgres';
type ScenarioKey = 'get_agent' | 'create_agent';

interface Options {
  json: boolean;
  durationS: number;
  warmupS: number;
  runs: number;
  connections: number;
  sqliteOnly: boolean;
  cpuProfDir: string | undefined;
}

// --- options ---------------------------------------------------------------------------------------------

function positiveNumber(name: string, text: string | undefined, fallback: number, integer: boolean): number {
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!Number.isFinite(value) || value <= 0 || (integer && !Number.isInteger(value))) {
    throw new Error(`--${name}: expected a positive ${integer ? 'integer' : 'number'}, got "${text}"`);
  }
  return value;
}

function parseOptions(argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    options: {
      json: { type: 'boolean', default: false },
      duration: { type: 'string' },
      warmup: { type: 'string' },
      runs: { type: 'string' },
      connections: { type: 'string' },
      'sqlite-only': { type: 'boolean', default: false },
      'cpu-prof-dir': { type: 'string' },
    },
    strict: true,
  });
  const cpuProfDir = values['cpu-prof-dir'];
  return {
    json: values.json === true,
    durationS: positiveNumber('duration', values.duration, 5, false),
    warmupS: positiveNumber('warmup', values.warmup, 1, false),
    runs: positiveNumber('runs', values.runs, 3, true),
    connections: positiveNumber('connections', values.connections, 32, true),
    sqliteOnly: values['sqlite-only'] === true,
    cpuProfDir: cpuProfDir === undefined ? undefined : path.resolve(cpuProfDir),
  };
}

// --- cleanup ---------------------------------------------------------------------------------------------

/** Everything started or created, undone newest first; `runAll` also serves signals and the watchdog. */
const cleanups = new Cleanups(log);

function log(line: string): void {
  process.stderr.write(`${line}\n`);
}

// --- machine -------------------------------------------------------------------------------------------

function loadAverage(): string {
  return os
    .loadavg()
    .map((v) => v.toFixed(2))
    .join(', ');
}

// --- PostgreSQL ------------------------------------------------------------------------------------------

function reachable(host: string, port: number, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (ok: boolean): void => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

async function withPostgres<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 5_000 });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** Why the PostgreSQL part cannot run, or undefined when it can. */
async function postgresUnavailable(): Promise<string | undefined> {
  if (!(await reachable('127.0.0.1', 5432, 2_000))) return 'nothing answers at 127.0.0.1:5432';
  try {
    await withPostgres((client) => client.query('select 1'));
    return undefined;
  } catch (error) {
    return `cannot use ${POSTGRES_URL}: ${error instanceof Error ? error.message : String(error)}`;
  }
}

// --- children --------------------------------------------------------------------------------------------

type ServerChild = BenchChild<ToServer, FromServer>;
type LoadgenChild = BenchChild<ToLoadgen, FromLoadgen>;

function childEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  // Only what a Node process needs from the outside; no inherited DATABASE_URL, REDIS_URL or NODE_OPTIONS.
  for (const name of ['PATH', 'HOME', 'TMPDIR', 'LANG']) {
    const value = process.env[name];
    if (value !== undefined) env[name] = value;
  }
  return { ...env, NODE_ENV: 'production', ...extra };
}

let cpuRequestId = 0;

async function serverCpu(server: ServerChild): Promise<CpuSample> {
  const id = ++cpuRequestId;
  const reply = server.next('cpu', 10_000, (m) => m.id === id);
  server.send({ type: 'cpu', id });
  return (await reply).sample;
}

interface RunningServer {
  url: string;
  apiKey: string;
  child: ServerChild;
  /** Stops the server and removes its data directory (and schema); safe to call more than once. */
  stop(): Promise<void>;
}

async function startServer(store: StoreName, options: Options): Promise<RunningServer> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), `voiceagent-bench-api-${store}-`));
  const undo: Array<() => Promise<void>> = [];
  undo.push(cleanups.defer(`remove ${dataDir}`, () => rmSync(dataDir, { recursive: true, force: true })));

  const schema =
    store === 'postgres'
      ? `bench_api_${process.pid}_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`
      : undefined;
  if (schema) {
    undo.push(
      cleanups.defer(`drop schema ${schema}`, () =>
        withPostgres(async (client) => {
          await client.query(`drop schema if exists "${schema}" cascade`);
        }),
      ),
    );
  }

  const execArgv = ['--import', 'tsx'];
  if (options.cpuProfDir) {
    // One directory per store: the main thread and the module loader's worker thread each write a profile.
    execArgv.push('--cpu-prof', `--cpu-prof-dir=${path.join(options.cpuProfDir, store)}`);
  }
  const child: ServerChild = new BenchChild(`server (${store})`, path.join(ROOT, 'bench/api-server.ts'), {
    cwd: ROOT,
    execArgv,
    stdout: process.stderr,
    env: childEnv({
      HOST: '127.0.0.1',
      PORT: '0',
      ROLES: 'api',
      DATA_DIR: dataDir,
      LOG_LEVEL: 'silent',
      // Far above anything the benchmark reaches, so the per-key token bucket never answers 429.
      API_RATE_PER_SEC: '100000000',
      API_RATE_BURST: '100000000',
      ...(schema ? { DATABASE_URL: POSTGRES_URL, DATABASE_SCHEMA: schema } : {}),
    }),
  });
  // Registered last so it runs first: the server closes its pool before its schema is dropped.
  undo.push(cleanups.defer(`stop ${child.name}`, () => child.stop({ type: 'stop' })));
  const stop = async (): Promise<void> => {
    for (const step of [...undo].reverse()) await step();
  };

  try {
    const ready = await child.next('ready', SERVER_START_TIMEOUT_MS);
    return { url: ready.url, apiKey: ready.apiKey, child, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

// --- scenarios -------------------------------------------------------------------------------------------

/** About 1 KB of system prompt, as a production agent would carry. */
const SYSTEM_PROMPT = [
  'You are Priya, a friendly customer support agent for Acme Bank calling customers in India.',
  'Speak in simple Hindi mixed with common English words (Hinglish) unless the customer prefers English.',
  'Goals: confirm the customer identity using the last four digits of the registered mobile number, explain',
  'the pending credit card payment, and offer to set up a reminder or a payment link over SMS.',
  'Rules: never ask for the full card number, CVV, OTP or net banking password. If the customer asks for a',
  'human, transfer the call. If the customer says they already paid, apologise, note the payment date and',
  'end politely. Keep each reply under two sentences; pause for the customer to answer. Confirm numbers digit',
  'by digit. If the line is noisy, ask once to repeat, then offer a callback at a time of their choosing.',
  'Use the customer name {{name}} and the amount {{amount}} due on {{due_date}} from the call variables.',
  'At the end, summarise what was agreed and thank the customer for banking with Acme Bank.',
].join(' ');

const CREATE_AGENT_BODY = JSON.stringify({
  name: 'Acme Bank - payment reminders (Hindi)',
  system_prompt: SYSTEM_PROMPT,
  first_message: 'Namaste {{name}} ji! Main Acme Bank se Priya bol rahi hoon. Kya aapke paas do minute hain?',
  language: 'hi-IN',
});

interface Scenario {
  key: ScenarioKey;
  label: string;
  spec(server: RunningServer, agentId: string): Omit<LoadSpec, 'connections' | 'warmupMs' | 'durationMs'>;
}

const SCENARIOS: readonly Scenario[] = [
  {
    key: 'get_agent',
    label: 'GET /v2/agents/{id}',
    spec: (server, agentId) => ({
      origin: server.url,
      method: 'GET',
      path: `/v2/agents/${agentId}`,
      headers: { authorization: `Bearer ${server.apiKey}` },
    }),
  },
  {
    key: 'create_agent',
    label: 'POST /v2/agents',
    spec: (server) => ({
      origin: server.url,
      method: 'POST',
      path: '/v2/agents',
      headers: { authorization: `Bearer ${server.apiKey}`, 'content-type': 'application/json' },
      body: CREATE_AGENT_BODY,
    }),
  },
];

interface RunResult extends LoadResult {
  serverCpuPct: number;
  machineCpuPct: number | undefined;
}

async function runOnce(server: RunningServer, loadgen: LoadgenChild, spec: LoadSpec): Promise<RunResult> {
  loadgen.send({ type: 'run', spec });
  await loadgen.next('measure-start', spec.warmupMs + PHASE_SLACK_MS);
  const machineStart = machineTicks();
  const serverStart = await serverCpu(server.child);
  await loadgen.next('measure-end', spec.durationMs + PHASE_SLACK_MS);
  const machineEnd = machineTicks();
  const serverEnd = await serverCpu(server.child);
  const { result } = await loadgen.next('result', RESULT_TIMEOUT_MS);
  const machineCpuPct =
    machineStart && machineEnd && machineEnd.total > machineStart.total
      ? (100 * (machineEnd.busy - machineStart.busy)) / (machineEnd.total - machineStart.total)
      : undefined;
  return { ...result, serverCpuPct: cpuPct(serverStart, serverEnd), machineCpuPct };
}

async function setUp(server: RunningServer): Promise<string> {
  const created = await fetch(`${server.url}/v2/agents`, {
    method: 'POST',
    headers: { authorization: `Bearer ${server.apiKey}`, 'content-type': 'application/json' },
    body: CREATE_AGENT_BODY,
  });
  const text = await created.text();
  if (created.status !== 201)
    throw new Error(`creating the agent to read answered ${created.status}: ${text}`);
  const id = (JSON.parse(text) as { id?: unknown }).id;
  if (typeof id !== 'string') throw new Error(`creating the agent to read returned no id: ${text}`);
  const read = await fetch(`${server.url}/v2/agents/${id}`, {
    headers: { authorization: `Bearer ${server.apiKey}` },
  });
  const readText = await read.text();
  if (read.status !== 200) throw new Error(`reading the agent answered ${read.status}: ${readText}`);
  return id;
}

// --- results ---------------------------------------------------------------------------------------------

function median(values: number[]): number {
  const sorted = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[mid] ?? Number.NaN)
    : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
}

interface ScenarioSummary {
  store: StoreName;
  scenario: Scenario;
  runs: RunResult[];
  rps: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
  statuses: Record<string, number>;
  firstErrorBody: string | undefined;
  serverCpuPct: number;
  loadgenCpuPct: number;
  /** CPU time per 2xx response (µs); unlike req/s it hardly moves when other work on the host takes cores. */
  serverUsPerReq: number;
  loadgenUsPerReq: number;
  machineCpuPct: number;
}

function summarise(store: StoreName, scenario: Scenario, runs: RunResult[]): ScenarioSummary {
  const statuses: Record<string, number> = {};
  for (const run of runs) {
    for (const [status, n] of Object.entries(run.statuses)) statuses[status] = (statuses[status] ?? 0) + n;
  }
  return {
    store,
    scenario,
    runs,
    rps: median(runs.map((r) => r.rps)),
    p50Ms: median(runs.map((r) => r.p50Ms)),
    p99Ms: median(runs.map((r) => r.p99Ms)),
    errors: runs.reduce((sum, r) => sum + r.errors, 0),
    statuses,
    firstErrorBody: runs.find((r) => r.firstErrorBody !== undefined)?.firstErrorBody,
    serverCpuPct: median(runs.map((r) => r.serverCpuPct)),
    loadgenCpuPct: median(runs.map((r) => r.cpuPct)),
    serverUsPerReq: median(runs.map((r) => (r.serverCpuPct * 10_000) / r.rps)),
    loadgenUsPerReq: median(runs.map((r) => (r.cpuPct * 10_000) / r.rps)),
    machineCpuPct: median(runs.map((r) => r.machineCpuPct ?? Number.NaN)),
  };
}

const round = (value: number, digits: number): number | null =>
  Number.isFinite(value) ? Number(value.toFixed(digits)) : null;

const fixed = (value: number, digits: number): string =>
  Number.isFinite(value) ? value.toFixed(digits) : '-';

function table(summaries: ScenarioSummary[]): string {
  const header = [
    'store',
    'scenario',
    'req/s (median)',
    'req/s per run',
    'p50 ms',
    'p99 ms',
    'errors',
    'server CPU',
    'server µs/req',
    'loadgen CPU',
    'loadgen µs/req',
    'machine CPU',
  ];
  const rows = summaries.map((s) => [
    s.store,
    s.scenario.label,
    fixed(s.rps, 0),
    s.runs.map((r) => fixed(r.rps, 0)).join(' / '),
    fixed(s.p50Ms, 2),
    fixed(s.p99Ms, 2),
    String(s.errors),
    `${fixed(s.serverCpuPct, 0)}%`,
    fixed(s.serverUsPerReq, 0),
    `${fixed(s.loadgenCpuPct, 0)}%`,
    fixed(s.loadgenUsPerReq, 0),
    `${fixed(s.machineCpuPct, 0)}%`,
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]): string =>
    cells
      .map((c, i) => (i < 2 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

function storeJson(summaries: ScenarioSummary[]): Record<string, number | null | Record<string, number>> {
  const out: Record<string, number | null | Record<string, number>> = {};
  for (const s of summaries) {
    const k = s.scenario.key;
    out[`${k}_rps`] = round(s.rps, 0);
    out[`${k}_p50_ms`] = round(s.p50Ms, 2);
    out[`${k}_p99_ms`] = round(s.p99Ms, 2);
    out[`${k}_errors`] = s.errors;
    out[`${k}_server_cpu_pct`] = round(s.serverCpuPct, 1);
    out[`${k}_loadgen_cpu_pct`] = round(s.loadgenCpuPct, 1);
    out[`${k}_server_cpu_us_per_req`] = round(s.serverUsPerReq, 0);
    out[`${k}_loadgen_cpu_us_per_req`] = round(s.loadgenUsPerReq, 0);
    out[`${k}_machine_cpu_pct`] = round(s.machineCpuPct, 1);
  }
  return out;
}

// --- main ------------------------------------------------------------------------------------------------

async function benchStore(
  store: StoreName,
  loadgen: LoadgenChild,
  options: Options,
): Promise<ScenarioSummary[]> {
  log(`${store}: starting the server`);
  const server = await startServer(store, options);
  try {
    const agentId = await setUp(server);
    log(`${store}: server pid ${server.child.pid} at ${server.url}; reading agent ${agentId}`);
    const results = new Map<ScenarioKey, RunResult[]>(SCENARIOS.map((s) => [s.key, []]));
    // Interleaved (GET, POST, GET, POST, ...) so a burst of load from elsewhere on the machine spreads
    // over both scenarios instead of landing on one.
    for (let run = 1; run <= options.runs; run++) {
      for (const scenario of SCENARIOS) {
        const result = await runOnce(server, loadgen, {
          ...scenario.spec(server, agentId),
          connections: options.connections,
          warmupMs: options.warmupS * 1000,
          durationMs: options.durationS * 1000,
        });
        results.get(scenario.key)?.push(result);
        log(
          `${store} ${scenario.label} run ${run}/${options.runs}: ${fixed(result.rps, 0)} req/s, ` +
            `p50 ${fixed(result.p50Ms, 2)} ms, p99 ${fixed(result.p99Ms, 2)} ms, errors ${result.errors}, ` +
            `server CPU ${fixed(result.serverCpuPct, 0)}%, loadgen CPU ${fixed(result.cpuPct, 0)}%, ` +
            `machine ${result.machineCpuPct === undefined ? '-' : fixed(result.machineCpuPct, 0)}%`,
        );
      }
    }
    return SCENARIOS.map((s) => summarise(store, s, results.get(s.key) ?? []));
  } finally {
    await server.stop();
  }
}

async function main(): Promise<number> {
  const options = parseOptions(process.argv.slice(2));
  const stores: StoreName[] = ['sqlite'];
  let postgresNote: string | undefined;
  if (options.sqliteOnly) postgresNote = 'skipped (--sqlite-only)';
  else {
    const why = await postgresUnavailable();
    if (why) postgresNote = `skipped: ${why}`;
    else stores.push('postgres');
  }
  if (postgresNote) log(`postgres: ${postgresNote}`);

  // A hard bound on the whole run: server starts, every window and its slack, and shutdowns.
  const perRunMs = (options.warmupS + options.durationS) * 1000 + 2 * PHASE_SLACK_MS + RESULT_TIMEOUT_MS;
  const budgetMs =
    60_000 + stores.length * (SERVER_START_TIMEOUT_MS + 30_000 + options.runs * SCENARIOS.length * perRunMs);
  const watchdog = setTimeout(() => {
    log(`bench:api: still running after ${Math.round(budgetMs / 1000)} s; stopping everything`);
    void cleanups.runAll().finally(() => process.exit(1));
  }, budgetMs);
  watchdog.unref();

  const loadAtStart = loadAverage();
  log(
    `bench:api: ${os.cpus().length} CPUs, load average ${loadAtStart}; ${options.connections} connections, ` +
      `${options.warmupS} s warm-up, ${options.durationS} s x ${options.runs} runs per scenario`,
  );

  const loadgen: LoadgenChild = new BenchChild('load generator', path.join(ROOT, 'bench/api-loadgen.ts'), {
    cwd: ROOT,
    execArgv: ['--import', 'tsx'],
    stdout: process.stderr,
    env: childEnv({}),
  });
  const stopLoadgen = cleanups.defer('stop the load generator', () => loadgen.stop({ type: 'stop' }));

  const summaries: ScenarioSummary[] = [];
  try {
    await loadgen.next('ready', 60_000);
    for (const store of stores) summaries.push(...(await benchStore(store, loadgen, options)));
  } finally {
    await stopLoadgen();
    clearTimeout(watchdog);
  }
  const loadAtEnd = loadAverage();

  process.stdout.write(`\n${table(summaries)}\n\n`);
  process.stdout.write(
    `CPU columns: percent of one core over the measured windows (median of runs); machine CPU: all ` +
      `${os.cpus().length} cores, everything running on the host. µs/req: CPU time per 2xx response.\n` +
      `load average at start ${loadAtStart}; at end ${loadAtEnd}\n`,
  );
  if (postgresNote) process.stdout.write(`postgres: ${postgresNote}\n`);
  for (const s of summaries) {
    if (s.errors > 0) {
      process.stdout.write(
        `${s.store} ${s.scenario.label}: ${s.errors} errors ${JSON.stringify(s.statuses)}; first: ${s.firstErrorBody ?? '-'}\n`,
      );
    }
  }

  if (options.json) {
    const of = (store: StoreName) => summaries.filter((s) => s.store === store);
    const max = (values: number[]): number => Math.max(...values.filter((v) => Number.isFinite(v)));
    const json = {
      sqlite: storeJson(of('sqlite')),
      postgres: stores.includes('postgres') ? storeJson(of('postgres')) : null,
      ...(postgresNote ? { postgres_note: postgresNote } : {}),
      // The highest per-scenario median, so "the load generator stayed below X% of a core" holds everywhere.
      loadgen_cpu_pct: round(max(summaries.map((s) => s.loadgenCpuPct)), 1),
      server_cpu_pct: round(max(summaries.map((s) => s.serverCpuPct)), 1),
      duration_s: options.durationS,
      warmup_s: options.warmupS,
      runs: options.runs,
      connections: options.connections,
      cpus: os.cpus().length,
      load_avg_start: loadAtStart,
      load_avg_end: loadAtEnd,
    };
    process.stdout.write(`${JSON.stringify(json)}\n`);
  }
  return summaries.some((s) => s.errors > 0) ? 1 : 0;
}

let signalled = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    signalled = true;
    log(`bench:api: ${signal}; stopping everything`);
    void cleanups.runAll().finally(() => process.exit(130));
  });
}

main()
  .then((code) => {
    process.exitCode = code;
  })
  .catch(async (error: unknown) => {
    // After a signal the children are being stopped on purpose; their exits are not the failure to report.
    if (signalled) return;
    log(`bench:api failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    await cleanups.runAll();
    process.exitCode = 1;
  });
