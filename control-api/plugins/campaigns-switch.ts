import type { FastifyInstance } from 'fastify';
import { assertCampaignsEnabled } from '../../core/campaigns/dnc.ts';
import type { Store } from '../../core/store/types.ts';
import { authOf } from './auth.ts';

/** Paths under the v2 prefix that campaigns being off for a workspace closes. */
const CAMPAIGN_PATHS = /^\/(campaigns|dnc)(\/|\?|$)/;

/**
 * `503 campaigns_unavailable` on every `/campaigns` and `/dnc` route of `app` (the v2 plugin) for a workspace
 * whose operator turned campaigns off; after authentication (registered after it), so an unknown key is still `401`, and before the body is read.
 */
export function registerCampaignsSwitch(app: FastifyInstance, store: Store): void {
  app.addHook('onRequest', async (request) => {
    const path = request.url.slice(app.prefix.length);
    if (!CAMPAIGN_PATHS.test(path) || !request.routeOptions.config?.authenticated) return;
    await assertCampaignsEnabled(store, authOf(request).workspaceId);
  });
}
