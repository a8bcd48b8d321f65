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
