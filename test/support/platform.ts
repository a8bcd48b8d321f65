import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Logger } from 'pino';
import { type RunningPlatform, startPlatform } from '../../cli/serve.ts';
import type { Clock } from '../../core/clock.ts';
import { loadConfig } from '../../core/config.ts';
import { createLogger } from '../../core/logger.ts';
import { dropPostgresSchema, uniqueName } from './services.ts';

export type Backend = { name: string; databaseUrl?: string; redisUrl?: string };

/** The backends a black-box suite runs on: embedded always; PostgreSQL + Redis when the run provides them. */
export async function backends(): Promise<Backend[]> {
  const { postgresUrl, redisUrl } = await import('./services.ts');
  const [pg, redis] = await Promise.all([postgresUrl(), redisUrl()]);
  const list: Backend[] = [{ name: 'sqlite+memory' }];
  if (pg && redis) list.push({ name: 'postgres+redis', databaseUrl: pg, redisUrl: redis });
  return list;
}

export interface TestPlatform {
  platform: RunningPlatform;
  dataDir: string;
  url: string;
  /** The API key of the workspace created on first start. */
  apiKey: string;
  workspaceId: string;
  /** The PostgreSQL schema of this platform's tables, on the PostgreSQL backend. */
  databaseSchema: string | undefined;
  close(): Promise<void>;
}

/** Starts the whole platform (api role) on loopback with a fresh data directory, as `voiceagent serve` would. */
export async function startTestPlatform(
  backend: Backend,
  options: { env?: Record<string, string>; clock?: Clock; logger?: Logger; webhookCa?: string } = {},
): Promise<TestPlatform> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'voiceagent-test-'));
  const schema = backend.databaseUrl ? uniqueName('t').toLowerCase() : undefined;
  const config = loadConfig({
    HOST: '127.0.0.1',
    PORT: '0',
    ROLES: 'api',
    GATEWAY_PORT: '0',
    DATA_DIR: dataDir,
    LOG_LEVEL: 'silent',
    // Suites make many requests quickly; the rate-limit suite sets the real limits back.
    API_RATE_PER_SEC: '100000',
    API_RATE_BURST: '100000',
    ...(backend.databaseUrl ? { DATABASE_URL: backend.databaseUrl, DATABASE_SCHEMA: schema } : {}),
    ...(backend.redisUrl ? { REDIS_URL: backend.redisUrl, REDIS_PREFIX: uniqueName('t') } : {}),
    ...options.env,
  });
  const platform = await startPlatform(config, {
    logger: options.logger ?? createLogger(config),
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.webhookCa ? { webhookCa: options.webhookCa } : {}),
  });
  if (!platform.apiUrl || !platform.bootstrapped)
    throw new Error('platform did not start the API or bootstrap');
  return {
    platform,
    dataDir,
    url: platform.apiUrl,
    apiKey: platform.bootstrapped.apiKey,
    workspaceId: platform.bootstrapped.workspaceId,
    databaseSchema: schema,
    async close() {
      try {
        await platform.close();
      } finally {
        rmSync(dataDir, { recursive: true, force: true });
        if (backend.databaseUrl && schema) await dropPostgresSchema(backend.databaseUrl, schema);
      }
    },
  };
}

export interface ApiResponse<T = Record<string, unknown>> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

/** One real HTTP request; `key: null` sends no Authorization header. */
export async function request<T = Record<string, unknown>>(
  base: string,
  method: string,
  pathname: string,
  options: {
    key?: string | null;
    body?: unknown;
    rawBody?: string | Buffer;
    headers?: Record<string, string>;
  } = {},
): Promise<ApiResponse<T>> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.key) headers.authorization ??= `Bearer ${options.key}`;
  let body: string | Buffer | undefined;
  if (options.rawBody !== undefined) body = options.rawBody;
  else if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  const response = await fetch(`${base}${pathname}`, {
    method,
    headers,
    ...(body !== undefined ? { body } : {}),
  });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    // not JSON; left as text
  }
  return { status: response.status, headers: response.headers, body: parsed as T, text };
}

/** A client bound to one platform and key. */
export function client(base: string, key: string | null) {
  return <T = Record<string, unknown>>(
    method: string,
    pathname: string,
    options: { body?: unknown; rawBody?: string | Buffer; headers?: Record<string, string> } = {},
  ) => request<T>(base, method, pathname, { ...options, key });
}

export function errorCode(response: ApiResponse): string | undefined {
  const error = (response.body as { error?: { code?: string } | string }).error;
  return typeof error === 'string' ? error : error?.code;
}
