/**
 * The log lines an operator reads, black box: the whole platform in one process, its log captured. A production
 * call on a node without carrier settings fails and says which settings are missing, in its one `call ended`
 * line.
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { createLogger } from '../../core/logger.ts';
import { provisionWorkspace } from '../../core/workspaces/provision.ts';
import { client, startTestPlatform, type TestPlatform } from '../support/platform.ts';

describe('call log lines', () => {
  let p: TestPlatform;
  const lines: Array<Record<string, unknown>> = [];

  before(async () => {
    const sink = new Writable({
      write(chunk, _encoding, done) {
        for (const line of String(chunk).split('\n')) if (line) lines.push(JSON.parse(line));
        done();
      },
    });
    p = await startTestPlatform(
      { name: 'sqlite+memory' },
      {
        env: { ROLES: 'api,gateway,worker' },
        logger: createLogger({ logLevel: 'info' }, sink),
      },
    );
  });

  after(async () => {
    await p?.close();
  });

  test('a production call without carrier settings fails with one line naming the missing settings', async () => {
    const workspace = await provisionWorkspace(p.platform.store, {
      name: 'Live',
      mode: 'production',
      balancePaise: 100_000,
    });
    const api = client(p.url, workspace.api_key);
    const agent = await api<{ id: string }>('POST', '/v2/agents', { body: { name: 'Asha' } });
    assert.equal(agent.status, 201, agent.text);
    const placed = await api<{ id: string }>('POST', '/v2/calls', {
      body: { agent_id: agent.body.id, to: '+919876543219' },
    });
    assert.equal(placed.status, 202, placed.text);
    const deadline = Date.now() + 30_000;
    const ended = () => lines.filter((line) => line.msg === 'call ended' && line.call_id === placed.body.id);
    while (ended().length === 0 && Date.now() < deadline) await sleep(50);
    assert.equal(ended().length, 1);
    const line = ended()[0] ?? {};
    assert.equal(line.status, 'failed');
    assert.equal(line.cost_inr, 0);
    assert.match(String(line.error), /production calls need a carrier account: set TWILIO_ACCOUNT_SID/);
  });
});
