import { storedSettings } from '../agents/stored.ts';
import { callWorstCasePaise, DEFAULT_PRICES, type PriceTable, type Tier } from '../billing/prices.ts';
import { type Clock, systemClock } from '../clock.ts';
import type { Coordinator, Unsubscribe } from '../coord/types.ts';
import { newId } from '../ids.ts';
import {
  type CallRecord,
  InsufficientBalanceError,
  type PhoneNumberRecord,
  type Store,
} from '../store/types.ts';
import { DEFAULT_TIER } from './admission.ts';
import type { LiveCallSlots } from './live-slots.ts';
import { CALL_TRANSITIONS } from './state-machine.ts';

/**
 * Incoming calls: a caller rang one of the workspace's numbers. An incoming call is an ordinary call
 * (`direction: "inbound"`, `to` the number, `from` the caller, the number's agent, its `webhook_url` for the
 * `call.*` events) that skips the queue: it is admitted straight into `dialing`, holding its live-call slot
 * and its worst case from the wallet, and the caller's media then reaches the gateway like an answered
 * outbound call's. From there on the lifecycle, billing, transcript, recording and analysis are the same.
 */

/** What the number's provider is told to do with the caller. */
export type IncomingVerdict =
  | { readonly kind: 'connect'; readonly call: CallRecord }
  /** Refused: the number has no agent, or the wallet cannot cover the agent's longest call. */
  | { readonly kind: 'reject'; readonly cause: 'no_agent' | 'wallet'; readonly reason: string }
  /**
   * Every live-call slot of the workspace is taken, or no media gateway has room for another call: the caller
   * hears a short busy message.
   */
  | { readonly kind: 'busy'; readonly reason: string };

export interface IncomingCallOptions {
  store: Store;
  slots: LiveCallSlots;
  /** How many more calls the media gateways can take (`fleetRoom`); undefined: no bound known. */
  fleetRoom?(): Promise<number | undefined>;
  prices?: PriceTable;
  clock?: Clock;
}

export interface IncomingCallRequest {
  number: PhoneNumberRecord;
  /** The caller's number, as the provider reports it. */
  from: string;
  /** The carrier the caller's media arrives through (`sandbox`, `twilio`). */
  carrier: string;
  /** The provider's id of the call (Twilio's CallSid). */
  carrierCallId: string;
}

export class IncomingCalls {
  private readonly prices: PriceTable;
  private readonly clock: Clock;

  constructor(private readonly options: IncomingCallOptions) {
    this.prices = options.prices ?? DEFAULT_PRICES;
    this.clock = options.clock ?? systemClock;
  }

  /**
   * Admits the incoming call: room on the media gateways and a live-call slot first (none: busy), then in one transaction the agent,
   * the wallet hold of its worst case (the agent's `max_duration_secs` at the default tier), the call and its
   * move to `dialing`. Any refusal leaves nothing behind.
   */
  async admit(request: IncomingCallRequest): Promise<IncomingVerdict> {
    const { store, slots } = this.options;
    const { number } = request;
    if (number.agentId === null)
      return { kind: 'reject', cause: 'no_agent', reason: `number ${number.id} has no agent` };
    const agentId = number.agentId;
    const room = await this.options.fleetRoom?.();
    if (room !== undefined && room <= 0) {
      return { kind: 'busy', reason: 'no media gateway has room for another call' };
    }
    const id = newId('call');
    if (!(await slots.acquire(number.workspaceId, id))) {
      return {
        kind: 'busy',
        reason: `the workspace's ${slots.ceiling} live calls are all in use`,
      };
    }
    try {
      const call = await store.transaction(async (repos) => {
        const agent = await repos.agents.get(number.workspaceId, agentId);
        if (!agent) return undefined;
        const settings = storedSettings(agent.content);
        const tier = DEFAULT_TIER as Tier;
        await repos.wallet.hold(number.workspaceId, {
          reference: id,
          amountPaise: callWorstCasePaise(tier, settings.max_duration_secs, this.prices),
          kind: 'call',
        });
        await repos.calls.insert({
          id,
          workspaceId: number.workspaceId,
          agentId: agent.id,
          agentRevision: agent.revision,
          channel: 'phone',
          direction: 'inbound',
          toNumber: number.number,
          fromNumber: request.from,
          tier,
          perMinPaise: this.prices.perMinutePaise(tier),
          maxDurationSecs: settings.max_duration_secs,
          variables: {},
          webhookUrl: settings.webhook_url ?? null,
          phoneNumberId: number.id,
        });
        const { from, to } = CALL_TRANSITIONS.dial;
        return repos.calls.transition(number.workspaceId, id, {
          from,
          to,
          set: {
            carrier: request.carrier,
            carrierCallId: request.carrierCallId,
            dialingAt: this.clock.now(),
          },
        });
      });
      if (!call) {
        await slots.release(number.workspaceId, id);
        return {
          kind: 'reject',
          cause: 'no_agent',
          reason: `the agent ${agentId} of number ${number.id} no longer exists`,
        };
      }
      return { kind: 'connect', call };
    } catch (error) {
      await slots.release(number.workspaceId, id).catch(() => undefined);
      if (error instanceof InsufficientBalanceError) {
        return {
          kind: 'reject',
          cause: 'wallet',
          reason: "the wallet cannot cover the agent's max_duration_secs; top up to answer calls",
        };
      }
      throw error;
    }
  }
}

/** A simulated caller to start: the sandbox's incoming calls are rung by the worker that runs its callers. */
export interface SimulatedIncoming {
  workspaceId: string;
  callId: string;
  carrierCallId: string;
}

const SIMULATED_INCOMING_CHANNEL = 'calls:simulated-incoming';
/** The first worker to claim a simulated call rings it; the claim outlives any ring by far. */
const CLAIM_TTL_MS = 120_000;

export async function announceSimulatedIncoming(
  coord: Coordinator,
  incoming: SimulatedIncoming,
): Promise<void> {
  await coord.publish(SIMULATED_INCOMING_CHANNEL, JSON.stringify(incoming));
}

/**
 * Runs `ring` for each simulated incoming call this node claims first: every worker hears the announcement,
 * exactly one rings the call (its stream token is good once anyway).
 */
export function onSimulatedIncoming(
  coord: Coordinator,
  ring: (incoming: SimulatedIncoming) => void,
  reportError: (error: unknown) => void,
): Promise<Unsubscribe> {
  return coord.subscribe(SIMULATED_INCOMING_CHANNEL, (message) => {
    const incoming = parseIncoming(message);
    if (!incoming) return;
    coord.lock(`simulated-incoming:${incoming.callId}`, CLAIM_TTL_MS).then((claim) => {
      if (claim) ring(incoming);
    }, reportError);
  });
}

function parseIncoming(message: string): SimulatedIncoming | undefined {
  try {
    const value: unknown = JSON.parse(message);
    if (typeof value !== 'object' || value === null) return undefined;
    const { workspaceId, callId, carrierCallId } = value as Record<string, unknown>;
    if (typeof workspaceId !== 'string' || typeof callId !== 'string' || typeof carrierCallId !== 'string')
      return undefined;
    return { workspaceId, callId, carrierCallId };
  } catch {
    return undefined;
  }
}
