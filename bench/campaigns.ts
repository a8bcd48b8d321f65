/**
 * Campaigns at volume, two parts (`--only csv|dial`, both by default):
 *
 * - csv: contacts accepted per second for a CSV of `--rows` rows (default 100,000) sent as one streamed
 *   `POST /v2/campaigns/{id}/contacts`, and the server's memory: resident set before the upload and its peak
 *   (VmHWM) after, so the growth shows whether the file was held whole.
 * - dial: a campaign of `--contacts` contacts (default 10,000) whose sandbox callees answer at once (busy, no
 *   ring), run from start to `completed`: dial decisions per second (contacts settled per second), and its
 *   largest lag behind its pace: how long a call waited after the campaign had room for it (one of its
 *   `max_concurrent` calls had ended and the previous call was placed), from the calls' own times.
 *
 *   npm run bench:campaigns -- [--only csv|dial] [--rows 100000] [--contacts 10000] [--cpu-prof DIR] [--json]
 *
 * `--cpu-prof DIR` writes the platform process's CPU profile there (see bench/cpu-profile-summary.ts).
 *
 * The platform runs in its own process (`voiceagent serve` on the embedded defaults, a fresh DATA_DIR that is
 * removed afterwards); the CSV is generated while it is sent, so this process holds no copy either. With
 * `--json` the last line is one JSON object.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { request } from 'undici';
import { Cleanups } from './support/cleanups.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const START_TIMEOUT_MS = 60_000;

const { values } = parseArgs({
  options: {
    only: { type: 'string' },
    rows: { type: 'string', default: '100000' },
    contacts: { type: 'string', default: '10000' },
    'cpu-prof': { type: 'string' },
    json: { type: 'boolean', default: false },
  },
  strict: true,
});
const rows = Number(values.rows);
const contactCount = Number(values.contacts);
if (!Number.isSafeInteger(rows) || rows < 1 || rows > 100_000) {
  console.error('bench:campaigns: --rows must be a whole number from 1 to 100000');
  process.exit(2);
}
if (!Number.isSafeInteger(contactCount) || contactCount < 1 || contactCount > 10_000) {
  console.error('bench:campaigns: --contacts must be a whole number from 1 to 10000');
  process.exit(2);
}
if (values.only !== undefined && values.only !== 'csv' && values.only !== 'dial') {
  console.error('bench:campaigns: --only must be csv or dial');
  process.exit(2);
}

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Kilobytes of a `/proc/<pid>/status` field (VmRSS now, VmHWM the peak). */
function memoryKb(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(match?.[1] ?? Number.NaN);
}

/** The CSV, made row by row as the request reads it. */
function csvRows(count: number): Readable {
  let next = 0;
  return new Readable({
    read() {
      if (next === 0) this.push('to,name,plan,city\n');
      const until = Math.min(count, next + 2_000);
      let chunk = '';
      for (; next < until; next++) {
        chunk += `+9190${String(next).padStart(8, '0')},Caller ${next},${next % 3 ? 'gold' : 'basic'},Pune\n`;
      }
      this.push(chunk);
      if (next >= count) this.push(null);
    },
  });
}

async function api(base: string, key: string, method: 'GET' | 'POST', pathname: string, body?: unknown) {
  const response = await request(`${base}${pathname}`, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.body.text();
  if (response.statusCode >= 300) throw new Error(`${method} ${pathname}: ${response.statusCode} ${text}`);
  return JSON.parse(text) as Record<string, unknown>;
}

const cleanups = new Cleanups((line) => console.error(line));

interface Platform {
  base: string;
  key: string;
  pid: number;
}

/** `voiceagent serve` with `roles` on a fresh data directory; resolves once its API answers. */
async function startPlatform(roles: string, env: Record<string, string> = {}): Promise<Platform> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'bench-campaigns-'));
  cleanups.defer('remove the data directory', () => rmSync(dataDir, { recursive: true, force: true }));
  const port = await freePort();
  const profile = values['cpu-prof'] ? ['--cpu-prof', '--cpu-prof-dir', values['cpu-prof']] : [];
  const server = spawn(process.execPath, [...profile, path.join(ROOT, 'bin/voiceagent.js'), 'serve'], {
    env: {
      ...process.env,
      DATA_DIR: dataDir,
      PORT: String(port),
      GATEWAY_PORT: '0',
      HOST: '127.0.0.1',
      ROLES: roles,
      LOG_LEVEL: 'warn',
      ...env,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  cleanups.defer('stop the platform', async () => {
    server.kill('SIGTERM');
    await new Promise((resolve) => server.once('exit', resolve));
  });
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + START_TIMEOUT_MS;
  for (;;) {
    if (Date.now() > deadline) throw new Error('the platform did not start');
    try {
      const credentials = JSON.parse(readFileSync(path.join(dataDir, 'credentials.json'), 'utf8'));
      if ((await request(`${base}/healthz`)).statusCode === 200) {
        return { base, key: credentials.api_key as string, pid: server.pid as number };
      }
    } catch {
      // not up yet
    }
    await sleep(200);
  }
}

async function createCampaign(platform: Platform, settings: Record<string, unknown> = {}) {
  const { base, key } = platform;
  const agent = await api(base, key, 'POST', '/v2/agents', {
    name: 'Bench',
    system_prompt: 'Bench.',
    max_duration_secs: 60,
  });
  return api(base, key, 'POST', '/v2/campaigns', {
    name: 'Bench',
    agent_id: agent.id,
    timezone: 'Asia/Kolkata',
    slots: [{ days: ['mon', 'tue', 'wed', 'thu', 'fri'], start: '09:00', end: '21:00' }],
    ...settings,
  });
}

async function csvUpload() {
  const platform = await startPlatform('api');
  const { base, key, pid } = platform;
  const campaign = await createCampaign(platform);
  const rssBeforeKb = memoryKb(pid, 'VmRSS');
  const started = performance.now();
  const response = await request(`${base}/v2/campaigns/${campaign.id}/contacts`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'text/csv' },
    body: csvRows(rows),
  });
  const report = (await response.body.json()) as { accepted?: number };
  const seconds = (performance.now() - started) / 1_000;
  if (response.statusCode !== 200 || report.accepted !== rows) {
    throw new Error(`upload: ${response.statusCode} ${JSON.stringify(report).slice(0, 300)}`);
  }
  const result = {
    rows,
    seconds: Number(seconds.toFixed(2)),
    contacts_per_sec: Math.round(rows / seconds),
    server_rss_before_mb: Number((rssBeforeKb / 1024).toFixed(1)),
    server_peak_rss_mb: Number((memoryKb(pid, 'VmHWM') / 1024).toFixed(1)),
  };
  console.log(
    `csv upload (sqlite): ${rows} contacts in ${result.seconds} s = ${result.contacts_per_sec}/s; server RSS ${result.server_rss_before_mb} MB before, peak ${result.server_peak_rss_mb} MB`,
  );
  return result;
}

interface CallTimes {
  created_at: string;
  ended_at: string | null;
}

/**
 * How long each call waited after the campaign had room for it: call i may go once all but `concurrency - 1`
 * of the calls placed before it have ended, and not before call i-1 was placed (calls go one after another).
 */
function lagsBehindPace(calls: readonly CallTimes[], concurrency: number): number[] {
  const ordered = [...calls].sort((a, b) => a.created_at.localeCompare(b.created_at));
  const ends: number[] = [];
  const lags: number[] = [];
  ordered.forEach((call, i) => {
    const created = Date.parse(call.created_at);
    if (i >= concurrency) {
      const freedAt = ends[i - concurrency] as number;
      const previous = Date.parse((ordered[i - 1] as CallTimes).created_at);
      lags.push(Math.max(0, created - Math.max(freedAt, previous)));
    }
    const ended = call.ended_at === null ? Number.POSITIVE_INFINITY : Date.parse(call.ended_at);
    let at = ends.length;
    while (at > 0 && (ends[at - 1] as number) > ended) at--;
    ends.splice(at, 0, ended);
  });
  return lags;
}

async function dial() {
  const platform = await startPlatform('api,gateway,worker', {
    SANDBOX_ANSWER_DELAY_MS: '0',
    BOOTSTRAP_BALANCE_INR: '1000',
    // The calls are read back a hundred a page.
    API_RATE_PER_SEC: '100000',
    API_RATE_BURST: '100000',
  });
  const { base, key } = platform;
  const campaign = await createCampaign(platform, {
    slots: [{ days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'], start: '00:00', end: '24:00' }],
    retry_count: 0,
    max_concurrent: 5,
  });
  // Every number ends in 0: the sandbox callee is busy at once, so the dialler is all that is measured.
  const contacts = Array.from({ length: contactCount }, (_, i) => ({
    to: `+9191${String(i).padStart(7, '0')}0`,
  }));
  await api(base, key, 'POST', `/v2/campaigns/${campaign.id}/contacts`, { contacts });
  const started = performance.now();
  await api(base, key, 'POST', `/v2/campaigns/${campaign.id}/start`);
  for (;;) {
    const state = await api(base, key, 'GET', `/v2/campaigns/${campaign.id}`);
    if (state.status === 'completed') break;
    if (performance.now() - started > 30 * 60_000) throw new Error('the campaign did not complete');
    // Seldom: reading the campaign counts every contact, which is the API's work, not the dialler's.
    await sleep(500);
  }
  const seconds = (performance.now() - started) / 1_000;
  const calls: CallTimes[] = [];
  let after: string | undefined;
  for (;;) {
    const page = await api(
      base,
      key,
      'GET',
      `/v2/calls?campaign_id=${campaign.id}&limit=100${after ? `&starting_after=${after}` : ''}`,
    );
    const data = page.data as Array<CallTimes & { id: string }>;
    calls.push(...data);
    if (!page.has_more) break;
    after = data.at(-1)?.id;
  }
  const lags = lagsBehindPace(calls, 5).sort((a, b) => a - b);
  const result = {
    contacts: contactCount,
    calls: calls.length,
    seconds: Number(seconds.toFixed(2)),
    dial_decisions_per_sec: Math.round(contactCount / seconds),
    lag_p50_ms: lags[Math.floor(lags.length * 0.5)] ?? 0,
    lag_p95_ms: lags[Math.floor(lags.length * 0.95)] ?? 0,
    lag_max_ms: lags.at(-1) ?? 0,
  };
  console.log(
    `dialler (sqlite, one process, busy callees, max_concurrent 5): ${contactCount} contacts in ${result.seconds} s = ${result.dial_decisions_per_sec} decisions/s; lag behind pace p50 ${result.lag_p50_ms} ms, p95 ${result.lag_p95_ms} ms, max ${result.lag_max_ms} ms`,
  );
  return result;
}

try {
  const result: Record<string, unknown> = {};
  if (values.only !== 'dial') result.csv = await csvUpload();
  await cleanups.runAll();
  if (values.only !== 'csv') result.dial = await dial();
  if (values.json) console.log(JSON.stringify(result));
} finally {
  await cleanups.runAll();
}
