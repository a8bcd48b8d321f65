import { type IncomingMessage, type ServerOptions, type ServerResponse, STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { ApiHttpLimits } from '../../core/config.ts';
import { ApiError } from '../../core/errors.ts';

/**
 * Node checks header and request deadlines on a timer, not per byte; this keeps the lateness of a 408 to a
 * small fraction of the deadline instead of Node's default 30 s.
 */
const MAX_DEADLINE_CHECK_MS = 1_000;

/** Options for Node's HTTP server: the header size limit and the header and request deadlines. */
export function httpServerOptions(limits: ApiHttpLimits): ServerOptions {
  return {
    maxHeaderSize: limits.maxHeaderBytes,
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    connectionsCheckingInterval: Math.max(
      10,
      Math.min(MAX_DEADLINE_CHECK_MS, Math.floor(limits.headersTimeoutMs / 4)),
    ),
  };
}

/** The envelope for what Node's HTTP parser refuses before any route sees the request. */
export function clientErrorOf(error: Error & { code?: string }, limits: ApiHttpLimits): ApiError {
  switch (error.code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new ApiError(
        'request_timeout',
        `request: headers must arrive within ${limits.headersTimeoutMs} ms and the whole request within ${limits.requestTimeoutMs} ms`,
      );
    case 'HPE_HEADER_OVERFLOW':
      return new ApiError(
        'headers_too_large',
        `headers: the request line and headers are larger than the ${limits.maxHeaderBytes}-byte limit`,
      );
    default:
      return new ApiError('invalid_request', 'request: malformed HTTP');
  }
}

interface SocketInFlight extends Duplex {
  /** Node's response in progress on this socket, if any (what Node's own clientError handling checks). */
  _httpMessage?: { headersSent?: boolean } | null;
}

/**
 * Answers Node's client errors (431, 408, unparsable requests) in the error envelope, then closes the
 * connection: after a parse error or a deadline the rest of its bytes cannot be trusted.
 */
export function answerClientError(
  error: Error & { code?: string },
  socket: SocketInFlight,
  limits: ApiHttpLimits,
  shape: (error: ApiError) => { status: number; body: Record<string, unknown> } = (e) => ({
    status: e.status,
    body: e.toBody(),
  }),
): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const responseStarted = socket._httpMessage?.headersSent === true;
  if (socket.writable && !responseStarted) {
    const answer = shape(clientErrorOf(error, limits));
    const body = JSON.stringify(answer.body);
    socket.write(
      `HTTP/1.1 ${answer.status} ${STATUS_CODES[answer.status]}\r\n` +
        'Content-Type: application/json; charset=utf-8\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        'Connection: close\r\n\r\n' +
        body,
    );
  }
  socket.destroy();
}

/**
 * Node would answer an `Expect` other than `100-continue` with a bare 417; this answers it in the envelope (or in
 * the shape `shape` gives the request).
 */
export function answerUnsupportedExpectation(
  request: IncomingMessage,
  response: ServerResponse,
  shape: (raw: IncomingMessage, error: ApiError) => { status: number; body: Record<string, unknown> } = (
    _raw,
    e,
  ) => ({ status: e.status, body: e.toBody() }),
): void {
  const answer = shape(request, new ApiError('invalid_request', 'Expect: only 100-continue is supported'));
  const body = JSON.stringify(answer.body);
  response.writeHead(answer.status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    connection: 'close',
  });
  response.end(body);
}
