import { ApiError } from '../errors.ts';
import type { Store } from '../store/types.ts';
import { type ProvisionedWorkspace, provisionWorkspace } from '../workspaces/provision.ts';

/** Workspaces one organization may onboard; more is the operator's decision. */
export const ONBOARDED_WORKSPACES_LIMIT = 50;

/**
 * `POST /v2/workspace/onboard/custom`: a new sandbox workspace (empty wallet) with its own keys (v2 key,
 * webhook secret, v1 credentials), which the onboarding organization may address with `workspace` from then
 * on. One transaction: the workspace exists with its access or not at all. Going live stays the operator's.
 */
export async function onboardWorkspace(
  store: Store,
  organization: { publicKey: string },
  input: { name: string },
): Promise<ProvisionedWorkspace> {
  return store.transaction(async (repos) => {
    if ((await repos.v1.countAccess(organization.publicKey)) >= ONBOARDED_WORKSPACES_LIMIT) {
      throw new ApiError(
        'invalid_request',
        `this organization has onboarded ${ONBOARDED_WORKSPACES_LIMIT} workspaces, the most it may; ask the operator for more`,
      );
    }
    const workspace = await provisionWorkspace(store, { name: input.name, mode: 'sandbox', balancePaise: 0 });
    await repos.v1.grantAccess(organization.publicKey, workspace.workspace_id);
    return workspace;
  });
}
