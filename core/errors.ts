/**
 * The error catalogue of the interface: every code the API can answer, with its HTTP status.
 * The OpenAPI document lists exactly these; a test checks that. Besides the interface's own codes, the HTTP
 * layer's limits (`request_timeout`, `body_too_large`, `headers_too_large`, `service_unavailable`) have codes of their
 * own: `error.code` is an open enum, and each code keeps one status.
 */
export const ERROR_CATALOGUE = {
  invalid_request: {
    status: 400,
    description: 'Malformed request or invalid field; the message names the field.',
  },
  invalid_flow: { status: 400, description: 'The flow graph fails validation (flat body with details).' },
  invalid_tools: { status: 400, description: 'A tool definition fails validation (flat body with details).' },
  unsupported_channel: { status: 400, description: 'Live control or live events on a phone call.' },
  unauthorized: {
    status: 401,
    description: 'Missing Authorization header, no Bearer prefix, or unknown key.',
  },
  insufficient_balance: {
    status: 402,
    description: 'The wallet cannot cover the call; nothing was charged.',
  },
  forbidden: { status: 403, description: 'The key was revoked.' },
  not_found: { status: 404, description: 'No such resource in this workspace.' },
  request_timeout: {
    status: 408,
    description: 'The request (headers and body) did not arrive in time; the connection is closed.',
  },
  duplicate_call: {
    status: 409,
    description: 'A request with this Idempotency-Key is still being processed.',
  },
  conflict: {
    status: 409,
    description: 'The operation is illegal in the current state, or the resource changed.',
  },
  pool_in_use: { status: 409, description: 'A campaign or agent still calls from this pool.' },
  pool_busy: { status: 409, description: 'Every number of the pool is resting or at its pace this hour.' },
  pool_unavailable: { status: 409, description: 'The pool has no number that can call.' },
  body_too_large: { status: 413, description: 'The request body is larger than the body limit.' },
  rate_limited: {
    status: 429,
    description: 'Request rate, queue depth or flow test limit exceeded; see Retry-After.',
  },
  at_capacity: { status: 429, description: 'Every line of the deployment is busy; see Retry-After.' },
  headers_too_large: {
    status: 431,
    description: 'The request line and headers are larger than the header limit; the connection is closed.',
  },
  internal: { status: 500, description: 'Server fault.' },
  not_implemented: {
    status: 501,
    description: 'The feature is in the contract but not live on this deployment.',
  },
  tier_unavailable: { status: 501, description: 'Tier t5 is not available; use t3 or t1.' },
  campaigns_unavailable: { status: 503, description: 'Campaigns are not enabled for the workspace.' },
  fleet_offline: { status: 503, description: 'Speech capacity is offline; see Retry-After.' },
  telephony_unavailable: { status: 503, description: 'Phone numbers are unavailable on this host.' },
  model_unavailable: {
    status: 503,
    description:
      'Flow drafts and tests need a language model this deployment has not configured; the message names the setting. Nothing was charged.',
  },
  service_unavailable: {
    status: 503,
    description:
      'Briefly unable to answer: the database is unreachable, the answer took too long, or this server is shutting down. Live calls go on; retry with backoff (see Retry-After).',
  },
} as const satisfies Record<string, { status: number; description: string }>;

export type ErrorCode = keyof typeof ERROR_CATALOGUE;

export interface ErrorDetail {
  path: string;
  message: string;
}

/** An error with a catalogue code; the API edge turns it into the spec's envelope. */
export class ApiError extends Error {
  readonly status: number;
  readonly retryAfterSecs: number | undefined;
  readonly details: ErrorDetail[] | undefined;
  readonly isApiError = true;

  constructor(
    readonly code: ErrorCode,
    message: string,
    options: { retryAfterSecs?: number; details?: ErrorDetail[] } = {},
  ) {
    super(message);
    this.name = 'ApiError';
    this.status = ERROR_CATALOGUE[code].status;
    this.retryAfterSecs = options.retryAfterSecs;
    this.details = options.details;
  }

  /** The v2 body: `{error:{code,message}}`, or the flat `{error, details}` of definition validation. */
  toBody(): Record<string, unknown> {
    if (this.details && (this.code === 'invalid_flow' || this.code === 'invalid_tools')) {
      return { error: this.code, details: this.details };
    }
    return { error: { code: this.code, message: this.message } };
  }
}

export function isApiError(value: unknown): value is ApiError {
  return (
    typeof value === 'object' && value !== null && (value as { isApiError?: unknown }).isApiError === true
  );
}

export const notFound = (what: string): ApiError => new ApiError('not_found', `${what} not found`);
export const invalid = (field: string, problem: string): ApiError =>
  new ApiError('invalid_request', `${field}: ${problem}`);
