import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { StreamTokens } from '../../../core/auth/stream-tokens.ts';
import { announceQueued, sendCallCommand } from '../../../core/calls/control.ts';
import { webJoinDeadline } from '../../../core/calls/recovery.ts';
import { type Clock, isoTime, systemClock } from '../../../core/clock.ts';
import type { Coordinator } from '../../../core/coord/types.ts';
import { isCoordinatorUnavailable } from '../../../core/coord/unavailable.ts';
import { ApiError, invalid } from '../../../core/errors.ts';
import { announceThrough } from '../../../core/events/announce.ts';
import { isInternalHostName } from '../../../core/net/address-policy.ts';
import type { CallRecord } from '../../../core/store/types.ts';
import type { V1Calls } from '../../../core/v1/calls.ts';
import { V1_STATUS } from '../../../core/v1/webhooks.ts';
import { E164 } from '../../schemas/call.ts';
import type { V1Auth, V1Registry } from './http.ts';
import { v1Route } from './http.ts';

export interface V1CallRouteDeps {
  calls: V1Calls;
  coord: Coordinator;
  streamTokens: StreamTokens;
  gatewayUrl: () => string | undefined;
  allowPrivateWebhooks: boolean;
  webCallJoinMs: number;
  clock?: Clock;
}

const METADATA_MAX_CHARS = 4_096;
const PAYLOAD_MAX_CHARS = 16_384;

const callbackUrl = z
  .string()
  .url()
  .max(2_048)
  .refine((url) => url.startsWith('https://'), 'must be an https:// URL');
const payload = z
  .record(z.string().max(64), z.unknown())
  .refine(
    (value) => JSON.stringify(value).length <= PAYLOAD_MAX_CHARS,
    `must be at most ${PAYLOAD_MAX_CHARS} characters as JSON`,
  );
const metadata = z
  .unknown()
  .refine(
    (value) => value === undefined || (JSON.stringify(value) ?? '').length <= METADATA_MAX_CHARS,
    `must be at most ${METADATA_MAX_CHARS} characters as JSON`,
  );
const priority = z.number().int().min(0).max(10);
const assistant = z.string().min(1).max(64);

const initiateBody = z
  .object({
    phoneNumber: z.string().regex(E164, 'must be an E.164 number such as +919876543210'),
    assistant,
    callbackUrl: callbackUrl.optional(),
    payload: payload.optional(),
    metadata: metadata.optional(),
    priority: priority.optional(),
  })
  .strict();
const webBody = initiateBody.omit({ phoneNumber: true });
const abortBody = z.object({ callId: z.string().min(1).max(64) }).strict();
const updateBody = z
  .object({
    payload: payload.optional(),
    metadata: metadata.optional(),
    callbackUrl: callbackUrl.nullable().optional(),
    priority: priority.optional(),
  })
  .strict();
const callData = z.object({ callId: z.string(), status: z.string() });

const tag = 'Calls';

function publicTarget(url: string | undefined, allowPrivate: boolean): string | null {
  if (url === undefined) return null;
  if (!allowPrivate && isInternalHostName(new URL(url).hostname)) {
    throw invalid('callbackUrl', 'points at a loopback or private address; use a public HTTPS endpoint');
  }
  return url;
}

const answer = (call: CallRecord, message: string) => {
  const data = { callId: call.id, status: V1_STATUS[call.status] };
  return { message, data, extra: data };
};

type PlaceBody = z.output<typeof webBody> & { phoneNumber?: string };
type UpdateBody = z.output<typeof updateBody>;

/** The v1 call routes' work, one method per route. */
class V1CallHandlers {
  private readonly wakeDialers: () => void;
  private readonly wakeDispatcher: () => void;
  private readonly clock: Clock;

  constructor(private readonly deps: V1CallRouteDeps) {
    this.wakeDialers = announceQueued(deps.coord);
    this.wakeDispatcher = announceThrough(deps.coord);
    this.clock = deps.clock ?? systemClock;
  }

  async place(auth: V1Auth, body: PlaceBody, channel: 'phone' | 'web'): Promise<CallRecord> {
    const { call, deliverable } = await this.deps.calls.initiate({
      workspaceId: auth.workspaceId,
      publicKey: auth.publicKey,
      assistantId: body.assistant,
      channel,
      phoneNumber: body.phoneNumber ?? null,
      callbackUrl: publicTarget(body.callbackUrl, this.deps.allowPrivateWebhooks),
      payload: body.payload ?? {},
      metadata: body.metadata ?? null,
      priority: body.priority ?? 0,
    });
    this.wakeDialers();
    if (deliverable) this.wakeDispatcher();
    return call;
  }

  /** A browser call, and what the browser joins it with (as v2 web calls). */
  async web(auth: V1Auth, body: PlaceBody) {
    const gatewayUrl = this.deps.gatewayUrl();
    if (!gatewayUrl) {
      throw new ApiError(
        'not_implemented',
        'web calls need a media gateway: set PUBLIC_GATEWAY_URL on the API nodes',
      );
    }
    const call = await this.place(auth, body, 'web');
    const expiresAt = webJoinDeadline(call, this.deps.webCallJoinMs);
    const token = this.deps.streamTokens.mint(call.id, 'web', Math.max(1, expiresAt - this.clock.now()));
    const base = gatewayUrl.replace(/\/+$/, '');
    const query = `call_id=${call.id}&token=${encodeURIComponent(token)}&autostart=1`;
    const web = {
      url: `${base}/web/${call.id}?token=${encodeURIComponent(token)}`,
      token,
      expiresAt: isoTime(expiresAt),
      pageUrl: `${base.replace(/^ws/, 'http')}/web/static/index.html?${query}`,
    };
    const answered = answer(call, 'web call created');
    return { ...answered, data: { ...answered.data, web } };
  }

  async abort(auth: V1Auth, callId: string) {
    const { call, hangUp } = await this.deps.calls.abort(auth.workspaceId, callId);
    if (hangUp) {
      await sendCallCommand(this.deps.coord, {
        type: 'hangup',
        workspaceId: call.workspaceId,
        callId: call.id,
        carrier: call.carrier,
        carrierCallId: call.carrierCallId,
      }).catch((error: unknown) => {
        if (!isCoordinatorUnavailable(error)) throw error;
      });
    }
    return answer(call, 'call aborted');
  }

  async update(auth: V1Auth, callId: string, body: UpdateBody) {
    const target =
      body.callbackUrl === undefined || body.callbackUrl === null
        ? body.callbackUrl
        : publicTarget(body.callbackUrl, this.deps.allowPrivateWebhooks);
    const { call, deliverable } = await this.deps.calls.update(auth.workspaceId, callId, {
      ...(body.payload !== undefined ? { payload: body.payload } : {}),
      ...(body.metadata !== undefined ? { metadata: body.metadata } : {}),
      ...(target !== undefined ? { callbackUrl: target } : {}),
      ...(body.priority !== undefined ? { priority: body.priority } : {}),
    });
    if (deliverable) this.wakeDispatcher();
    return answer(call, 'call updated');
  }
}

/** `POST /v2/call/initiate`, `/v2/call/web`, `/v2/call/abort`, `PUT /v2/call/{callId}` on the v1 host. */
export function registerV1CallRoutes(
  app: FastifyInstance,
  registry: V1Registry,
  deps: V1CallRouteDeps,
): void {
  const handlers = new V1CallHandlers(deps);
  v1Route(app, registry, {
    method: 'POST',
    url: '/v2/call/initiate',
    operationId: 'v1InitiateCall',
    summary:
      'Place an outbound call (a v2 call underneath: same wallet hold, queue and live-call ceiling). Answers 200 with `callId` and `status` (also inside `data`)',
    tag,
    body: initiateBody,
    data: callData,
    handler: async ({ auth, body }) => answer(await handlers.place(auth, body, 'phone'), 'call initiated'),
  });
  v1Route(app, registry, {
    method: 'POST',
    url: '/v2/call/web',
    operationId: 'v1WebCall',
    summary:
      'Start a browser call with an assistant; `data.web` is what the browser joins with (as v2 web calls)',
    tag,
    body: webBody,
    data: callData.extend({
      web: z.object({ url: z.string(), token: z.string(), expiresAt: z.string(), pageUrl: z.string() }),
    }),
    handler: ({ auth, body }) => handlers.web(auth, body),
  });
  v1Route(app, registry, {
    method: 'POST',
    url: '/v2/call/abort',
    operationId: 'v1AbortCall',
    summary: 'Abort a call (queued, ringing or in progress); never billed',
    tag,
    body: abortBody,
    data: callData,
    handler: ({ auth, body }) => handlers.abort(auth, body.callId),
  });
  v1Route(app, registry, {
    method: 'PUT',
    url: '/v2/call/:callId',
    operationId: 'v1UpdateCall',
    summary:
      'Change what a queued call carries: `payload` (the prompt variables), `metadata`, `callbackUrl`, `priority`. Once it rings, 400',
    tag,
    params: z.object({ callId: z.string().min(1).max(64) }).strict(),
    body: updateBody,
    data: callData,
    handler: ({ auth, params, body }) => handlers.update(auth, params.callId, body),
  });
}
