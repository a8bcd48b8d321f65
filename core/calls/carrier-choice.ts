import type { CallRecord, Store } from '../store/types.ts';
import type { Carrier } from './carrier.ts';

/** The carriers a worker node can dial through; a missing one was not configured. */
export interface CarrierSet {
  /** Browser calls: the browser joins the gateway itself. */
  readonly web: Carrier;
  /** Sandbox workspaces: simulated callees that dial into the gateway. */
  readonly sandbox: Carrier | undefined;
  /** Production workspaces: the configured carrier account. */
  readonly production: Carrier | undefined;
}

/**
 * Which carrier dials a call: web calls join through the browser, a sandbox workspace's phone calls go to the
 * sandbox carrier, a production workspace's to the configured carrier. Production dialing needs a carrier
 * account; without one such calls end `failed`.
 */
export function carrierChooser(
  store: Pick<Store, 'workspaces'>,
  carriers: CarrierSet,
): (call: CallRecord) => Promise<Carrier | undefined> {
  return async (call) => {
    if (call.channel === 'web') return carriers.web;
    const workspace = await store.workspaces.get(call.workspaceId);
    return workspace?.mode === 'sandbox' ? carriers.sandbox : carriers.production;
  };
}

/** Every carrier of the set that exists, to pass hang-ups on and to close. */
export function carriersOf(carriers: CarrierSet): Carrier[] {
  return [carriers.sandbox, carriers.web, carriers.production].filter((c) => c !== undefined);
}
