import { isIP } from 'node:net';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { StreamTokens } from '../../../core/auth/stream-tokens.ts';
import { admitCall } from '../../../core/calls/admission.ts';
import type { CallArtifacts } from '../../../core/calls/artifacts.ts';
import { announceQueued, sendCallCommand } from '../../../core/calls/control.ts';
import type { CallLifecycle } from '../../../core/calls/lifecycle.ts';
import { webJoinDeadline } from '../../../core/calls/recovery.ts';
import { callObject } from '../../../core/calls/representation.ts';
import { ringFrom } from '../../../core/calls/ring-from.ts';
import { type Clock, isoTime, systemClock } from '../../../core/clock.ts';
import type { Config } from '../../../core/config.ts';
import type { Coordinator } from '../../../core/coord/types.ts';
import { isCoordinatorUnavailable } from '../../../core/coord/unavailable.ts';
import { ApiError, invalid, notFound } from '../../../core/errors.ts';
import { announceThrough } from '../../../core/events/announce.ts';
import { isId } from '../../../core/ids.ts';
import { isPrivateAddress } from '../../../core/net/address-policy.ts';
import type { CallRecord, Store } from '../../../core/store/types.ts';
import type { Pacer } from '../../../core/telephony/pacing.ts';
import { toolCallsOf } from '../../../core/tools/tool-calls.ts';
import {
  freshResponse,
  IDEMPOTENCY_HEADER,
  idempotencyKeyOf,
  type KeepResponse,
  REPLAYED_HEADER,
  requestHash,
  respondOnce,
  sendJsonResponse,
} from '../../http/idempotency.ts';
import { listBody, listEnvelope, resolveCursor } from '../../http/pagination.ts';
import { type RouteDefinition, type RouteRegistry, registerRoutes, route } from '../../http/route.ts';
import { RECORDING_LINK_TTL_SECS, RecordingLinks } from '../../http/signed-url.ts';
import type { AuthContext } from '../../plugins/auth.ts';
import {
  type CreateCallBody,
  callSchema,
  createCallBody,
  createdCallSchema,
  type ListCallsQuery,
  listCallsQuery,
  toolCallsSchema,
  transcriptSchema,
} from '../../schemas/call.ts';
import { idParams } from '../../schemas/common.ts';

export interface CallRouteDeps {
  config: Pick<Config, 'publicApiUrl' | 'allowPrivateWebhooks' | 'webCallJoinMs'>;
  store: Store;
  coord: Coordinator;
  artifacts: CallArtifacts;
  secretKey: string;
  /** Mints the one-time token a browser joins a web call with. */
  streamTokens: StreamTokens;
  /** The media gateway's public base URL (ws:// or wss://); undefined when this deployment has none. */
  gatewayUrl: () => string | undefined;
  /** Ends aborted calls and releases their live-call slots. */
  lifecycle: CallLifecycle;
  /** Picks and paces the numbers calls ring from. */
  pacer: Pacer;
  clock?: Clock;
}

/** `localhost` names and literal loopback, private or link-local addresses; names are resolved at delivery. */
function isInternalHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  return isIP(host) !== 0 && isPrivateAddress(host);
}

/** What admission cannot judge: web calls without a gateway to join, and webhook targets inside the platform's network. */
function checkServable(
  body: CreateCallBody,
  allowPrivateWebhooks: boolean,
  gatewayUrl: string | undefined,
): void {
  if (body.channel === 'web' && !gatewayUrl) {
    throw new ApiError(
      'not_implemented',
      'web calls need a media gateway: set PUBLIC_GATEWAY_URL on the API nodes',
    );
  }
  if (body.webhook_url !== undefined && !allowPrivateWebhooks) {
    if (isInternalHost(new URL(body.webhook_url).hostname)) {
      throw invalid('webhook_url', 'points at a loopback or private address; use a public HTTPS endpoint');
    }
  }
}

/** The base URL clients reach this API at: the configured public URL, else the request's own. */
function apiBaseUrl(request: FastifyRequest, publicApiUrl: string | undefined): string {
  if (publicApiUrl) return publicApiUrl.replace(/\/+$/, '');
  return `${request.protocol}://${request.host}`;
}

/** The call routes' work, one named handler per route. */
class CallHandlers {
  private readonly clock: Clock;
  private readonly links: RecordingLinks;
  private readonly wakeDialers: () => void;

  constructor(private readonly deps: CallRouteDeps) {
    this.clock = deps.clock ?? systemClock;
    this.links = new RecordingLinks(deps.secretKey);
    this.wakeDialers = announceQueued(deps.coord);
  }

  /** Admits the call (once per idempotency key, when one is sent) and wakes the dialers. */
  readonly create = async ({ auth, body, request, reply }: HandlerContext<CreateCallBody>) => {
    const key = idempotencyKeyOf(request.headers);
    const gatewayUrl = this.deps.gatewayUrl();
    checkServable(body, this.deps.config.allowPrivateWebhooks, gatewayUrl);
    const admit = (keep: KeepResponse) => this.admit(auth.workspaceId, body, gatewayUrl, keep);
    const response =
      key === undefined
        ? await freshResponse(admit)
        : await respondOnce(
            this.deps.store.idempotency,
            {
              workspaceId: auth.workspaceId,
              key,
              requestHash: requestHash({
                method: request.method,
                path: request.url.split('?')[0] ?? request.url,
                body: request.body,
              }),
            },
            admit,
          );
    return sendJsonResponse(reply, response);
  };

  /** `keep` stores the response for the request's `Idempotency-Key` in the call's own transaction. */
  private async admit(
    workspaceId: string,
    body: CreateCallBody,
    gatewayUrl: string | undefined,
    keep: KeepResponse,
  ): Promise<{ status: number; body: unknown }> {
    const { store, pacer } = this.deps;
    const picked = await ringFrom(store, pacer, {
      workspaceId,
      agentId: body.agent_id,
      channel: body.channel ?? 'phone',
      phoneNumberId: body.phone_number_id,
      poolId: body.pool_id,
    });
    let call: CallRecord;
    let response: { status: number; body: unknown } | undefined;
    try {
      call = await admitCall(
        store,
        {
          workspaceId,
          agentId: body.agent_id,
          channel: body.channel,
          to: body.to,
          tier: body.tier,
          maxDurationSecs: body.max_duration_secs,
          variables: body.variables,
          webhookUrl: body.webhook_url,
          ...(picked
            ? { from: picked.from, phoneNumberId: picked.phoneNumberId, poolId: picked.poolId }
            : {}),
        },
        { announce: announceThrough(this.deps.coord) },
        async (repos, admitted) => {
          response = this.admitted(admitted, gatewayUrl);
          await keep(repos.idempotency, response);
        },
      );
    } catch (error) {
      if (picked) await pacer.giveBack(workspaceId, picked).catch(() => undefined);
      throw error;
    }
    this.wakeDialers();
    return response ?? this.admitted(call, gatewayUrl);
  }

  /** The answer to an admitted call: its object, and for a web call what a browser joins it with. */
  private admitted(call: CallRecord, gatewayUrl: string | undefined): { status: number; body: unknown } {
    if (call.channel !== 'web' || !gatewayUrl) return { status: 202, body: callObject(call) };
    return { status: 202, body: { ...callObject(call), web: this.webJoin(call, gatewayUrl) } };
  }

  /**
   * What a browser joins a web call with. The token lives the join window from the call's creation, the same
   * deadline recovery holds the unjoined call to (`webJoinDeadline`). A web call that waits in the queue behind
   * the workspace's live calls keeps its place; the browser holds its connection open meanwhile. `page_url`
   * opens the gateway's demo page, which joins at once (`autostart=1`).
   */
  private webJoin(call: CallRecord, gatewayUrl: string) {
    const expiresAt = webJoinDeadline(call, this.deps.config.webCallJoinMs);
    const token = this.deps.streamTokens.mint(call.id, 'web', Math.max(1, expiresAt - this.clock.now()));
    const base = gatewayUrl.replace(/\/+$/, '');
    const query = `call_id=${call.id}&token=${encodeURIComponent(token)}&autostart=1`;
    return {
      url: `${base}/web/${call.id}?token=${encodeURIComponent(token)}`,
      token,
      expires_at: isoTime(expiresAt),
      page_url: `${base.replace(/^ws/, 'http')}/web/static/index.html?${query}`,
    };
  }

  readonly list = async ({ auth, query }: { auth: AuthContext; query: ListCallsQuery }) => {
    const after = resolveCursor(query, 'call');
    const page = await this.deps.store.calls.list(auth.workspaceId, {
      limit: query.limit,
      after,
      status: query.status,
      agentId: query.agent_id,
      campaignId: query.campaign_id,
      createdFrom: query.created_after,
      createdTo: query.created_before,
    });
    return listBody(page.items.map(callObject), page.hasMore, (c) => c.id);
  };

  readonly get = async ({ auth, params }: WithCallId) => ({
    ...callObject(await this.callOf(auth.workspaceId, params.id)),
    tool_calls: await toolCallsOf(this.deps.store, auth.workspaceId, params.id),
  });

  /** Ends the call `aborted` and, when it was ringing or live, tells its carrier or gateway to hang up. */
  readonly abort = async ({ auth, params }: WithCallId) => {
    if (!isId('call', params.id)) throw notFound('call');
    const { call, hangUp } = await this.deps.lifecycle.abort(auth.workspaceId, params.id);
    if (hangUp) {
      // The abort is committed; while Redis is away the command cannot go out, and the gateway running the
      // call ends its media when its next slot renewal finds the call ended in the store.
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
    return callObject(call);
  };

  readonly transcript = async ({ auth, params }: WithCallId) => {
    const call = await this.callOf(auth.workspaceId, params.id);
    const turns = await this.deps.artifacts.readTranscript(call.workspaceId, call.id);
    if (!turns) throw notFound('transcript');
    return { object: 'transcript' as const, call_id: call.id, turns };
  };

  /** Redirects to a signed link, so the download needs no key. */
  readonly recording = async ({ auth, params, request, reply }: WithCallId) => {
    const call = await this.callOf(auth.workspaceId, params.id);
    if ((await this.deps.artifacts.recordingSize(call.workspaceId, call.id)) === undefined)
      throw notFound('recording');
    const link = this.links.pathFor(call.workspaceId, call.id, this.clock.now());
    return reply
      .header('cache-control', 'no-store')
      .redirect(`${apiBaseUrl(request, this.deps.config.publicApiUrl)}${link}`, 302);
  };

  private async callOf(workspaceId: string, id: string): Promise<CallRecord> {
    const call = isId('call', id) ? await this.deps.store.calls.get(workspaceId, id) : undefined;
    if (!call) throw notFound('call');
    return call;
  }
}

interface HandlerContext<B> {
  auth: AuthContext;
  body: B;
  request: FastifyRequest;
  reply: FastifyReply;
}

interface WithCallId {
  auth: AuthContext;
  params: { id: string };
  request: FastifyRequest;
  reply: FastifyReply;
}

const tag = 'Calls';
const params = idParams('call');

/** The call routes, under the v2 prefix. */
function callRoutes(handlers: CallHandlers): RouteDefinition[] {
  return [
    route({
      method: 'POST',
      url: '/calls',
      operationId: 'createCall',
      summary: `Place a call (202, status queued). Send an ${IDEMPOTENCY_HEADER} header (at most 255 characters, kept 24 hours) to make retries safe; a replay carries ${REPLAYED_HEADER}: true`,
      tag,
      body: createCallBody,
      responses: {
        202: {
          description:
            'The call, queued; a web call also carries `web`, what a browser needs to join. A replay returns the original response byte for byte',
          schema: createdCallSchema,
        },
      },
      errors: [
        'invalid_request',
        'insufficient_balance',
        'not_found',
        'duplicate_call',
        'conflict',
        'pool_busy',
        'pool_unavailable',
        'rate_limited',
        'not_implemented',
        'tier_unavailable',
      ],
      handler: handlers.create,
    }),
    route({
      method: 'GET',
      url: '/calls',
      operationId: 'listCalls',
      summary: 'List calls, newest first (cursor-paginated); filter by status, agent_id and creation time',
      tag,
      query: listCallsQuery,
      responses: { 200: { description: 'A page of calls', schema: listEnvelope(callSchema) } },
      errors: ['invalid_request'],
      handler: handlers.list,
    }),
    route({
      method: 'GET',
      url: '/calls/:id',
      operationId: 'getCall',
      summary: 'Read a call (the object webhook events carry, plus the tool runs of its agent as tool_calls)',
      tag,
      params,
      responses: {
        200: { description: 'The call', schema: callSchema.extend({ tool_calls: toolCallsSchema }) },
      },
      errors: ['not_found'],
      handler: handlers.get,
    }),
    route({
      method: 'POST',
      url: '/calls/:id/abort',
      operationId: 'abortCall',
      summary: 'Abort a queued, ringing or live call (never billed); an ended call is 409 conflict',
      tag,
      params,
      body: z.object({}).strict(),
      bodyOptional: true,
      responses: { 200: { description: 'The call, aborted', schema: callSchema } },
      errors: ['not_found', 'conflict'],
      handler: handlers.abort,
    }),
  ];
}

/** What an ended call left: its transcript and recording. */
function callArtifactRoutes(handlers: CallHandlers): RouteDefinition[] {
  return [
    route({
      method: 'GET',
      url: '/calls/:id/transcript',
      operationId: 'getCallTranscript',
      summary: 'The turn-by-turn transcript as spoken',
      tag,
      params,
      responses: { 200: { description: 'The transcript', schema: transcriptSchema } },
      errors: ['not_found'],
      handler: handlers.transcript,
    }),
    route({
      method: 'GET',
      url: '/calls/:id/recording',
      operationId: 'getCallRecording',
      summary: `Redirect (302) to a signed download link of the two-channel WAV, valid ${RECORDING_LINK_TTL_SECS / 60} minutes`,
      tag,
      params,
      responses: {
        302: {
          description:
            'Location: the signed link (GET /recordings/{workspace_id}/{call_id}.wav), no key needed',
          headers: { Location: 'the signed link' },
        },
      },
      errors: ['not_found'],
      handler: handlers.recording,
    }),
  ];
}

export function registerCallRoutes(app: FastifyInstance, registry: RouteRegistry, deps: CallRouteDeps): void {
  const handlers = new CallHandlers(deps);
  registerRoutes(app, registry, [...callRoutes(handlers), ...callArtifactRoutes(handlers)]);
}
