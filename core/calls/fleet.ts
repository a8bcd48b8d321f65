import type { Coordinator } from '../coord/types.ts';

const FLEET_SCOPE = 'fleet:gateways';
/** A gateway's presence lease: a stopped node leaves the fleet within it. */
export const PRESENCE_LEASE_MS = 30_000;
/** Renewed often, so a presence the coordinator lost (a Redis restart) is back within a second. */
const RENEW_EVERY_MS = 1_000;

/**
 * The media gateways that can take calls, as the coordinator knows them: each gateway node holds a presence
 * lease while it accepts streams. A campaign does not start while the fleet is empty (`fleet_offline`): its
 * calls would ring and fail.
 */
export class GatewayFleet {
  constructor(
    private readonly coord: Coordinator,
    private readonly leaseMs: number = PRESENCE_LEASE_MS,
  ) {}

  /**
   * Joins the fleet as `nodeId` and stays in it (re-asserting a presence the coordinator lost) until the
   * returned `leave` is called.
   */
  async join(nodeId: string, reportError: (error: unknown) => void = () => {}): Promise<() => Promise<void>> {
    const { slots } = this.coord;
    await slots.hold(FLEET_SCOPE, nodeId, this.leaseMs);
    const keep = async () => {
      if (!(await slots.renew(FLEET_SCOPE, nodeId, this.leaseMs))) {
        await slots.hold(FLEET_SCOPE, nodeId, this.leaseMs);
      }
    };
    const timer = setInterval(() => keep().catch(reportError), Math.min(RENEW_EVERY_MS, this.leaseMs / 3));
    timer.unref();
    return async () => {
      clearInterval(timer);
      await slots.release(FLEET_SCOPE, nodeId).catch(reportError);
    };
  }

  /** How many gateway nodes are in the fleet now. */
  async size(): Promise<number> {
    return (await this.coord.slots.holders(FLEET_SCOPE)).length;
  }
}
