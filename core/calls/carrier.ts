import type { CallRecord } from '../store/types.ts';

/**
 * The dialing half of a carrier (docs/architecture.md, "Carriers and engines"), as the dialer sees it. Implementations live in
 * `gateway/carriers/<name>/originate.ts`; the composition root picks one per workspace mode (the sandbox
 * carrier for sandbox workspaces, the configured carrier for production ones).
 *
 * `originate` asks the carrier to ring the callee and point the call's media at the gateway with a one-time
 * stream token. It resolves with the carrier's call id once the carrier accepted the request, long before
 * anyone answers; it rejects when the carrier refused it (the dialer then ends the call `failed`).
 * What happens next arrives on other paths: media connecting to the gateway (answer), or a ring outcome
 * reported through `RingOutcomeSink` (busy, no answer, carrier failure).
 */
export interface Carrier {
  readonly name: string;
  originate(call: CallRecord): Promise<{ carrierCallId: string }>;
  /** Ends the call at the carrier: stops the ringing, or hangs up a connected call. Idempotent. */
  hangup(carrierCallId: string): Promise<void>;
  /** Stops everything the carrier runs in this process (simulated callees, timers). */
  close(): Promise<void>;
}

/** How a call that never got media ended, as its carrier reports it. */
export type RingOutcome = 'busy' | 'ring_timeout' | 'carrier_failed';

/** Where carriers report ring outcomes; the composition root settles the call through CallLifecycle. */
export type RingOutcomeSink = (
  call: { workspaceId: string; callId: string },
  outcome: RingOutcome,
  detail?: string,
) => Promise<void>;
