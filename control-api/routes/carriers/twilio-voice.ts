import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { z } from 'zod';
import type { StreamTokens } from '../../../core/auth/stream-tokens.ts';
import {
  type CallbackParams,
  paramOf,
  TWILIO_SIGNATURE_HEADER,
  verifyTwilioSignature,
} from '../../../core/calls/carriers/twilio-status.ts';
import type { IncomingCalls } from '../../../core/calls/incoming.ts';
import type { CallLifecycle } from '../../../core/calls/lifecycle.ts';
import { ApiError } from '../../../core/errors.ts';
import type { PhoneNumberRecord, Store } from '../../../core/store/types.ts';
import type { TwilioAccounts } from '../../../core/telephony/twilio-account.ts';
import { defineRoute, type RouteRegistry } from '../../http/route.ts';
import { parseForm, signedUrlOf } from './twilio.ts';

/** Where imported Twilio numbers send their incoming calls: `<PUBLIC_API_URL><path>/<number id>`. */
export const TWILIO_VOICE_PATH = '/carriers/twilio/voice';

/** The caller's stream must reach the gateway within this; Twilio connects it within a second or two. */
const STREAM_TOKEN_TTL_MS = 60_000;
/** What a caller hears when every live line of the workspace is taken. */
const BUSY_MESSAGE = 'All our lines are busy right now. Please call again in a few minutes. Goodbye.';
/** Call statuses that end a call at Twilio. */
const ENDED = new Set(['completed', 'canceled', 'failed', 'busy', 'no-answer']);

export interface TwilioVoiceDeps {
  store: Store;
  accounts: TwilioAccounts;
  incoming: IncomingCalls;
  lifecycle: CallLifecycle;
  tokens: StreamTokens;
  /** The gateway's public base URL (ws:// or wss://), when the deployment has one. */
  gatewayUrl: () => string | undefined;
  publicApiUrl?: string | undefined;
  logger: Logger;
}

const formFields = z.record(z.string(), z.union([z.string(), z.array(z.string())]));
const params = z.object({ number_id: z.string().min(1).max(64) });

/**
 * Incoming calls to numbers imported from a customer's Twilio account. No API key: every request must carry
 * Twilio's signature (`X-Twilio-Signature`) made with that number's own auth token, else `403` and nothing is
 * created.
 *
 * `POST /carriers/twilio/voice/{number_id}` answers TwiML: `<Connect><Stream>` to the gateway's Twilio media
 * route with a one-time stream token when the call is admitted (core/calls/incoming.ts); `<Reject/>` when the
 * number has no agent or the wallet cannot cover the agent's longest call; a short `<Say>` then `<Hangup/>` when
 * the workspace's live calls are all in use. `POST .../{number_id}/status` takes the call's status callbacks: a
 * call that ends at Twilio before its media reached the gateway ends `failed`, free.
 */
export function registerTwilioVoiceRoutes(
  app: FastifyInstance,
  registry: RouteRegistry,
  deps: TwilioVoiceDeps,
): void {
  const logger = deps.logger.child({ component: 'twilio_incoming' });
  // Encapsulated, so the form parser serves these routes only.
  app.register(async (scoped) => {
    scoped.addContentTypeParser(
      'application/x-www-form-urlencoded',
      { parseAs: 'string' },
      (_request, body, done) => done(null, parseForm(body as string)),
    );
    defineIncomingCallRoute(scoped, registry, deps, logger);
    defineIncomingStatusRoute(scoped, registry, deps, logger);
  });
}

function defineIncomingCallRoute(
  app: FastifyInstance,
  registry: RouteRegistry,
  deps: TwilioVoiceDeps,
  logger: Logger,
): void {
  defineRoute(app, registry, {
    method: 'POST',
    url: `${TWILIO_VOICE_PATH}/:number_id`,
    operationId: 'twilioIncomingCall',
    summary:
      'Twilio incoming-call webhook of an imported number (form-encoded, signed with X-Twilio-Signature by the number’s account); answers TwiML. For Twilio, not for clients',
    tag: 'Carriers',
    auth: false,
    params,
    body: formFields,
    responses: { 200: { description: 'TwiML: <Connect><Stream>, <Reject/>, or <Say> then <Hangup/>' } },
    errors: ['forbidden', 'not_found', 'invalid_request'],
    handler: async ({ params: p, body, request, reply }) => {
      const number = await signedNumber(deps, logger, p.number_id, body, request);
      const callSid = paramOf(body, 'CallSid');
      const from = paramOf(body, 'From');
      if (!callSid || !from) throw new ApiError('invalid_request', 'CallSid and From are required');
      const log = logger.child({ phone_number_id: number.id, workspace_id: number.workspaceId, callSid });
      const gateway = deps.gatewayUrl();
      if (!number.incomingEnabled || !gateway) {
        log.warn(
          { reason: gateway ? 'incoming calls are off' : 'no media gateway' },
          'incoming call rejected',
        );
        return twiml(reply, '<Reject/>');
      }
      const verdict = await deps.incoming.admit({ number, from, carrier: 'twilio', carrierCallId: callSid });
      if (verdict.kind === 'reject') {
        log.warn({ reason: verdict.reason }, 'incoming call rejected');
        return twiml(reply, '<Reject/>');
      }
      if (verdict.kind === 'busy') {
        log.warn({ reason: verdict.reason }, 'incoming call over the live-call ceiling: busy message');
        return twiml(reply, `<Say>${xml(BUSY_MESSAGE)}</Say><Hangup/>`);
      }
      const token = deps.tokens.mint(verdict.call.id, 'twilio', STREAM_TOKEN_TTL_MS);
      log.info({ call_id: verdict.call.id }, 'incoming call connects to the gateway');
      return twiml(
        reply,
        `<Connect><Stream url="${xml(mediaUrlOf(gateway))}"><Parameter name="token" value="${xml(token)}"/></Stream></Connect>`,
      );
    },
  });
}

function defineIncomingStatusRoute(
  app: FastifyInstance,
  registry: RouteRegistry,
  deps: TwilioVoiceDeps,
  logger: Logger,
): void {
  defineRoute(app, registry, {
    method: 'POST',
    url: `${TWILIO_VOICE_PATH}/:number_id/status`,
    operationId: 'twilioIncomingCallStatus',
    summary:
      'Twilio call status callback of an imported number’s incoming calls (signed like the webhook); for Twilio, not for clients',
    tag: 'Carriers',
    auth: false,
    params,
    body: formFields,
    responses: { 204: { description: 'Accepted' } },
    errors: ['forbidden', 'not_found'],
    handler: async ({ params: p, body, request, reply }) => {
      const number = await signedNumber(deps, logger, p.number_id, body, request);
      const callSid = paramOf(body, 'CallSid');
      const status = paramOf(body, 'CallStatus') ?? '';
      if (callSid && ENDED.has(status)) {
        const call = await deps.store.calls.findByCarrierCall(number.workspaceId, callSid);
        // Once media flows the gateway ends the call; before that only Twilio knows the caller left.
        if (call?.status === 'dialing' && call.carrier === 'twilio') {
          await deps.lifecycle.settle(call.workspaceId, call.id, 'pipeline_error', {
            error: `Twilio reported the incoming call ${status} before its media stream reached the gateway`,
          });
        }
      }
      return reply.code(204).send();
    },
  });
}

/** The imported number the request is about, once its signature checks with the number's own auth token. */
async function signedNumber(
  deps: TwilioVoiceDeps,
  logger: Logger,
  numberId: string,
  fields: CallbackParams,
  request: FastifyRequest,
): Promise<PhoneNumberRecord> {
  const number = await deps.store.phoneNumbers.findById(numberId);
  if (number?.provider !== 'twilio') throw new ApiError('not_found', `phone number ${numberId} not found`);
  const credentials = deps.accounts.open(number);
  const signature = request.headers[TWILIO_SIGNATURE_HEADER];
  const url = signedUrlOf(request, deps.publicApiUrl);
  const signed =
    typeof signature === 'string' && verifyTwilioSignature(url, fields, signature, credentials.authToken);
  if (!signed || paramOf(fields, 'AccountSid') !== credentials.accountSid) {
    logger.warn({ phone_number_id: number.id }, 'incoming call webhook with a bad signature refused');
    throw new ApiError('forbidden', 'X-Twilio-Signature does not match this request');
  }
  return number;
}

function twiml(reply: FastifyReply, verbs: string): FastifyReply {
  return reply
    .code(200)
    .type('text/xml; charset=utf-8')
    .send(`<?xml version="1.0" encoding="UTF-8"?><Response>${verbs}</Response>`);
}

function mediaUrlOf(gatewayUrl: string): string {
  return `${gatewayUrl.replace(/\/+$/, '')}/media/twilio`;
}

function xml(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;');
}
