/**
 * The Twilio carrier against a fake of Twilio's REST API on a real socket: the exact create request (auth, form,
 * TwiML with the stream token), Twilio's JSON errors as rejections, one retry on server errors and lost
 * requests, the hang-up sequence, and no credential in any error.
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { MemoryTokenClaims, StreamTokens } from '../../../core/auth/stream-tokens.ts';
import { testCallRecord } from '../../../core/calls/testing/call-record.ts';
import type { CallRecord } from '../../../core/store/types.ts';
import { TwilioCarrier, type TwilioCarrierOptions, TwilioRequestError } from './originate.ts';
import {
  FakeTwilioRestServer,
  INVALID_TO_NUMBER,
  type RecordedTwilioRequest,
  SERVER_ERROR,
} from './testing/fake-rest-server.ts';

const CALLBACK_BASE = 'https://api.example.com/carriers/twilio/status';
const DEFAULT_FROM = '+14155550100';

function phoneCall(id: string, overrides: Partial<CallRecord> = {}): CallRecord {
  return testCallRecord({ id, workspaceId: 'ws_twilio_test', carrier: 'twilio', ...overrides });
}

/** The token inside `<Parameter name="token" value="..."/>`. */
function tokenOf(twiml: string): string {
  const match = /<Parameter name="token" value="([^"]+)"\/>/.exec(twiml);
  assert.ok(match?.[1], `no token parameter in ${twiml}`);
  return match[1];
}

describe('twilio carrier', () => {
  let fake: FakeTwilioRestServer;
  const tokens = new StreamTokens({
    secret: 'twilio-carrier-test-secret-0123456789',
    claims: new MemoryTokenClaims(),
  });
  const carriers: TwilioCarrier[] = [];
  const carrier = (options: Partial<TwilioCarrierOptions> = {}) => {
    const made = new TwilioCarrier({
      apiBase: fake.url,
      accountSid: fake.accountSid,
      authToken: fake.authToken,
      fromNumber: DEFAULT_FROM,
      mediaUrl: 'wss://gateway.example.com/',
      statusCallbackUrl: `${CALLBACK_BASE}/`,
      tokens,
      ...options,
    });
    carriers.push(made);
    return made;
  };
  const creates = (): RecordedTwilioRequest[] => fake.requestsTo();

  beforeEach(async () => {
    fake = await FakeTwilioRestServer.start();
  });
  afterEach(async () => {
    await Promise.all(carriers.splice(0).map((c) => c.close()));
    await fake.close();
  });

  test('originate posts the Calls form with Basic auth and returns the sid Twilio created', async () => {
    const call = phoneCall('call_01JTWILIOFORM00000000000000');
    const { carrierCallId } = await carrier().originate(call);

    assert.match(carrierCallId, /^CA[0-9a-f]{32}$/);
    assert.equal(fake.calls.get(carrierCallId)?.status, 'queued');
    const [sent, ...more] = creates();
    assert.ok(sent);
    assert.equal(more.length, 0);
    assert.equal(sent.method, 'POST');
    assert.equal(sent.path, `/2010-04-01/Accounts/${fake.accountSid}/Calls.json`);
    assert.equal(
      sent.authorization,
      `Basic ${Buffer.from(`${fake.accountSid}:${fake.authToken}`).toString('base64')}`,
    );
    assert.equal(sent.contentType, 'application/x-www-form-urlencoded');

    const form = sent.form;
    assert.deepEqual(
      [...new Set(form.keys())],
      ['To', 'From', 'Twiml', 'StatusCallback', 'StatusCallbackMethod', 'StatusCallbackEvent', 'Timeout'],
    );
    assert.equal(form.get('To'), '+919812345678');
    assert.equal(form.get('From'), DEFAULT_FROM, 'the default caller id when the call has none');
    assert.equal(form.get('StatusCallback'), `${CALLBACK_BASE}/${call.id}`);
    assert.equal(form.get('StatusCallbackMethod'), 'POST');
    assert.deepEqual(form.getAll('StatusCallbackEvent'), ['initiated', 'ringing', 'answered', 'completed']);
    assert.equal(form.get('Timeout'), '60');
    assert.equal(form.get('MachineDetection'), null);

    const twiml = form.get('Twiml') ?? '';
    const token = tokenOf(twiml);
    assert.equal(
      twiml,
      '<Response><Connect><Stream url="wss://gateway.example.com/media/twilio">' +
        `<Parameter name="token" value="${token}"/></Stream></Connect></Response>`,
    );
    const verdict = await tokens.verify(token, 'twilio', call.id);
    assert.equal(verdict.ok, true, 'a token for this call on the twilio media route');
    assert.equal((await tokens.verify(token, 'twilio', call.id)).ok, false, 'and good once');
  });

  test("the call's own caller id, machine detection when asked, XML-escaped stream URL", async () => {
    const call = phoneCall('call_01JTWILIOAMD000000000000000', { fromNumber: '+14155550199' });
    await carrier({ machineDetection: true, mediaUrl: "ws://127.0.0.1:8081/a&b'c" }).originate(call);
    const form = creates()[0]?.form;
    assert.equal(form?.get('From'), '+14155550199');
    assert.equal(form?.get('MachineDetection'), 'Enable');
    const twiml = form?.get('Twiml') ?? '';
    assert.ok(
      twiml.startsWith('<Response><Connect><Stream url="ws://127.0.0.1:8081/a&amp;b&apos;c/media/twilio">'),
      twiml,
    );
  });

  test("Twilio's JSON error rejects with its code and message, without a retry", async () => {
    fake.answerNext(INVALID_TO_NUMBER);
    const refused = carrier().originate(phoneCall('call_01JTWILIOBADTO00000000000000'));
    await assert.rejects(refused, (error: unknown) => {
      assert.ok(error instanceof TwilioRequestError);
      assert.equal(error.twilioCode, 21211);
      assert.equal(error.httpStatus, 400);
      assert.equal(error.retryable, false);
      assert.match(error.message, /21211/);
      assert.match(error.message, /The 'To' number is not a valid phone number\./);
      return true;
    });
    assert.equal(creates().length, 1);
  });

  test('wrong credentials: 401 with code 20003, not retried', async () => {
    const refused = carrier({ authToken: 'not-the-token' }).originate(
      phoneCall('call_01JTWILIOAUTH0000000000000'),
    );
    await assert.rejects(refused, (error: unknown) => {
      assert.ok(error instanceof TwilioRequestError);
      assert.equal(error.httpStatus, 401);
      assert.equal(error.twilioCode, 20003);
      assert.ok(!error.message.includes('not-the-token'));
      return true;
    });
    assert.equal(fake.requests.length, 1);
  });

  test('a 500 is retried once with the same form, and the second answer counts', async () => {
    fake.answerNext(SERVER_ERROR);
    const { carrierCallId } = await carrier().originate(phoneCall('call_01JTWILIORETRY0000000000000'));
    const [first, second, ...more] = creates();
    assert.equal(more.length, 0);
    assert.equal(first?.form.toString(), second?.form.toString(), 'the same token on the retry');
    assert.ok(fake.calls.has(carrierCallId));
  });

  test('two 500s in a row give up after the retry', async () => {
    fake.answerNext(SERVER_ERROR, SERVER_ERROR);
    await assert.rejects(
      carrier().originate(phoneCall('call_01JTWILIO500500000000000000')),
      (error: unknown) => {
        assert.ok(error instanceof TwilioRequestError);
        assert.equal(error.httpStatus, 500);
        assert.equal(error.retryable, true);
        return true;
      },
    );
    assert.equal(creates().length, 2);
    assert.equal(fake.calls.size, 0);
  });

  test('a dropped connection and a request past the timeout are retried once', async () => {
    fake.answerNext({ kind: 'drop' });
    const dropped = await carrier().originate(phoneCall('call_01JTWILIODROP0000000000000'));
    assert.ok(fake.calls.has(dropped.carrierCallId));
    assert.equal(creates().length, 2);

    fake.answerNext({ kind: 'stall', ms: 1_000 });
    const started = performance.now();
    const stalled = await carrier({ timeoutMs: 200 }).originate(phoneCall('call_01JTWILIOSTALL000000000000'));
    assert.ok(fake.calls.has(stalled.carrierCallId));
    assert.ok(performance.now() - started < 900, 'did not wait for the stalled answer');
    assert.equal(creates().length, 4);

    fake.answerNext({ kind: 'drop' }, { kind: 'drop' });
    await assert.rejects(
      carrier().originate(phoneCall('call_01JTWILIOLOST00000000000000')),
      (error: unknown) => {
        assert.ok(error instanceof TwilioRequestError);
        assert.equal(error.httpStatus, undefined);
        assert.match(error.message, /Twilio could not be reached/);
        return true;
      },
    );
  });

  test('no request without a destination; a call needs a ws(s) media URL', async () => {
    await assert.rejects(
      carrier().originate(phoneCall('call_01JTWILIONOTO0000000000000', { toNumber: null })),
      /no destination number/,
    );
    assert.equal(fake.requests.length, 0);
    assert.throws(() => carrier({ mediaUrl: 'https://gateway.example.com' }), /must be ws:\/\/ or wss:\/\//);
  });

  test('neither the auth token nor the stream token appears in an error, even when Twilio echoes them', async () => {
    const twilio = carrier();
    fake.answerNext({
      kind: 'error',
      status: 400,
      code: 12100,
      message: (form) => `Document parse failure: ${form.get('Twiml')} for ${fake.authToken}`,
    });
    await assert.rejects(twilio.originate(phoneCall('call_01JTWILIOECHO0000000000000')), (error: unknown) => {
      assert.ok(error instanceof Error);
      const twiml = creates()[0]?.form.get('Twiml') ?? '';
      assert.ok(!error.message.includes(tokenOf(twiml)), error.message);
      assert.ok(!error.message.includes(fake.authToken), error.message);
      assert.match(error.message, /12100/);
      assert.match(error.message, /\[redacted\]/);
      return true;
    });
  });

  test('hangup of a call in progress: one Status=completed', async () => {
    const twilio = carrier();
    const { carrierCallId } = await twilio.originate(phoneCall('call_01JTWILIOHANGLIVE00000000000'));
    fake.setCallStatus(carrierCallId, 'in-progress');
    await twilio.hangup(carrierCallId);
    const updates = fake.requestsTo(carrierCallId);
    assert.deepEqual(
      updates.map((r) => [r.method, r.form.toString()]),
      [['POST', 'Status=completed']],
    );
    assert.equal(fake.calls.get(carrierCallId)?.status, 'completed');
  });

  test('hangup of a ringing call: Status=completed, then Status=canceled when Twilio says it is not in progress', async () => {
    const twilio = carrier();
    const { carrierCallId } = await twilio.originate(phoneCall('call_01JTWILIOHANGRING0000000000'));
    fake.setCallStatus(carrierCallId, 'ringing');
    await twilio.hangup(carrierCallId);
    assert.deepEqual(
      fake.requestsTo(carrierCallId).map((r) => r.form.get('Status')),
      ['completed', 'canceled'],
    );
    assert.equal(fake.calls.get(carrierCallId)?.status, 'canceled');
  });

  test('hangup is idempotent: an ended call or one Twilio does not know is fine', async () => {
    const twilio = carrier();
    const { carrierCallId } = await twilio.originate(phoneCall('call_01JTWILIOHANGTWICE000000000'));
    fake.setCallStatus(carrierCallId, 'in-progress');
    await twilio.hangup(carrierCallId);
    await twilio.hangup(carrierCallId);
    assert.equal(fake.calls.get(carrierCallId)?.status, 'completed');
    await twilio.hangup('CA00000000000000000000000000000000');
    assert.deepEqual(
      fake.requestsTo('CA00000000000000000000000000000000').map((r) => r.form.get('Status')),
      ['completed'],
      'a 404 ends the sequence',
    );
  });

  test('hangup retries a 500 and rejects on other errors', async () => {
    const twilio = carrier();
    const { carrierCallId } = await twilio.originate(phoneCall('call_01JTWILIOHANG500000000000000'));
    fake.setCallStatus(carrierCallId, 'in-progress');
    fake.answerNext(SERVER_ERROR);
    await twilio.hangup(carrierCallId);
    assert.equal(fake.calls.get(carrierCallId)?.status, 'completed');

    await assert.rejects(carrier({ authToken: 'wrong' }).hangup(carrierCallId), TwilioRequestError);
  });

  test('a closed carrier places no calls', async () => {
    const twilio = carrier();
    await twilio.close();
    await assert.rejects(twilio.originate(phoneCall('call_01JTWILIOCLOSED00000000000')), /closed/);
    assert.equal(fake.requests.length, 0);
  });
});
