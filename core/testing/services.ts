import net from 'node:net';
import { loadConfig } from '../config.ts';

/**
 * Which external services the suites run against. A suite runs on the embedded defaults always, and also on
 * PostgreSQL / Redis when DATABASE_URL / REDIS_URL are set. Under CI a set URL that cannot be reached fails the
 * run instead of skipping.
 */
const config = loadConfig();

async function reachable(url: string): Promise<boolean> {
  const u = new URL(url);
  const port = Number(u.port || (u.protocol.startsWith('postgres') ? 5432 : 6379));
  return new Promise((resolve) => {
    const socket = net.connect({ host: u.hostname, port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(2000, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

async function service(name: string, url: string | undefined): Promise<string | undefined> {
  if (!url) return undefined;
  if (await reachable(url)) return url;
  if (config.ci) throw new Error(`${name} at ${new URL(url).host} is not reachable, and CI requires it`);
  return undefined;
}

/** The PostgreSQL URL to test against, or undefined to skip those cases. */
export const postgresUrl = (): Promise<string | undefined> => service('PostgreSQL', config.databaseUrl);
/** The Redis URL to test against, or undefined to skip those cases. */
export const redisUrl = (): Promise<string | undefined> => service('Redis', config.redisUrl);

/** A name unique to this test run, for schemas and key prefixes. */
export function uniqueName(prefix: string): string {
  return `${prefix}_${process.pid}_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
}

/** Drops a schema a suite created on PostgreSQL. */
export async function dropPostgresSchema(databaseUrl: string, schema: string): Promise<void> {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query(`drop schema if exists "${schema.replaceAll('"', '')}" cascade`);
  } finally {
    await client.end();
  }
}
