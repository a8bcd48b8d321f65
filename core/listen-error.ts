import net from 'node:net';
import type { Config } from './config.ts';

/**
 * A server of this process could not take its address. The process cannot do its job then, so the operator
 * gets this one line and a non-zero exit, never a half-started node.
 */
export class ListenError extends Error {
  override name = 'ListenError';
}

/** A Node `listen` failure (EADDRINUSE, EACCES, ...) as a `ListenError` naming the server and the address. */
export function listenErrorOf(server: string, host: string, port: number, cause: unknown): ListenError {
  const code = typeof cause === 'object' && cause !== null && 'code' in cause ? String(cause.code) : '';
  const why =
    code === 'EADDRINUSE'
      ? 'the port is in use (another server?)'
      : code === 'EACCES'
        ? 'permission denied'
        : code === 'EADDRNOTAVAIL'
          ? "the address is not this machine's"
          : cause instanceof Error
            ? cause.message
            : String(cause);
  return new ListenError(`${server} could not listen on ${host}:${port}: ${why}`, { cause });
}

/**
 * Fails at once, before the slow parts of a start (engine models, stores), when another server holds the port:
 * a probe socket takes the address exclusively and lets it go. The server's own listen still reports what
 * happens after the probe; the probe only makes the common mistake (a second start) cost a second, not the
 * engines' load time. Port 0 (the kernel picks) is never busy.
 */
export async function ensurePortFree(server: string, host: string, port: number): Promise<void> {
  if (port === 0) return;
  const probe = net.createServer();
  await new Promise<void>((resolve, reject) => {
    probe.once('error', (error) => reject(listenErrorOf(server, host, port, error)));
    probe.listen({ host, port, exclusive: true }, () => resolve());
  });
  await new Promise<void>((resolve) => probe.close(() => resolve()));
}

/** The ports the configured roles will listen on, each checked with `ensurePortFree`. */
export async function ensureServerPortsFree(
  config: Pick<Config, 'roles' | 'host' | 'port' | 'gatewayPort' | 'gatewayReusePort'>,
): Promise<void> {
  if (config.roles.includes('api')) await ensurePortFree('control API', config.host, config.port);
  if (config.roles.includes('gateway') && !config.gatewayReusePort)
    await ensurePortFree('media gateway', config.host, config.gatewayPort);
}
