import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { describe, test } from 'node:test';
import { RECORDING_LINK_TTL_SECS, RecordingLinks, recordingPath } from './signed-url.ts';

const workspaceId = 'ws_01JAAAAAAAAAAAAAAAAAAAAAAA';
const callId = 'call_01JBBBBBBBBBBBBBBBBBBBBBBB';
const now = Date.UTC(2026, 0, 1, 12, 0, 0);

function presented(path: string) {
  const url = new URL(path, 'http://api.test');
  const [, , ws, file] = url.pathname.split('/');
  return {
    workspaceId: ws ?? '',
    callId: (file ?? '').replace(/\.wav$/, ''),
    expires: url.searchParams.get('expires') ?? '',
    signature: url.searchParams.get('signature') ?? '',
  };
}

describe('recording links', () => {
  const links = new RecordingLinks('deployment-secret');

  test('a link names the recording, expires in 15 minutes and verifies until then', () => {
    const path = links.pathFor(workspaceId, callId, now);
    const link = presented(path);
    assert.equal(link.workspaceId, workspaceId);
    assert.equal(link.callId, callId);
    assert.equal(Number(link.expires), now / 1_000 + RECORDING_LINK_TTL_SECS);
    assert.match(link.signature, /^[0-9a-f]{64}$/);
    assert.equal(links.verify(link, now), true);
    assert.equal(links.verify(link, now + RECORDING_LINK_TTL_SECS * 1_000 - 1), true);
    assert.equal(links.verify(link, now + RECORDING_LINK_TTL_SECS * 1_000), false);
  });

  test('the signature is HMAC-SHA256 over workspace.call.expires with a purpose-derived key', () => {
    const key = createHmac('sha256', 'deployment-secret').update('voiceagent recording url v1').digest();
    const expected = createHmac('sha256', key).update(`${workspaceId}.${callId}.1767270000`).digest('hex');
    assert.equal(links.sign({ workspaceId, callId, expires: 1_767_270_000 }), expected);
    const plain = createHmac('sha256', 'deployment-secret')
      .update(`${workspaceId}.${callId}.1767270000`)
      .digest('hex');
    assert.notEqual(expected, plain);
  });

  test('any change to the link, or another secret, fails verification', () => {
    const link = presented(links.pathFor(workspaceId, callId, now));
    const flipped = link.signature.replace(/^./, (c) => (c === '0' ? '1' : '0'));
    assert.equal(links.verify({ ...link, signature: flipped }, now), false);
    assert.equal(links.verify({ ...link, callId: 'call_01JCCCCCCCCCCCCCCCCCCCCCCC' }, now), false);
    assert.equal(links.verify({ ...link, workspaceId: 'ws_01JCCCCCCCCCCCCCCCCCCCCCCC' }, now), false);
    assert.equal(links.verify({ ...link, expires: String(Number(link.expires) + 3600) }, now), false);
    assert.equal(new RecordingLinks('another-secret').verify(link, now), false);
  });

  test('malformed values are refused before any comparison', () => {
    const link = presented(links.pathFor(workspaceId, callId, now));
    for (const signature of [
      '',
      'zz',
      link.signature.toUpperCase(),
      `${link.signature}00`,
      link.signature.slice(2),
    ]) {
      assert.equal(links.verify({ ...link, signature }, now), false, signature);
    }
    for (const expires of ['', '-1', '1e12', ' 1', '9999999999999']) {
      assert.equal(links.verify({ ...link, expires }, now), false, expires);
    }
  });

  test('a link signed with a past expiry is refused', () => {
    const expires = now / 1_000 - 1;
    const path = recordingPath(
      { workspaceId, callId, expires },
      links.sign({ workspaceId, callId, expires }),
    );
    assert.equal(links.verify(presented(path), now), false);
  });
});
