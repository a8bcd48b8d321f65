import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { RingOutcome } from '../../../core/calls/carrier.ts';
import {
  type CallbackParams,
  failureDetailOf,
  paramOf,
  ringOutcomeOf,
  TWILIO_SIGNATURE_HEADER,
  verifyTwilioSignature,
} from '../../../core/calls/carriers/twilio-status.ts';
import { settleRingOutcomes } from '../../../core/calls/dialer.ts';
import type { CallLifecycle } from '../../../core/calls/lifecycle.ts';
import { ApiError } from '../../../core/errors.ts';
import { isId } from '../../../core/ids.ts';
import type { CallRecord, Store } from '../../../core/store/types.ts';
import { defineRoute, type RouteRegistry } from '../../http/route.ts';

/** Where Twilio posts a call's status callbacks: `<PUBLIC_API_URL><path>/<call id>` (the carrier's option). */
export const TWILIO_STATUS_CALLBACK_PATH = '/carriers/twilio/status';

/**
 * The dialer records the Twilio call sid just after Twilio accepted the call; a callback can beat that write
 * by a few milliseconds. This long it waits for the sid before leaving the callback unanswered.
 */
const CARRIER_CALL_ID_WAIT_MS = 1_000;
const CARRIER_CALL_ID_POLL_MS = 50;

export interface TwilioCallbackDeps {
  store: Store;
  /** Settles calls; give it the live-call slots so a settled call frees its line at once. */
  lifecycle: CallLifecycle;
  /** `TWILIO_AUTH_TOKEN`: the key of Twilio's request signatures. */
  authToken: string;
  /** `PUBLIC_API_URL`, the base of the URL Twilio called and signed; else the request's own. */
  publicApiUrl?: string | undefined;
}

const formFields = z.record(z.string(), z.union([z.string(), z.array(z.string())]));

/**
 * `POST /carriers/twilio/status/{call_id}`: Twilio's call status callbacks. No API key: the request must carry
 * Twilio's signature (`X-Twilio-Signature`) of its public URL and form, else `401 unauthorized`. A callback
 * about a call that is still ringing at our end, from the Twilio call we placed for it (`CallSid`), settles a
 * busy, unanswered or failed call; everything else is acknowledged and left alone. Every accepted callback
 * answers 204 (Twilio only needs a 2xx).
 */
export function registerTwilioCallbackRoutes(
  app: FastifyInstance,
  registry: RouteRegistry,
  deps: TwilioCallbackDeps,
): void {
  const reportRingOutcome = settleRingOutcomes(deps.lifecycle);

  // Encapsulated, so the form parser serves these routes only.
  app.register(async (scoped) => {
    scoped.addContentTypeParser(
      'application/x-www-form-urlencoded',
      { parseAs: 'string' },
      (_request, body, done) => done(null, parseForm(body as string)),
    );

    defineRoute(scoped, registry, {
      method: 'POST',
      url: `${TWILIO_STATUS_CALLBACK_PATH}/:call_id`,
      operationId: 'twilioStatusCallback',
      summary:
        'Twilio call status callback (form-encoded, signed with X-Twilio-Signature); for Twilio, not for clients',
      tag: 'Carriers',
      auth: false,
      params: z.object({ call_id: z.string().min(1).max(64) }),
      body: formFields,
      responses: { 204: { description: 'Accepted' } },
      errors: ['unauthorized', 'invalid_request'],
      handler: async ({ params, body, request, reply }) => {
        const signature = request.headers[TWILIO_SIGNATURE_HEADER];
        const url = signedUrlOf(request, deps.publicApiUrl);
        if (typeof signature !== 'string' || !verifyTwilioSignature(url, body, signature, deps.authToken)) {
          throw new ApiError('unauthorized', 'X-Twilio-Signature does not match this request');
        }
        await applyCallback(params.call_id, body);
        return reply.code(204).send();
      },
    });
  });

  async function applyCallback(callId: string, fields: CallbackParams): Promise<void> {
    const callSid = paramOf(fields, 'CallSid');
    if (!callSid || !isId('call', callId)) return;
    const verdict = ringOutcomeOf(paramOf(fields, 'CallStatus') ?? '', {
      callDuration: paramOf(fields, 'CallDuration'),
    });
    if (verdict === 'answered' || verdict === 'ignore') return;
    const call = await ringingCall(callId);
    // Another Twilio call than the one recorded (a duplicate of a retried create): not this call's news.
    if (!call || call.carrierCallId !== callSid) return;
    const ref = { workspaceId: call.workspaceId, callId: call.id };
    if (verdict === 'completed') {
      // Twilio connected and finished the call, yet no media stream ever reached the gateway.
      await deps.lifecycle.settle(call.workspaceId, call.id, 'pipeline_error', {
        error: 'Twilio completed the call but its media stream never reached the gateway',
      });
      return;
    }
    await reportRingOutcome(ref, verdict, detailOf(verdict, fields));
  }

  /** The call while it is dialing through Twilio, once its Twilio call sid is recorded. */
  async function ringingCall(callId: string): Promise<CallRecord | undefined> {
    const deadline = Date.now() + CARRIER_CALL_ID_WAIT_MS;
    for (;;) {
      const call = await deps.store.calls.findById(callId);
      if (call?.status !== 'dialing' || call.carrier !== 'twilio') return undefined;
      if (call.carrierCallId !== null || Date.now() >= deadline) return call;
      await sleep(CARRIER_CALL_ID_POLL_MS);
    }
  }
}

function detailOf(outcome: RingOutcome, fields: CallbackParams): string | undefined {
  return outcome === 'carrier_failed' ? failureDetailOf(fields) : undefined;
}

/** A form body; a name that repeats keeps every value. */
export function parseForm(text: string): Record<string, string | string[]> {
  // No prototype: a field named `__proto__` or `constructor` is just a field.
  const fields: Record<string, string | string[]> = Object.create(null);
  for (const [name, value] of new URLSearchParams(text)) {
    const previous = fields[name];
    if (previous === undefined) fields[name] = value;
    else if (typeof previous === 'string') fields[name] = [previous, value];
    else previous.push(value);
  }
  return fields;
}

/** The URL Twilio requested: the public API URL (behind proxies) or the request's own, with the query. */
export function signedUrlOf(request: FastifyRequest, publicApiUrl: string | undefined): string {
  const base = publicApiUrl ? publicApiUrl.replace(/\/+$/, '') : `${request.protocol}://${request.host}`;
  return `${base}${request.url}`;
}
