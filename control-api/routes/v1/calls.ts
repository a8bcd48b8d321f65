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

/** `POST /v2/call/initiate`, `/v2/call/web`, `/v2/call/abort`, `PUT /v2/call/{callId}` on the v1 host. */
export function registerV1CallRoutes(
  app: FastifyInstance,
  registry: V1Registry,
  deps: V1CallRouteDeps,
): void {
  const wakeDialers = announceQueued(deps.coord);
  const wakeDispatcher = announceThrough(deps.coord);
  const clock = deps.clock ?? systemClock;
  const place = async (
    auth: V1Auth,
    body: z.output<typeof webBody> & { phoneNumber?: string },
    channel: 'phone' | 'web',
  ) => {
    const { call, deliverable } = await deps.calls.initiate({
      workspaceId: auth.workspaceId,
      publicKey: auth.publicKey,
      assistantId: body.assistant,
      channel,
      phoneNumber: body.phoneNumber ?? null,
      callbackUrl: publicTarget(body.callbackUrl, deps.allowPrivateWebhooks),
      payload: body.payload ?? {},
      metadata: body.metadata ?? null,
      priority: body.priority ?? 0,
    });
    wakeDialers();
    if (deliverable) wakeDispatcher();
    return call;
  };

  v1Route(app, registry, {
    method: 'POST',
    url: '/v2/call/initiate',
    operationId: 'v1InitiateCall',
    summary:
      'Place an outbound call (a v2 call underneath: same wallet hold, queue and live-call ceiling). Answers 200 with `callId` and `status` (also inside `data`)',
    tag,
    body: initiateBody,
    data: callData,
    handler: async ({ auth, body }) => answer(await place(auth, body, 'phone'), 'call initiated'),
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
    handler: async ({ auth, body }) => {
      const gatewayUrl = deps.gatewayUrl();
      if (!gatewayUrl) {
        throw new ApiError(
          'not_implemented',
          'web calls need a media gateway: set PUBLIC_GATEWAY_URL on the API nodes',
        );
      }
      const call = await place(auth, body, 'web');
      const expiresAt = webJoinDeadline(call, deps.webCallJoinMs);
      const token = deps.streamTokens.mint(call.id, 'web', Math.max(1, expiresAt - clock.now()));
      const base = gatewayUrl.replace(/\/+$/, '');
      const query = `call_id=${call.id}&token=${encodeURIComponent(token)}&autostart=1`;
      const web = {
        url: `${base}/web/${call.id}?token=${encodeURIComponent(token)}`,
        token,
        expiresAt: isoTime(expiresAt),
        pageUrl: `${base.replace(/^ws/, 'http')}/web/static/index.html?${query}`,
      };
      const base1 = answer(call, 'web call created');
      return { ...base1, data: { ...base1.data, web } };
    },
  });

  v1Route(app, registry, {
    method: 'POST',
    url: '/v2/call/abort',
    operationId: 'v1AbortCall',
    summary: 'Abort a call (queued, ringing or in progress); never billed',
    tag,
    body: abortBody,
    data: callData,
    handler: async ({ auth, body }) => {
      const { call, hangUp } = await deps.calls.abort(auth.workspaceId, body.callId);
      if (hangUp) {
        await sendCallCommand(deps.coord, {
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
    },
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
    handler: async ({ auth, params, body }) => {
      const { call, deliverable } = await deps.calls.update(auth.workspaceId, params.callId, {
        ...(body.payload !== undefined ? { payload: body.payload } : {}),
        ...(body.metadata !== undefined ? { metadata: body.metadata } : {}),
        ...(body.callbackUrl !== undefined
          ? {
              callbackUrl:
                body.callbackUrl === null ? null : publicTarget(body.callbackUrl, deps.allowPrivateWebhooks),
            }
          : {}),
        ...(body.priority !== undefined ? { priority: body.priority } : {}),
      });
      if (deliverable) wakeDispatcher();
      return answer(call, 'call updated');
    },
  });
}
