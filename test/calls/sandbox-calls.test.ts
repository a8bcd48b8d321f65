/**
 * Calls end to end, black box: the whole platform in one process (api, gateway and worker roles) places calls
 * through the sandbox carrier, whose simulated callees connect to the gateway over Twilio's media protocol and
 * behave by the destination's last digit. Each call is followed over real HTTP to its terminal status, its
 * webhooks (a local HTTPS receiver that verifies signatures and dedupes on `id`), its charge in the ledger, and
 * its transcript and recording.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  makeCertificates,
  type TestCertificates,
  WebhookReceiver,
} from '../../core/events/testing/receiver.ts';
import type { Store } from '../../core/store/types.ts';
import { provisionWorkspace } from '../../core/workspaces/provision.ts';
import { SphinxTranscriber } from '../../engines/stt/index.ts';
import { backends, client, startTestPlatform } from '../support/platform.ts';
import { startTopology, type Topology } from '../support/topology.ts';

interface CallBody {
  id: string;
  status: string;
  ended_reason: string | null;
  started_at: string | null;
  duration_secs: number;
  cost: { amount_inr: number; per_min_inr: number };
  transcript_available: boolean;
  recording_available: boolean;
}

const TERMINAL = new Set(['completed', 'voicemail', 'no_answer', 'busy', 'failed', 'timeout', 'aborted']);

/** Settings of every deployment under test: webhooks to the local receiver, quick retries and ringing. */
const CALL_TEST_ENV = {
  ALLOW_PRIVATE_WEBHOOKS: '1',
  WEBHOOK_RETRY_SCHEDULE_MS: '0,200,400,800,1600,3200',
  SANDBOX_RING_MS: '1500',
};

interface Deployment {
  url: string;
  store: Store;
  topology?: Topology;
  close(): Promise<void>;
}

type StartDeployment = (certs: TestCertificates) => Promise<Deployment>;

// The whole platform in one process runs on the embedded defaults; PostgreSQL and Redis are exercised by the
// deployment of separate processes, which is what runs on them in production.
const deployments: Array<{ name: string; start: StartDeployment }> = [];
for (const backend of await backends()) {
  if (!backend.databaseUrl)
    deployments.push({
      name: `one process, ${backend.name}`,
      start: async (certs) => {
        const p = await startTestPlatform(backend, {
          env: { ROLES: 'api,gateway,worker', ...CALL_TEST_ENV },
          webhookCa: certs.caPem,
        });
        return { url: p.url, store: p.platform.store, close: () => p.close() };
      },
    });
  if (backend.databaseUrl && backend.redisUrl) {
    const services = { databaseUrl: backend.databaseUrl, redisUrl: backend.redisUrl };
    deployments.push({
      name: 'separate processes (1 api, 2 gateways, 1 worker), postgres+redis',
      start: async (certs) => {
        const topology = await startTopology(services, {
          ...CALL_TEST_ENV,
          NODE_EXTRA_CA_CERTS: certs.caFile,
          LIVE_CALL_LEASE_MS: '3000',
        });
        return { url: topology.url, store: topology.store, topology, close: () => topology.close() };
      },
    });
  }
}

// The deployments share nothing (a store, a receiver and certificates each; calls wait on the clock far more than
// they use the processor): they run side by side.
describe('sandbox calls end to end', { concurrency: true }, () => {
  for (const deployment of deployments) {
    // What the callee and the pipeline do on one gateway is the same in every deployment: the separate processes
    // run what crosses nodes (ringing, conversations, aborts, the ceiling, a killed gateway, the ledger).
    const pipelineOnly = deployment.name.startsWith('separate') && 'covered by the one-process deployment';
    // Within a deployment the cases run in order (concurrency is inherited unless set).
    describe(`sandbox calls end to end (${deployment.name})`, {
      concurrency: 1,
      skip: !SphinxTranscriber.available() && 'PocketSphinx is not installed',
    }, () => {
      let certs: TestCertificates;
      let receiver: WebhookReceiver;
      let platform: Deployment;
      let api: ReturnType<typeof client>;
      let secret: string;
      let apiKey: string;
      let agentId: string;

      before(async () => {
        certs = makeCertificates();
        const secrets: string[] = [];
        receiver = await WebhookReceiver.start({ certs, secrets: () => secrets });
        platform = await deployment.start(certs);
        const workspace = await provisionWorkspace(platform.store, {
          name: 'Calls',
          mode: 'sandbox',
          balancePaise: 100_000,
        });
        secret = workspace.webhook_secret;
        secrets.push(secret);
        apiKey = workspace.api_key;
        api = client(platform.url, apiKey);
        const agent = await api<{ id: string }>('POST', '/v2/agents', {
          body: {
            name: 'Asha',
            system_prompt: 'You are Asha from Acme, calling {{name}} about their order.',
            first_message: 'Hello {{name}}, this is Asha from Acme.',
            voice: { voice_id: 'local-en-female' },
            max_duration_secs: 120,
            end_call: { enabled: true, message: 'Goodbye!' },
            // Silent callees here stay on the line until aborted or timed out; silence is tested on its own agent.
            behavior: { silence_reprompt_secs: 0 },
          },
        });
        assert.equal(agent.status, 201, agent.text);
        agentId = agent.body.id;
      });

      after(async () => {
        await platform?.close();
        await receiver?.close();
        certs?.cleanup();
      });

      async function place(to: string, extra: Record<string, unknown> = {}): Promise<CallBody> {
        const response = await api<CallBody>('POST', '/v2/calls', {
          body: { to, agent_id: agentId, webhook_url: receiver.url(), variables: { name: 'Ravi' }, ...extra },
        });
        assert.equal(response.status, 202, response.text);
        assert.equal(response.body.status, 'queued');
        return response.body;
      }

      async function until(
        id: string,
        done: (call: CallBody) => boolean,
        timeoutMs = 90_000,
      ): Promise<CallBody> {
        const deadline = Date.now() + timeoutMs;
        for (;;) {
          const { body } = await api<CallBody>('GET', `/v2/calls/${id}`);
          if (done(body)) return body;
          if (Date.now() > deadline) assert.fail(`call ${id} stayed ${body.status}`);
          await sleep(200);
        }
      }

      const ended = (id: string) => until(id, (call) => TERMINAL.has(call.status));

      /** The call's events as the receiver processed them (verified, deduplicated), by type. */
      function eventsOf(id: string): string[] {
        return [...receiver.processed.values()]
          .map((raw) => JSON.parse(raw.toString('utf8')) as { type: string; data: { call: { id: string } } })
          .filter((event) => event.data.call.id === id)
          .map((event) => event.type)
          .sort();
      }

      async function waitForEvents(id: string, count: number): Promise<string[]> {
        const deadline = Date.now() + 20_000;
        while (eventsOf(id).length < count && Date.now() < deadline) await sleep(100);
        return eventsOf(id);
      }

      // Each of these places its own calls and looks only at them, and none asserts on the workspace's ceiling:
      // they run side by side (calls that find the 5 slots taken wait queued a moment, as they would in use).
      describe('single calls, side by side', { concurrency: true }, () => {
        test('busy, no answer and carrier failure end before media, free, with call.failed', async () => {
          const [busy, noAnswer, failed] = await Promise.all([
            place('+919876543210'),
            place('+919876543211'),
            place('+919876543215'),
          ]);
          const results = await Promise.all([ended(busy.id), ended(noAnswer.id), ended(failed.id)]);
          assert.deepEqual(
            results.map((c) => [c.status, c.ended_reason, c.started_at, c.duration_secs, c.cost.amount_inr]),
            [
              ['busy', 'customer-busy', null, 0, 0],
              ['no_answer', 'customer-did-not-answer', null, 0, 0],
              ['failed', 'pipeline-error', null, 0, 0],
            ],
          );
          for (const call of results) assert.deepEqual(await waitForEvents(call.id, 1), ['call.failed']);
        });

        test('a conversation completes: started and completed events, billed per second, transcript and recording', async () => {
          const placed = await place('+919876543219');
          const call = await ended(placed.id);
          assert.equal(call.status, 'completed', JSON.stringify(call));
          assert.ok(
            call.ended_reason === 'assistant-ended-call' || call.ended_reason === 'customer-ended-call',
          );
          assert.ok(call.duration_secs > 3, `duration ${call.duration_secs}`);
          // t3: ₹3 a minute, per started second, rounded up to the paisa.
          assert.equal(call.cost.per_min_inr, 3);
          assert.equal(call.cost.amount_inr, Math.ceil((call.duration_secs * 300) / 60) / 100);
          assert.deepEqual(await waitForEvents(call.id, 2), ['call.completed', 'call.started']);

          const transcript = await api<{ turns: Array<{ speaker: string; text: string }> }>(
            'GET',
            `/v2/calls/${call.id}/transcript`,
          );
          assert.equal(transcript.status, 200, transcript.text);
          const agentLines = transcript.body.turns.filter((t) => t.speaker === 'agent').map((t) => t.text);
          // On a loaded machine the first synthesis can be slow enough that the callee, hearing silence, speaks
          // first and cuts the opening short: the opening is then kept as far as it was heard.
          assert.ok(
            agentLines.some((line) => line.startsWith('Hello Ravi')),
            `the opening was spoken: ${JSON.stringify(agentLines)}`,
          );
          assert.ok(
            transcript.body.turns.some((t) => t.speaker === 'caller'),
            'the callee was heard',
          );

          const recording = await fetch(`${platform.url}/v2/calls/${call.id}/recording`, {
            headers: { authorization: `Bearer ${apiKey}` },
            redirect: 'manual',
          });
          assert.equal(recording.status, 302);
          const wav = await fetch(recording.headers.get('location') ?? '');
          assert.equal(wav.status, 200);
          const bytes = Buffer.from(await wav.arrayBuffer());
          assert.equal(bytes.subarray(0, 4).toString(), 'RIFF');
          // Two channels of 16 kHz PCM16: 64,000 bytes a second of call.
          assert.ok(bytes.length > 64_000 * (call.duration_secs - 2), `recording of ${bytes.length} bytes`);
        });

        test('an answering machine ends the call as voicemail, billed for the live seconds', {
          skip: pipelineOnly,
        }, async () => {
          const call = await ended((await place('+919876543212')).id);
          assert.equal(call.status, 'voicemail', JSON.stringify(call));
          assert.equal(call.ended_reason, 'voicemail');
          assert.ok(call.started_at !== null);
          assert.equal(call.cost.amount_inr, Math.ceil((call.duration_secs * 300) / 60) / 100);
          assert.deepEqual(await waitForEvents(call.id, 2), ['call.started', 'call.voicemail']);
        });

        test('a callee that hangs up after 2 s completes the call as customer-ended-call', {
          skip: pipelineOnly,
        }, async () => {
          const call = await ended((await place('+919876543214')).id);
          assert.equal(call.status, 'completed');
          assert.equal(call.ended_reason, 'customer-ended-call');
          assert.ok(call.duration_secs >= 2 && call.duration_secs <= 5, `duration ${call.duration_secs}`);
        });

        test('abort: a live call ends aborted, never billed; aborting again is a conflict', async () => {
          const placed = await place('+919876543213');
          await until(placed.id, (call) => call.status === 'in_progress', 30_000);
          await sleep(1_000);
          const aborted = await api<CallBody>('POST', `/v2/calls/${placed.id}/abort`);
          assert.equal(aborted.status, 200, aborted.text);
          assert.equal(aborted.body.status, 'aborted');
          assert.equal(aborted.body.ended_reason, 'aborted-by-api');
          assert.equal(aborted.body.cost.amount_inr, 0);
          const again = await api('POST', `/v2/calls/${placed.id}/abort`);
          assert.equal(again.status, 409);
          assert.deepEqual(await waitForEvents(placed.id, 2), ['call.aborted', 'call.started']);
          // The stream was hung up: the gateway keeps its transcript, and nothing changes the outcome.
          await until(placed.id, (call) => call.transcript_available, 10_000);
          const final = await api<CallBody>('GET', `/v2/calls/${placed.id}`);
          assert.equal(final.body.status, 'aborted');
        });

        test('a silent callee runs into max_duration_secs: timeout, billed for the whole duration', {
          skip: pipelineOnly,
        }, async () => {
          const call = await ended((await place('+919876543213', { max_duration_secs: 30 })).id);
          assert.equal(call.status, 'timeout', JSON.stringify(call));
          assert.equal(call.ended_reason, 'exceeded-max-duration');
          assert.ok(call.duration_secs >= 30 && call.duration_secs <= 32, `duration ${call.duration_secs}`);
          assert.deepEqual(await waitForEvents(call.id, 2), ['call.failed', 'call.started']);
        });

        test('a silent callee is re-prompted, then the agent says goodbye: completed as silence-timed-out', {
          skip: pipelineOnly,
        }, async () => {
          const agent = await api<{ id: string }>('POST', '/v2/agents', {
            body: {
              name: 'Patient Asha',
              first_message: 'Hello {{name}}, this is Asha from Acme.',
              voice: { voice_id: 'local-en-female' },
              behavior: { silence_reprompt_secs: 2 },
              end_call: { after_silence_reprompts: 1 },
            },
          });
          assert.equal(agent.status, 201, agent.text);
          const call = await ended((await place('+919876543213', { agent_id: agent.body.id })).id);
          assert.equal(call.status, 'completed', JSON.stringify(call));
          assert.equal(call.ended_reason, 'silence-timed-out');
          assert.ok(call.duration_secs < 30, `duration ${call.duration_secs}`);
          assert.deepEqual(await waitForEvents(call.id, 2), ['call.completed', 'call.started']);
          const transcript = await api<{ turns: Array<{ speaker: string; text: string }> }>(
            'GET',
            `/v2/calls/${call.id}/transcript`,
          );
          assert.deepEqual(
            transcript.body.turns.map((t) => [t.speaker, t.text]),
            [
              ['agent', 'Hello Ravi, this is Asha from Acme.'],
              ['agent', 'Are you still there?'],
              ['agent', 'I cannot hear you, so I will end the call now. Goodbye.'],
            ],
          );
        });
      });

      test('20 calls placed at once: at most 5 live at any moment, the rest wait queued, all finish', async () => {
        const placed = await Promise.all(Array.from({ length: 20 }, () => place('+919876500004')));
        const ids = new Set(placed.map((c) => c.id));
        let maxLive = 0;
        let sawQueued = false;
        for (const deadline = Date.now() + 120_000; Date.now() < deadline; ) {
          const page = await api<{ data: CallBody[] }>('GET', '/v2/calls?limit=100');
          const mine = page.body.data.filter((c) => ids.has(c.id));
          const live = mine.filter((c) => c.status === 'dialing' || c.status === 'in_progress').length;
          maxLive = Math.max(maxLive, live);
          sawQueued ||= mine.some((c) => c.status === 'queued');
          if (mine.every((c) => TERMINAL.has(c.status))) break;
          await sleep(100);
        }
        assert.ok(maxLive <= 5, `${maxLive} calls were live at once`);
        assert.ok(maxLive >= 4, `the dialer used its slots (${maxLive} at most)`);
        assert.ok(sawQueued, 'calls waited in the queue');
        for (const call of placed) assert.equal((await ended(call.id)).status, 'completed');
      });

      test('a gateway killed mid-call: its calls end failed once, free, with one event; the rest go on', async (t) => {
        const topology = platform.topology;
        if (!topology) return t.skip('needs separate processes');
        const placed = await Promise.all([place('+919876543213'), place('+919876543213')]);
        await Promise.all(placed.map((c) => until(c.id, (call) => call.status === 'in_progress', 30_000)));
        const hosts = await Promise.all(
          placed.map(async (c) => (await platform.store.calls.findById(c.id))?.gatewayNode),
        );
        const victim = hosts[0] ?? 'gateway-a';
        await topology.kill(victim);
        for (const [i, placedCall] of placed.entries()) {
          if (hosts[i] !== victim) continue;
          const call = await ended(placedCall.id);
          assert.equal(call.status, 'failed', JSON.stringify(call));
          assert.equal(call.ended_reason, 'pipeline-error');
          assert.equal(call.cost.amount_inr, 0);
          assert.deepEqual(await waitForEvents(call.id, 2), ['call.failed', 'call.started']);
        }
        for (const [i, placedCall] of placed.entries()) {
          if (hosts[i] === victim) continue;
          // A call on the surviving gateway goes on (its callee stays silent until aborted below).
          const { body } = await api<CallBody>('GET', `/v2/calls/${placedCall.id}`);
          assert.equal(body.status, 'in_progress');
        }
        await topology.restart(victim);
        const after = await ended((await place('+919876543214')).id);
        assert.equal(after.status, 'completed', 'calls run again after the restart');
        for (const call of placed) await api('POST', `/v2/calls/${call.id}/abort`);
      });

      test("the ledger holds nothing once every call ended, and captured exactly the calls' costs", async () => {
        const calls = await api<{ data: CallBody[] }>('GET', '/v2/calls?limit=100');
        for (const call of calls.body.data) await ended(call.id);
        const wallet = await api<{ held_inr: number; balance_inr: number }>('GET', '/v2/wallet');
        assert.equal(wallet.status, 200);
        const billed = calls.body.data.reduce((sum, c) => sum + Math.round(c.cost.amount_inr * 100), 0);
        assert.equal(Math.round(wallet.body.balance_inr * 100), 100_000 - billed);
        assert.equal(wallet.body.held_inr, 0);
        // Every delivery the receiver accepted carried a valid signature, and every call had one terminal event.
        const isTerminalEvent = (type: string) => type !== 'call.started' && type !== 'call.queued';
        for (const call of calls.body.data) {
          const deadline = Date.now() + 20_000;
          while (!eventsOf(call.id).some(isTerminalEvent) && Date.now() < deadline) await sleep(100);
          const terminal = eventsOf(call.id).filter(isTerminalEvent);
          assert.equal(terminal.length, 1, `${call.id}: ${terminal.join(', ')}`);
        }
      });
    });
  }
});
