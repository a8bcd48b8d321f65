import type { Coordinator } from '../coord/types.ts';
import type { Store } from '../store/types.ts';

const FLEET_SCOPE = 'fleet:gateways';
/** Each gateway's call capacity, as a holder `<node id>|<calls it can take in all>` with a short lease. */
const CAPACITY_SCOPE = 'fleet:capacity';
/** A gateway's presence lease: a stopped node leaves the fleet within it. */
export const PRESENCE_LEASE_MS = 30_000;
/** Renewed often, so a presence the coordinator lost (a Redis restart) is back within a second. */
const RENEW_EVERY_MS = 1_000;
/** A stopped node's capacity stops counting within this; renewed every second like the presence. */
export const CAPACITY_LEASE_MS = 5_000;
const SEPARATOR = '|';

/** What a gateway node publishes of itself while it is in the fleet. */
export interface GatewayCapacity {
  /**
   * How many calls this node can carry now, its own included: its admission limit, or only the calls it has
   * while it is overloaded (`core/calls/capacity.ts`).
   */
  capacity(): number;
}

/**
 * The media gateways that can take calls, as the coordinator knows them: each gateway node holds a presence
 * lease while it accepts streams. A campaign does not start while the fleet is empty (`fleet_offline`): its
 * calls would ring and fail. Each node also publishes how many calls it can carry (`capacity`), so dialers hold
 * queued calls no gateway has room for.
 */
export class GatewayFleet {
  constructor(
    private readonly coord: Coordinator,
    private readonly leaseMs: number = PRESENCE_LEASE_MS,
    private readonly capacityLeaseMs: number = CAPACITY_LEASE_MS,
  ) {}

  /**
   * Joins the fleet as `nodeId` and stays in it (re-asserting a presence the coordinator lost) until the
   * returned `leave` is called. With `capacity`, publishes the node's call capacity too, every renewal.
   */
  async join(
    nodeId: string,
    reportError: (error: unknown) => void = () => {},
    capacity?: GatewayCapacity,
  ): Promise<() => Promise<void>> {
    if (nodeId.includes(SEPARATOR))
      throw new RangeError(`a gateway's node id must not contain "${SEPARATOR}"`);
    const { slots } = this.coord;
    await slots.hold(FLEET_SCOPE, nodeId, this.leaseMs);
    let published: string | undefined;
    const publish = async () => {
      if (!capacity) return;
      const holder = `${nodeId}${SEPARATOR}${Math.max(0, Math.floor(capacity.capacity()))}`;
      await slots.hold(CAPACITY_SCOPE, holder, this.capacityLeaseMs);
      if (published !== undefined && published !== holder) await slots.release(CAPACITY_SCOPE, published);
      published = holder;
    };
    await publish();
    const keep = async () => {
      if (!(await slots.renew(FLEET_SCOPE, nodeId, this.leaseMs))) {
        await slots.hold(FLEET_SCOPE, nodeId, this.leaseMs);
      }
      await publish();
    };
    const every = Math.min(RENEW_EVERY_MS, this.leaseMs / 3, this.capacityLeaseMs / 3);
    // A renewal still in flight when the node leaves must not put its presence back after the release.
    let renewing: Promise<void> = Promise.resolve();
    const timer = setInterval(() => {
      renewing = keep().catch(reportError);
    }, every);
    timer.unref();
    return async () => {
      clearInterval(timer);
      await renewing;
      await slots.release(FLEET_SCOPE, nodeId).catch(reportError);
      if (published !== undefined) await slots.release(CAPACITY_SCOPE, published).catch(reportError);
    };
  }

  /** How many gateway nodes are in the fleet now. */
  async size(): Promise<number> {
    return (await this.coord.slots.holders(FLEET_SCOPE)).length;
  }

  /**
   * How many calls the fleet's gateways can carry together, by what each published last (a node that was seen
   * with two figures counts with the smaller); undefined when no gateway publishes one.
   */
  async capacity(): Promise<number | undefined> {
    const byNode = new Map<string, number>();
    for (const holder of await this.coord.slots.holders(CAPACITY_SCOPE)) {
      const at = holder.lastIndexOf(SEPARATOR);
      const calls = Number(holder.slice(at + 1));
      if (at <= 0 || !Number.isSafeInteger(calls) || calls < 0) continue;
      const node = holder.slice(0, at);
      byNode.set(node, Math.min(byNode.get(node) ?? calls, calls));
    }
    if (byNode.size === 0) return undefined;
    let total = 0;
    for (const calls of byNode.values()) total += calls;
    return total;
  }
}

/**
 * How many more calls the fleet's gateways can take: their published capacity less every live call (`dialing`
 * ones included: a ringing call takes its gateway's room once answered). Undefined when no gateway publishes a
 * capacity (none runs, or none of this version): then nothing is held back on its account.
 */
export async function fleetRoom(fleet: GatewayFleet, store: Store): Promise<number | undefined> {
  const capacity = await fleet.capacity();
  if (capacity === undefined) return undefined;
  return Math.max(0, capacity - (await store.calls.countLiveAll()));
}
