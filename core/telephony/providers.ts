import { ApiError } from '../errors.ts';
import type { Store } from '../store/types.ts';
import type { TelephonyProvider } from './provider.ts';

/** The provider of each workspace: the sandbox one for sandbox workspaces, the configured one for production. */
export class TelephonyProviders {
  constructor(
    private readonly store: Pick<Store, 'workspaces'>,
    private readonly providers: { sandbox: TelephonyProvider; production?: TelephonyProvider | undefined },
  ) {}

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
