import { ApiError } from '../errors.ts';
import type { PhoneNumberRecord, Store } from '../store/types.ts';
import type { TelephonyProvider } from './provider.ts';
import type { TwilioAccounts } from './twilio-account.ts';

/** Customers' own Twilio accounts, for imported numbers. */
export interface CustomerTwilio {
  accounts: TwilioAccounts;
  /** Where a number's call status callbacks go, given where its incoming calls go. */
  statusCallbackOf(voiceUrl: string): string;
}

/** The provider of each workspace: the sandbox one for sandbox workspaces, the configured one for production. */
export class TelephonyProviders {
  constructor(
    private readonly store: Pick<Store, 'workspaces'>,
    private readonly providers: {
      sandbox: TelephonyProvider;
      production?: TelephonyProvider | undefined;
      twilio?: CustomerTwilio | undefined;
    },
  ) {}

  /** Imports from customers' Twilio accounts; `503 telephony_unavailable` when this host cannot reach Twilio. */
  twilio(): CustomerTwilio {
    const { twilio } = this.providers;
    if (!twilio)
      throw new ApiError(
        'telephony_unavailable',
        'importing Twilio numbers is not available on this deployment',
      );
    return twilio;
  }

  /** The provider a number came from: its own Twilio account for an imported number, else the workspace's. */
  async forNumber(record: PhoneNumberRecord): Promise<TelephonyProvider> {
    if (record.provider !== 'twilio') return this.forWorkspace(record.workspaceId);
    const twilio = this.twilio();
    return twilio.accounts.providerFor(record, twilio.statusCallbackOf);
  }

  /** The workspace's provider; `503 telephony_unavailable` when its host has none. */
  async forWorkspace(workspaceId: string): Promise<TelephonyProvider> {
    const workspace = await this.store.workspaces.get(workspaceId);
    const provider = workspace?.mode === 'sandbox' ? this.providers.sandbox : this.providers.production;
    if (!provider) {
      throw new ApiError(
        'telephony_unavailable',
        'phone numbers are not available for production workspaces on this deployment: no telephony provider is configured',
      );
    }
    return provider;
  }
}
