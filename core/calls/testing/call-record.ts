import type { CallRecord } from '../../store/types.ts';

/** A call as the store holds it, ringing (`dialing`), for tests of the parts that take one; override the rest. */
export function testCallRecord(overrides: Partial<CallRecord> & Pick<CallRecord, 'id'>): CallRecord {
  const now = Date.now();
  return {
    workspaceId: 'ws_test',
    agentId: 'agt_test',
    agentRevision: 1,
    channel: 'phone',
    toNumber: '+919812345678',
    fromNumber: null,
    tier: 't3',
    perMinPaise: 300,
    maxDurationSecs: 300,
    variables: {},
    webhookUrl: null,
    phoneNumberId: null,
    poolId: null,
    campaignId: null,
    direction: 'outbound',
    status: 'dialing',
    endedReason: null,
    carrier: null,
    carrierCallId: null,
    gatewayNode: null,
    createdAt: now,
    dialingAt: now,
    answeredAt: null,
    endedAt: null,
    durationSecs: 0,
    costPaise: 0,
    transcriptAvailable: false,
    recordingAvailable: false,
    analysis: null,
    latency: null,
    error: null,
    ...overrides,
  };
}
