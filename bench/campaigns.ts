/**
 * Campaign contact uploads: contacts accepted per second for a CSV of `--rows` rows (default 100,000) sent as
 * one streamed `POST /v2/campaigns/{id}/contacts`, and the server's memory: resident set before the upload and
 * its peak (VmHWM) after, so the growth shows whether the file was held whole.
 *
 *   npm run bench:campaigns -- [--rows 100000] [--json]
 *
 * The platform runs in its own process (`voiceagent serve`, role api, embedded SQLite, a fresh DATA_DIR that
 * is removed afterwards); the CSV is generated while it is sent, so this process holds no copy either. With
 * `--json` the last line is one JSON object. The dialler's figures (dial decisions per second, lag behind
 * pace) come with the dialler.
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
  options: { rows: { type: 'string', default: '100000' }, json: { type: 'boolean', default: false } },
  strict: true,
});
const rows = Number(values.rows);
if (!Number.isSafeInteger(rows) || rows < 1 || rows > 100_000) {
  console.error('bench:campaigns: --rows must be a whole number from 1 to 100000');
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
try {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'bench-campaigns-'));
  cleanups.defer('remove the data directory', () => rmSync(dataDir, { recursive: true, force: true }));
  const port = await freePort();
  const server = spawn(process.execPath, [path.join(ROOT, 'bin/voiceagent.js'), 'serve'], {
    env: {
      ...process.env,
      DATA_DIR: dataDir,
      PORT: String(port),
      HOST: '127.0.0.1',
      ROLES: 'api',
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  cleanups.defer('stop the platform', async () => {
    server.kill('SIGTERM');
    await new Promise((resolve) => server.once('exit', resolve));
  });
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + START_TIMEOUT_MS;
  let key: string | undefined;
  while (!key) {
    if (Date.now() > deadline) throw new Error('the platform did not start');
    try {
      const credentials = JSON.parse(readFileSync(path.join(dataDir, 'credentials.json'), 'utf8'));
      if ((await request(`${base}/healthz`)).statusCode === 200) key = credentials.api_key as string;
    } catch {
      await sleep(200);
    }
  }
  const agent = await api(base, key, 'POST', '/v2/agents', { name: 'Bench', system_prompt: 'Bench.' });
  const campaign = await api(base, key, 'POST', '/v2/campaigns', {
    name: 'Bench',
    agent_id: agent.id,
    timezone: 'Asia/Kolkata',
    slots: [{ days: ['mon', 'tue', 'wed', 'thu', 'fri'], start: '09:00', end: '21:00' }],
  });
  const pid = server.pid as number;
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
  if (values.json) console.log(JSON.stringify(result));
} finally {
  await cleanups.runAll();
}
