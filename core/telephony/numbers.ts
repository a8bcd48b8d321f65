import { type Clock, systemClock } from '../clock.ts';
import { ApiError, invalid, notFound } from '../errors.ts';
import { newId } from '../ids.ts';
import type { Page, PhoneNumberChange, PhoneNumberRecord, Store } from '../store/types.ts';
import type { NumberView, Pacer } from './pacing.ts';
import { TelephonyProviderError } from './provider.ts';
import type { TelephonyProviders } from './providers.ts';
import { isIndianNumber, REST_MS, WARMING_MS } from './rules.ts';
import { TwilioCredentialsError, type TwilioIncomingNumber } from './twilio-account.ts';

/** What a delete did: a managed number is released at the end of its paid period, a customer one at once. */
export interface Removal {
  id: string;
  releasesAt: number;
}

/**
 * A workspace's numbers: reading them with their health, assigning an agent, turning incoming calls on and
 * off, resting, resuming and retiring, and deleting. Every change names the number's current `version`.
 */
export class NumberService {
  private readonly clock: Clock;

  constructor(
    private readonly store: Store,
    private readonly providers: TelephonyProviders,
    private readonly pacer: Pacer,
    /** The address a provider (`sandbox`, `twilio`) sends a number's incoming calls to. */
    private readonly incomingUrl: (numberId: string, provider: string) => string,
    clock?: Clock,
  ) {
    this.clock = clock ?? systemClock;
  }

  async list(workspaceId: string, options: { limit: number; after?: string }): Promise<Page<NumberView>> {
    await this.providers.forWorkspace(workspaceId);
    const page = await this.store.phoneNumbers.list(workspaceId, options);
    return { items: await this.pacer.views(workspaceId, page.items), hasMore: page.hasMore };
  }

  async get(workspaceId: string, id: string): Promise<NumberView> {
    await this.providers.forWorkspace(workspaceId);
    const [view] = await this.pacer.views(workspaceId, [await this.recordOf(workspaceId, id)]);
    return view as NumberView;
  }

  async assignAgent(
    workspaceId: string,
    id: string,
    agentId: string | null,
    version: number,
  ): Promise<NumberView> {
    await this.providers.forWorkspace(workspaceId);
    if (agentId !== null && !(await this.store.agents.get(workspaceId, agentId))) {
      throw notFound(`agent_id: agent ${agentId}`);
    }
    return this.change(workspaceId, id, version, () => ({ agentId }));
  }

  /**
   * Points the provider's incoming calls for the number at this platform (or stops them). Success makes the
   * number `ready`; a provider failure makes it `error` with `setup_error`. Turning them off leaves it
   * `imported`. Turning them on needs an agent to answer.
   */
  async setIncoming(workspaceId: string, id: string, enabled: boolean, version: number): Promise<NumberView> {
    await this.providers.forWorkspace(workspaceId);
    const current = await this.recordOf(workspaceId, id);
    const provider = await this.providers.forNumber(current);
    if (current.version !== version) throw stale(id, version);
    if (enabled && current.agentId === null) {
      throw new ApiError(
        'conflict',
        `phone number ${id} has no agent to answer it; assign one with PATCH first`,
      );
    }
    let change: PhoneNumberChange;
    try {
      await provider.configureIncoming(
        current.providerRef,
        current.number,
        enabled ? this.incomingUrl(id, current.provider) : null,
      );
      change = enabled
        ? { state: 'ready', setupError: null, incomingEnabled: true }
        : { state: 'imported', setupError: null, incomingEnabled: false };
    } catch (error) {
      if (!(error instanceof TelephonyProviderError)) throw error;
      change = { state: 'error', setupError: error.message, incomingEnabled: false };
    }
    return this.change(workspaceId, id, version, () => change);
  }

  /** The owner rests a number for `minutes` (45 by default); it still answers calls to it. */
  rest(workspaceId: string, id: string, version: number, minutes?: number): Promise<NumberView> {
    return this.healthAction(workspaceId, id, version, (current, now) => {
      if (current.health === 'retired') throw new ApiError('conflict', `phone number ${id} is retired`);
      return { health: 'resting', restingUntil: now + (minutes === undefined ? REST_MS : minutes * 60_000) };
    });
  }

  /** Ends a rest or a cool-down; a retired number stays retired. */
  resume(workspaceId: string, id: string, version: number): Promise<NumberView> {
    return this.healthAction(workspaceId, id, version, (current) => {
      if (current.health === 'retired') {
        throw new ApiError('conflict', `phone number ${id} is retired; a retired number is not resumed`);
      }
      return { health: 'active', restingUntil: null, rests: [] };
    });
  }

  /** The number places no more calls (pools skip it); it still answers calls to it. */
  retire(workspaceId: string, id: string, version: number): Promise<NumberView> {
    return this.healthAction(workspaceId, id, version, () => ({ health: 'retired', restingUntil: null }));
  }

  /**
   * A managed number stops renewing and is released at the end of its paid period (it leaves its pool now);
   * a customer number is forgotten at once. Deleting again answers the same.
   */
  async remove(workspaceId: string, id: string): Promise<Removal> {
    await this.providers.forWorkspace(workspaceId);
    const now = this.clock.now();
    const result = await this.store.phoneNumbers.change(workspaceId, id, {
      change: (current) => ({
        renewsAt: null,
        releasesAt:
          current.releasesAt ?? (current.ownership === 'managed' ? (current.paidUntil ?? now) : now),
        poolId: null,
        incomingEnabled: current.ownership === 'managed' ? current.incomingEnabled : false,
      }),
    });
    if (result === 'not_found') throw notFound(`phone number ${id}`);
    if (result === 'conflict') throw new ApiError('conflict', `phone number ${id} changed meanwhile; retry`);
    if (result.ownership === 'customer') {
      const provider = await this.providers.forNumber(result);
      // The number is forgotten whatever its provider says; a failed restore is the setup_error of no one.
      await provider.release(result.providerRef).catch((error: unknown) => {
        if (!(error instanceof TelephonyProviderError)) throw error;
      });
    }
    return { id, releasesAt: result.releasesAt ?? now };
  }

  /**
   * `POST /v2/phone-numbers/import`: a number of the customer's own Twilio account. Twilio must list it on that
   * account (bad credentials and unknown numbers are `400 invalid_request`); its credentials are kept sealed on
   * the number, and its current incoming-call address is kept to be put back when it is deleted. State
   * `imported`, ownership `customer`.
   */
  async importTwilio(
    workspaceId: string,
    input: { number: string; accountSid: string; authToken: string },
  ): Promise<NumberView> {
    await this.providers.forWorkspace(workspaceId);
    const { accounts } = this.providers.twilio();
    if (!isIndianNumber(input.number)) {
      throw invalid('number', 'only Indian numbers (+91 and ten digits) can be imported');
    }
    const credentials = { accountSid: input.accountSid, authToken: input.authToken };
    let found: TwilioIncomingNumber | undefined;
    try {
      found = await accounts.find(credentials, input.number);
    } catch (error) {
      if (error instanceof TwilioCredentialsError) {
        throw invalid('auth_token', 'Twilio refused this account SID and auth token');
      }
      if (error instanceof TelephonyProviderError) {
        throw new ApiError('service_unavailable', `${error.message}; retry later`, { retryAfterSecs: 5 });
      }
      throw error;
    }
    if (!found) {
      throw invalid('number', `${input.number} is not a number of Twilio account ${input.accountSid}`);
    }
    const id = newId('phoneNumber');
    const created = await this.store.phoneNumbers.insert({
      id,
      workspaceId,
      number: input.number,
      ownership: 'customer',
      provider: 'twilio',
      providerRef: found.sid,
      state: 'imported',
      setupError: null,
      agentId: null,
      incomingEnabled: false,
      poolId: null,
      health: 'active',
      warmingUntil: this.clock.now() + WARMING_MS,
      paidUntil: null,
      renewsAt: null,
      providerSecret: accounts.seal(credentials, workspaceId, id),
      previousVoiceUrl: found.voiceUrl,
    });
    if (created === 'exists') throw new ApiError('conflict', `${input.number} is already this workspace's`);
    const [view] = await this.pacer.views(workspaceId, [created]);
    return view as NumberView;
  }

  private async healthAction(
    workspaceId: string,
    id: string,
    version: number,
    change: (current: PhoneNumberRecord, now: number) => PhoneNumberChange,
  ): Promise<NumberView> {
    await this.providers.forWorkspace(workspaceId);
    return this.change(workspaceId, id, version, (current) => change(current, this.clock.now()));
  }

  private async change(
    workspaceId: string,
    id: string,
    version: number,
    change: (current: PhoneNumberRecord) => PhoneNumberChange,
  ): Promise<NumberView> {
    const result = await this.store.phoneNumbers.change(workspaceId, id, { version, change });
    if (result === 'not_found') throw notFound(`phone number ${id}`);
    if (result === 'conflict') throw stale(id, version);
    const [view] = await this.pacer.views(workspaceId, [result]);
    return view as NumberView;
  }

  private async recordOf(workspaceId: string, id: string): Promise<PhoneNumberRecord> {
    const record = await this.store.phoneNumbers.get(workspaceId, id);
    if (!record) throw notFound(`phone number ${id}`);
    return record;
  }
}

const stale = (id: string, version: number): ApiError =>
  new ApiError(
    'conflict',
    `phone number ${id} is no longer at version ${version}; read its current version and retry`,
  );
