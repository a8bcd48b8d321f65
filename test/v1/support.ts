/** Requests to the legacy v1 product, addressed by `Host` header as a v1 client's DNS name would. */
import http from 'node:http';

export const V1_HOST = 'api-v1.voiceagent.test';

export interface V1Keys {
  public_key: string;
  private_key: string;
  workspace: string;
}

export interface V1Response<T = Record<string, unknown>> {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: T;
  text: string;
}

/** One real HTTP request to `base` with `Host` set (fetch cannot set it). */
export function hostRequest<T = Record<string, unknown>>(
  base: string,
  method: string,
  pathname: string,
  options: { host?: string; headers?: Record<string, string>; body?: unknown; rawBody?: string } = {},
): Promise<V1Response<T>> {
  const url = new URL(pathname, base);
  const payload = options.rawBody ?? (options.body === undefined ? undefined : JSON.stringify(options.body));
  const headers: Record<string, string> = {
    ...(options.host ? { host: options.host } : {}),
    ...(payload !== undefined ? { 'content-type': 'application/json' } : {}),
    ...options.headers,
  };
  return new Promise((resolve, reject) => {
    const req = http.request(
      { hostname: url.hostname, port: url.port, path: url.pathname + url.search, method, headers },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let body: unknown = text;
          try {
            body = text ? JSON.parse(text) : undefined;
          } catch {
            // not JSON
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: body as T, text });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    if (payload !== undefined) req.write(payload);
    req.end();
  });
}

/** A v1 client: the v1 host and the organization's keys on every request. */
export function v1Client(base: string, keys: V1Keys, options: { workspace?: boolean } = {}) {
  return <T = Record<string, unknown>>(
    method: string,
    pathname: string,
    extra: { body?: unknown; rawBody?: string; headers?: Record<string, string> } = {},
  ) =>
    hostRequest<T>(base, method, pathname, {
      host: V1_HOST,
      ...extra,
      headers: {
        'x-public-key': keys.public_key,
        'x-private-key': keys.private_key,
        ...(options.workspace === false ? {} : { workspace: keys.workspace }),
        ...extra.headers,
      },
    });
}
