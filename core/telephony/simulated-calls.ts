import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { announceSimulatedIncoming, type IncomingCalls } from '../calls/incoming.ts';
import type { Coordinator } from '../coord/types.ts';
import { ApiError, invalid, notFound } from '../errors.ts';
import type { CallRecord, Store } from '../store/types.ts';
import type { TelephonyProviders } from './providers.ts';

/** How long a client whose workspace is at its live-call ceiling waits before simulating again. */
const BUSY_RETRY_AFTER_SECS = 30;

/**
 * `POST /v2/phone-numbers/{id}/simulate-incoming`: the sandbox provider's incoming calls. The number must be a
 * sandbox number of a sandbox workspace with incoming calls on; the call is admitted as a real incoming call
 * would be (core/calls/incoming.ts), then a worker's simulated caller rings it over the Twilio media protocol.
 */
export class SimulatedIncomingCalls {
  constructor(
    private readonly deps: {
      store: Store;
      providers: TelephonyProviders;
      incoming: IncomingCalls;
      coord: Coordinator;
      logger: Logger;
    },
  ) {}

  async ring(workspaceId: string, numberId: string, from: string): Promise<CallRecord> {
    const { store, incoming, coord, logger } = this.deps;
    const workspace = await store.workspaces.get(workspaceId);
    if (workspace?.mode !== 'sandbox') {
      throw invalid(
        'simulate-incoming',
        'only sandbox workspaces simulate incoming calls; a production number rings when a caller dials it',
      );
    }
    await this.deps.providers.forWorkspace(workspaceId);
    const number = await store.phoneNumbers.get(workspaceId, numberId);
    if (!number) throw notFound(`phone number ${numberId}`);
    if (number.provider !== 'sandbox') {
      throw new ApiError(
        'conflict',
        `phone number ${numberId} is a ${number.provider} number: its calls come from ${number.provider}, not the sandbox`,
      );
    }
    if (!number.incomingEnabled) {
      throw new ApiError(
        'conflict',
        `incoming calls are off for phone number ${numberId}; turn them on with POST /v2/phone-numbers/${numberId}/incoming`,
      );
    }
    const carrierCallId = `CA${randomBytes(16).toString('hex')}`;
    const verdict = await incoming.admit({ number, from, carrier: 'sandbox', carrierCallId });
    const log = logger.child({ phone_number_id: number.id, workspace_id: workspaceId });
    if (verdict.kind === 'busy') {
      log.info({ reason: verdict.reason }, 'simulated incoming call: the caller hears the busy message');
      throw new ApiError('rate_limited', `${verdict.reason}: the caller hears the busy message`, {
        retryAfterSecs: BUSY_RETRY_AFTER_SECS,
      });
    }
    if (verdict.kind === 'reject') {
      log.info({ reason: verdict.reason }, 'simulated incoming call rejected');
      if (verdict.cause === 'wallet') throw new ApiError('insufficient_balance', verdict.reason);
      throw new ApiError('conflict', `${verdict.reason}: the call is rejected`);
    }
    await announceSimulatedIncoming(coord, { workspaceId, callId: verdict.call.id, carrierCallId });
    log.info({ call_id: verdict.call.id }, 'simulated incoming call rings');
    return verdict.call;
  }
}
