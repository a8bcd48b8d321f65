/**
 * Twilio status callbacks: the signature check against Twilio's documented vectors and an HMAC computed here
 * with node:crypto; the mapping of call statuses; and the callback route on a real store (SQLite always,
 * PostgreSQL when configured), fed by the fake Twilio over a real socket: busy, no-answer and failed settle
 * a ringing call, a bad signature is 401 and changes nothing, a callback about another Twilio call changes
 * nothing.
 */
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import Fastify, { type FastifyInstance } from 'fastify';
import { RouteRegistry } from '../../control-api/http/route.ts';
import { frameworkErrorHandler, registerErrorHandling } from '../../control-api/plugins/errors.ts';
import {
  registerTwilioCallbackRoutes,
  TWILIO_STATUS_CALLBACK_PATH,
} from '../../control-api/routes/carriers/twilio.ts';
import { MemoryTokenClaims, StreamTokens } from '../../core/auth/stream-tokens.ts';
import { admitCall } from '../../core/calls/admission.ts';
import {
  ringOutcomeOf,
  twilioSignature,
  verifyTwilioSignature,
} from '../../core/calls/carriers/twilio-status.ts';
import { CallLifecycle } from '../../core/calls/lifecycle.ts';
import { fundedWorkspace } from '../../core/calls/testing/workspaces.ts';
import { storeTargets } from '../../core/store/testing/targets.ts';
import type { CallRecord, Store } from '../../core/store/types.ts';
import { TwilioCarrier } from '../../gateway/carriers/twilio/originate.ts';
import {
  FakeTwilioRestServer,
  statusCallbackParams,
} from '../../gateway/carriers/twilio/testing/fake-rest-server.ts';

/** Twilio's documented request-validation example (auth token `12345`). */
const DOC_URL = 'https://mycompany.com/myapp.php?foo=1&bar=2';
const DOC_PARAMS = {
  CallSid: 'CA1234567890ABCDE',
  Caller: '+14158675309',
  Digits: '1234',
  From: '+14158675309',
  To: '+18005551212',
};
const DOC_SIGNATURE = 'RSOYDt4T1cUTdK1PDd93/VVr8B8=';

/** Twilio's algorithm, written out here: URL, then name + value for each parameter sorted by name. */
function referenceSignature(url: string, params: Record<string, string>, token: string): string {
  let data = url;
  for (const name of Object.keys(params).sort()) data += `${name}${params[name]}`;
  return createHmac('sha1', token).update(data).digest('base64');
}

describe('twilio signature', () => {
  test("matches Twilio's documented example", () => {
    assert.equal(twilioSignature(DOC_URL, DOC_PARAMS, '12345'), DOC_SIGNATURE);
    assert.equal(verifyTwilioSignature(DOC_URL, DOC_PARAMS, DOC_SIGNATURE, '12345'), true);
  });

  test('matches an HMAC-SHA1 computed independently, whatever order the parameters come in', () => {
    const url = 'https://api.example.com/carriers/twilio/status/call_01JTWILIOSIG000000000000000';
    const params = statusCallbackParams(
      { accountSid: 'AC0123', sid: 'CA0123', to: '+919812345678', from: '+14155550100' },
      'no-answer',
      { CallDuration: '0', Timestamp: 'Tue, 01 Sep 2026 10:00:00 GMT' },
    );
    const token = 'f00dfeedf00dfeedf00dfeedf00dfeed';
    const expected = referenceSignature(url, params, token);
    const reversed = Object.fromEntries(Object.entries(params).reverse());
    assert.equal(twilioSignature(url, reversed, token), expected);
    assert.equal(verifyTwilioSignature(url, reversed, expected, token), true);
  });

  test('a repeated parameter signs each distinct value, sorted (documented vector)', () => {
    const params = { Sid: 'CA123', SidAccount: 'AC123', Digits: ['5678', '1234', '1234'] };
    assert.equal(twilioSignature(DOC_URL, params, '12345'), 'IK+Dwps556ElfBT0I3Rgjkr1wJU=');
  });

  test('any change to the URL, a parameter, the token or the header fails', () => {
    const verify = (
      url: string,
      params: Record<string, string>,
      header: string | undefined,
      token = '12345',
    ) => verifyTwilioSignature(url, params, header, token);
    assert.equal(verify(`${DOC_URL}&extra=1`, DOC_PARAMS, DOC_SIGNATURE), false);
    assert.equal(verify(DOC_URL.replace('https:', 'http:'), DOC_PARAMS, DOC_SIGNATURE), false);
    assert.equal(verify(DOC_URL, { ...DOC_PARAMS, Digits: '9999' }, DOC_SIGNATURE), false);
    assert.equal(verify(DOC_URL, { ...DOC_PARAMS, Extra: '' }, DOC_SIGNATURE), false);
    const { Digits: _dropped, ...withoutDigits } = DOC_PARAMS;
    assert.equal(verify(DOC_URL, withoutDigits, DOC_SIGNATURE), false);
    assert.equal(verify(DOC_URL, DOC_PARAMS, DOC_SIGNATURE, '54321'), false);
    assert.equal(verify(DOC_URL, DOC_PARAMS, DOC_SIGNATURE, ''), false);
    assert.equal(verify(DOC_URL, DOC_PARAMS, undefined), false);
    assert.equal(verify(DOC_URL, DOC_PARAMS, ''), false);
    assert.equal(verify(DOC_URL, DOC_PARAMS, DOC_SIGNATURE.slice(0, -1)), false);
    assert.equal(verify(DOC_URL, DOC_PARAMS, `${DOC_SIGNATURE}=`), false);
    assert.equal(verify(DOC_URL, DOC_PARAMS, 'invalid 王'), false);
  });

  test("the scheme's default port may be written out or left out, like Twilio's validators allow", () => {
    const token = '12345';
    const bare = 'https://api.example.com/carriers/twilio/status/call_1';
    const withPort = 'https://api.example.com:443/carriers/twilio/status/call_1';
    assert.equal(
      verifyTwilioSignature(withPort, DOC_PARAMS, referenceSignature(bare, DOC_PARAMS, token), token),
      true,
    );
    assert.equal(
      verifyTwilioSignature(bare, DOC_PARAMS, referenceSignature(withPort, DOC_PARAMS, token), token),
      true,
    );
    const otherPort = 'https://api.example.com:8443/carriers/twilio/status/call_1';
    assert.equal(
      verifyTwilioSignature(otherPort, DOC_PARAMS, referenceSignature(bare, DOC_PARAMS, token), token),
      false,
    );
  });
});

describe('twilio call statuses', () => {
  test('map to ring outcomes, answered, completed or nothing', () => {
    assert.equal(ringOutcomeOf('busy'), 'busy');
    assert.equal(ringOutcomeOf('no-answer'), 'ring_timeout');
    assert.equal(ringOutcomeOf('failed'), 'carrier_failed');
    assert.equal(ringOutcomeOf('in-progress'), 'answered');
    assert.equal(ringOutcomeOf('completed', { callDuration: '42' }), 'completed');
    assert.equal(ringOutcomeOf('completed'), 'completed');
    assert.equal(ringOutcomeOf('completed', { callDuration: '0' }), 'ring_timeout', 'completed unanswered');
    for (const ignored of ['canceled', 'queued', 'initiated', 'ringing', '', 'Busy', 'something-new'])
      assert.equal(ringOutcomeOf(ignored), 'ignore', ignored);
  });
});

const targets = await storeTargets('twilio_callbacks');
const AUTH_TOKEN = 'twilio-callback-test-auth-token-0001';
const PUBLIC_API_URL = 'https://api.voice.example.com';

for (const target of targets) {
  describe(`twilio status callback route on ${target.name}`, () => {
    let store: Store;
    let lifecycle: CallLifecycle;
    let fake: FakeTwilioRestServer;
    let direct: FastifyInstance;
    let proxied: FastifyInstance;
    let directUrl: string;
    let proxiedUrl: string;
    let sidCounter = 0;

    const startApp = async (publicApiUrl?: string): Promise<{ app: FastifyInstance; url: string }> => {
      const app = Fastify({ frameworkErrors: frameworkErrorHandler, bodyLimit: 64 * 1024 });
      registerErrorHandling(app, { bodyLimitBytes: 64 * 1024 });
      registerTwilioCallbackRoutes(app, new RouteRegistry(), {
        store,
        lifecycle,
        authToken: AUTH_TOKEN,
        ...(publicApiUrl ? { publicApiUrl } : {}),
      });
      await app.listen({ host: '127.0.0.1', port: 0 });
      return { app, url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}` };
    };

    before(async () => {
      store = await target.open();
      lifecycle = new CallLifecycle({ store });
      fake = await FakeTwilioRestServer.start({ authToken: AUTH_TOKEN });
      ({ app: direct, url: directUrl } = await startApp());
      ({ app: proxied, url: proxiedUrl } = await startApp(PUBLIC_API_URL));
    });
    after(async () => {
      await direct.close();
      await proxied.close();
      await fake.close();
      await store.close();
      await target.cleanup();
    });

    const nextSid = () => `CA${(++sidCounter).toString(16).padStart(32, '0')}`;

    /** An admitted call moved to dialing through Twilio, with `sid` recorded as its Twilio call (unless null). */
    const dialingCall = async (sid: string | null = nextSid()) => {
      const { workspaceId, agentId } = await fundedWorkspace(store, 100_000);
      const admitted = await admitCall(store, { workspaceId, agentId, to: '+919812345678' });
      const dialing = await lifecycle.markDialing(workspaceId, admitted.id, { carrier: 'twilio' });
      assert.equal(dialing?.status, 'dialing');
      if (sid !== null)
        await store.calls.setCarrierCall(workspaceId, admitted.id, { carrier: 'twilio', carrierCallId: sid });
      return { call: admitted, sid: sid ?? nextSid() };
    };
    const callbackUrl = (base: string, callId: string) => `${base}${TWILIO_STATUS_CALLBACK_PATH}/${callId}`;
    const paramsFor = (sid: string, callStatus: string, extra: Record<string, string> = {}) =>
      statusCallbackParams(
        { accountSid: fake.accountSid, sid, to: '+919812345678', from: '+14155550100' },
        callStatus,
        extra,
      );
    const post = (
      callId: string,
      params: Record<string, string>,
      options: Parameters<FakeTwilioRestServer['postSigned']>[2] = {},
    ) => fake.postSigned(callbackUrl(directUrl, callId), params, options);
    const reload = async (call: CallRecord) => (await store.calls.findById(call.id)) as CallRecord;
    const terminalEvents = async (call: CallRecord) =>
      (await store.events.listForCall(call.workspaceId, call.id)).filter((e) => e.type !== 'call.queued');

    test('busy ends the ringing call busy, with one call.failed event, and answers 204', async () => {
      const { call, sid } = await dialingCall();
      const answer = await post(call.id, paramsFor(sid, 'busy', { CallDuration: '0' }));
      assert.equal(answer.status, 204);
      assert.equal(answer.body, '');
      const ended = await reload(call);
      assert.equal(ended.status, 'busy');
      assert.equal(ended.endedReason, 'customer-busy');
      assert.equal(ended.costPaise, 0);
      assert.deepEqual(
        (await terminalEvents(call)).map((e) => e.type),
        ['call.failed'],
      );

      assert.equal((await post(call.id, paramsFor(sid, 'busy'))).status, 204, 'a repeat is acknowledged');
      assert.equal((await terminalEvents(call)).length, 1, 'and changes nothing');
    });

    test('no-answer ends the call no_answer', async () => {
      const { call, sid } = await dialingCall();
      assert.equal((await post(call.id, paramsFor(sid, 'no-answer', { CallDuration: '0' }))).status, 204);
      const ended = await reload(call);
      assert.equal(ended.status, 'no_answer');
      assert.equal(ended.endedReason, 'customer-did-not-answer');
    });

    test("failed ends the call failed (pipeline-error) with Twilio's error code for operators", async () => {
      const { call, sid } = await dialingCall();
      const params = paramsFor(sid, 'failed', {
        ErrorCode: '32009',
        SipResponseCode: '404',
        CallDuration: '0',
      });
      assert.equal((await post(call.id, params)).status, 204);
      const ended = await reload(call);
      assert.equal(ended.status, 'failed');
      assert.equal(ended.endedReason, 'pipeline-error');
      assert.match(ended.error ?? '', /error 32009/);
      assert.match(ended.error ?? '', /SIP 404/);
    });

    test('completed while still ringing at our end: unanswered is no answer, answered without media is a failure', async () => {
      const unanswered = await dialingCall();
      await post(unanswered.call.id, paramsFor(unanswered.sid, 'completed', { CallDuration: '0' }));
      assert.equal((await reload(unanswered.call)).status, 'no_answer');

      const noMedia = await dialingCall();
      await post(noMedia.call.id, paramsFor(noMedia.sid, 'completed', { CallDuration: '3' }));
      const failed = await reload(noMedia.call);
      assert.equal(failed.status, 'failed');
      assert.match(failed.error ?? '', /media stream never reached the gateway/);
    });

    test('initiated, ringing, in-progress and canceled change nothing; neither does any status of a live call', async () => {
      const { call, sid } = await dialingCall();
      for (const status of ['initiated', 'ringing', 'in-progress', 'canceled', 'queued'])
        assert.equal((await post(call.id, paramsFor(sid, status))).status, 204, status);
      assert.equal((await reload(call)).status, 'dialing');

      await lifecycle.markAnswered(call.workspaceId, call.id);
      for (const status of ['busy', 'no-answer', 'failed', 'completed'])
        assert.equal(
          (await post(call.id, paramsFor(sid, status, { CallDuration: '0' }))).status,
          204,
          status,
        );
      assert.equal((await reload(call)).status, 'in_progress', 'the gateway ends calls that got media');
    });

    test('a bad or missing signature is 401 unauthorized and changes nothing', async () => {
      const { call, sid } = await dialingCall();
      const params = paramsFor(sid, 'busy');
      const refusals = [
        await post(call.id, params, { signature: null }),
        await post(call.id, params, { signature: 'bm90IGEgc2lnbmF0dXJl' }),
        await post(call.id, params, { authToken: 'another-accounts-auth-token' }),
        await post(call.id, params, { signedUrl: callbackUrl(directUrl, `${call.id}x`) }),
        // Signed for no-answer, delivered as busy.
        await post(call.id, params, {
          signature: referenceSignature(
            callbackUrl(directUrl, call.id),
            paramsFor(sid, 'no-answer', { Timestamp: params.Timestamp ?? '' }),
            AUTH_TOKEN,
          ),
        }),
      ];
      for (const refusal of refusals) {
        assert.equal(refusal.status, 401, refusal.body);
        assert.deepEqual(JSON.parse(refusal.body), {
          error: { code: 'unauthorized', message: 'X-Twilio-Signature does not match this request' },
        });
      }
      const jsonBody = await fetch(callbackUrl(directUrl, call.id), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      });
      assert.equal(jsonBody.status, 401);
      const oddNames = await fetch(callbackUrl(directUrl, call.id), {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': 'x' },
        body: `__proto__=a&__proto__=b&constructor=c&CallSid=${sid}&CallStatus=busy`,
      });
      assert.equal(oddNames.status, 401);
      assert.equal((await reload(call)).status, 'dialing');
      assert.equal((await terminalEvents(call)).length, 0);
    });

    test('a callback about another Twilio call (CallSid mismatch) or an unknown call changes nothing', async () => {
      const { call } = await dialingCall();
      assert.equal((await post(call.id, paramsFor(nextSid(), 'busy'))).status, 204);
      assert.equal((await reload(call)).status, 'dialing');

      const withoutSid = paramsFor('', 'busy');
      assert.equal((await post(call.id, withoutSid)).status, 204);
      assert.equal((await reload(call)).status, 'dialing');

      assert.equal((await post('call_01JTWILIOUNKNOWN0000000000', paramsFor(nextSid(), 'busy'))).status, 204);
      assert.equal((await post('not-a-call-id', paramsFor(nextSid(), 'busy'))).status, 204);
    });

    test('behind a proxy the signature covers PUBLIC_API_URL + path, not the address the request came in on', async () => {
      const { call, sid } = await dialingCall();
      const params = paramsFor(sid, 'busy');
      const localUrl = callbackUrl(proxiedUrl, call.id);
      const refused = await fake.postSigned(localUrl, params);
      assert.equal(refused.status, 401, 'signed over the local address');
      const accepted = await fake.postSigned(localUrl, params, {
        signedUrl: callbackUrl(PUBLIC_API_URL, call.id),
      });
      assert.equal(accepted.status, 204);
      assert.equal((await reload(call)).status, 'busy');
    });

    test('a callback that beats the recording of the Twilio call sid waits for it', async () => {
      const { call, sid } = await dialingCall(null);
      const answer = post(call.id, paramsFor(sid, 'busy'));
      await new Promise((resolve) => setTimeout(resolve, 150));
      await store.calls.setCarrierCall(call.workspaceId, call.id, { carrier: 'twilio', carrierCallId: sid });
      assert.equal((await answer).status, 204);
      assert.equal((await reload(call)).status, 'busy');
    });

    test('end to end: the carrier places the call at the fake, whose signed no-answer callback settles it', async () => {
      const carrier = new TwilioCarrier({
        apiBase: fake.url,
        accountSid: fake.accountSid,
        authToken: AUTH_TOKEN,
        fromNumber: '+14155550100',
        mediaUrl: 'ws://127.0.0.1:8081',
        statusCallbackUrl: `${directUrl}${TWILIO_STATUS_CALLBACK_PATH}`,
        tokens: new StreamTokens({
          secret: 'twilio-callback-test-secret-0123456789',
          claims: new MemoryTokenClaims(),
        }),
      });
      try {
        const { workspaceId, agentId } = await fundedWorkspace(store, 100_000);
        const admitted = await admitCall(store, { workspaceId, agentId, to: '+919812345678' });
        const dialing = await lifecycle.markDialing(workspaceId, admitted.id, { carrier: carrier.name });
        assert.ok(dialing);
        const { carrierCallId } = await carrier.originate(dialing);
        await store.calls.setCarrierCall(workspaceId, admitted.id, { carrier: carrier.name, carrierCallId });

        assert.equal(await fake.sendStatusCallback(carrierCallId, 'initiated'), 204);
        assert.equal(await fake.sendStatusCallback(carrierCallId, 'ringing'), 204);
        assert.equal((await reload(admitted)).status, 'dialing');
        assert.equal(await fake.sendStatusCallback(carrierCallId, 'no-answer'), 204);
        const ended = await reload(admitted);
        assert.equal(ended.status, 'no_answer');
        assert.equal(ended.carrierCallId, carrierCallId);
      } finally {
        await carrier.close();
      }
    });
  });
}
