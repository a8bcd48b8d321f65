import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { request } from 'undici';
import { openConfiguredStore } from '../../cli/store.ts';
import { loadConfig } from '../../core/config.ts';
import { rupeesToPaise } from '../../core/money.ts';
import { provisionWorkspace } from '../../core/workspaces/provision.ts';
import type { Cleanups } from '../support/cleanups.ts';
import type { BenchOptions } from './options.ts';
import { platformEnv } from './platform-env.ts';
import { freePort, PlatformProcess } from './platform-process.ts';
import { AGENT_BODY } from './workspaces.ts';

/**
 * The pool case: one sandbox workspace rents `POOL_NUMBERS` numbers over the API, groups them in one
 * outreach pool (60 calls an hour per number; new numbers warm up at 30), and `POOL_CALLS` calls are admitted
 * on it at `--concurrency`. Reported: admissions per second, and the most attempts any number took this hour
 * against its pace (from the 202s, and as the API counts them).
 */
export const POOL_NUMBERS = 20;
export const POOL_CALLS = 500;
const WARMING_PACE = 30;

export interface PoolRun {
  perSecond: number;
  admitted: number;
  refused: Record<string, number>;
  /** The most calls any one number was picked for, from the 202s. */
  maxPerNumber: number;
  /** The most `attempts_this_hour` any number shows afterwards. */
  maxAttemptsThisHour: number;
  pace: number;
}

async function call<T>(origin: string, key: string, method: string, pathname: string, body?: unknown) {
  const response = await request(`${origin}${pathname}`, {
    method: method as 'GET' | 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.body.text();
  return { status: response.statusCode, body: (text ? JSON.parse(text) : {}) as T, text };
}

async function rentPool(origin: string, key: string): Promise<string> {
  const ok = (r: { status: number; text: string }, what: string) => {
    if (r.status >= 300) throw new Error(`${what} answered ${r.status}: ${r.text.slice(0, 300)}`);
  };
  ok(
    await call(origin, key, 'POST', '/v2/telephony/submit', {
      business: { name: 'Bench Pvt Ltd', registration_number: 'U00000MH2020PTC000000' },
      address: { line1: '1 MG Road', city: 'Mumbai', state: 'Maharashtra', postal_code: '400001' },
      documents: [{ type: 'business_registration', url: 'https://docs.example.com/coi.pdf' }],
    }),
    'submit',
  );
  ok(await call(origin, key, 'POST', '/v2/telephony/refresh', {}), 'refresh');
  const numbers: string[] = [];
  for (const area of ['22', '80']) {
    const found = await call<{ data: Array<{ number: string }> }>(
      origin,
      key,
      'GET',
      `/v2/telephony/search?area=${area}`,
    );
    numbers.push(...found.body.data.map((n) => n.number));
  }
  const ids: string[] = [];
  for (const number of numbers.slice(0, POOL_NUMBERS)) {
    const quote = await call<{ id: string }>(origin, key, 'POST', '/v2/telephony/quote', { number });
    const rented = await call<{ id: string }>(origin, key, 'POST', '/v2/telephony/rent', {
      number,
      quote_id: quote.body.id,
    });
    ok(rented, `rent ${number}`);
    ids.push(rented.body.id);
  }
  const pool = await call<{ id: string }>(origin, key, 'POST', '/v2/phone-pools', {
    name: 'Bench pool',
    purpose: 'outreach',
    number_ids: ids,
  });
  ok(pool, 'create the pool');
  return pool.body.id;
}

export async function runPoolAdmissions(
  options: BenchOptions,
  cleanups: Cleanups,
  log: (line: string) => void,
): Promise<PoolRun> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'voiceagent-bench-calls-pool-'));
  const removeDataDir = cleanups.defer(`remove ${dataDir}`, () =>
    rmSync(dataDir, { recursive: true, force: true }),
  );
  try {
    const store = await openConfiguredStore(loadConfig({ DATA_DIR: dataDir }));
    const workspace = await provisionWorkspace(store, {
      name: 'Pool benchmark',
      mode: 'sandbox',
      balancePaise: rupeesToPaise(50_000),
    }).finally(() => store.close());
    const server = PlatformProcess.launch({
      name: 'api',
      roles: ['api'],
      root: options.root,
      env: platformEnv({ DATA_DIR: dataDir, PORT: String(await freePort()) }),
      startTimeoutMs: options.startTimeoutS * 1000,
      log,
    });
    const stopServer = cleanups.defer('stop the api process', () => server.stop());
    try {
      await server.serving();
      const origin = server.apiUrl as string;
      const key = workspace.api_key;
      const agent = await call<{ id: string }>(origin, key, 'POST', '/v2/agents', AGENT_BODY);
      const poolId = await rentPool(origin, key);
      const body = { agent_id: agent.body.id, to: '+919876543219', pool_id: poolId };
      const perNumber = new Map<string, number>();
      const refused: Record<string, number> = {};
      let next = 0;
      const started = performance.now();
      await Promise.all(
        Array.from({ length: Math.min(options.concurrency, POOL_CALLS) }, async () => {
          while (next < POOL_CALLS) {
            next++;
            const r = await call<{ phone_number_id?: string; error?: { code: string } }>(
              origin,
              key,
              'POST',
              '/v2/calls',
              body,
            );
            if (r.status === 202 && r.body.phone_number_id) {
              perNumber.set(r.body.phone_number_id, (perNumber.get(r.body.phone_number_id) ?? 0) + 1);
            } else {
              const code = r.body.error?.code ?? String(r.status);
              refused[code] = (refused[code] ?? 0) + 1;
            }
          }
        }),
      );
      const seconds = (performance.now() - started) / 1000;
      const listed = await call<{ data: Array<{ health: { attempts_this_hour: number } }> }>(
        origin,
        key,
        'GET',
        '/v2/phone-numbers?limit=100',
      );
      const exit = server.unexpectedExit();
      if (exit) throw exit;
      const admitted = [...perNumber.values()].reduce((a, b) => a + b, 0);
      return {
        perSecond: POOL_CALLS / seconds,
        admitted,
        refused,
        maxPerNumber: Math.max(0, ...perNumber.values()),
        maxAttemptsThisHour: Math.max(0, ...listed.body.data.map((n) => n.health.attempts_this_hour)),
        pace: WARMING_PACE,
      };
    } finally {
      await stopServer();
    }
  } finally {
    await removeDataDir();
  }
}
