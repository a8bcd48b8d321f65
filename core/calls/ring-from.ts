import { storedSettings } from '../agents/stored.ts';
import { invalid } from '../errors.ts';
import type { CallChannel, Store } from '../store/types.ts';
import type { Pacer, PickedNumber } from '../telephony/pacing.ts';

export interface RingFromRequest {
  workspaceId: string;
  agentId: string;
  channel: CallChannel;
  phoneNumberId?: string | undefined;
  poolId?: string | undefined;
}

/**
 * Where a phone call rings from: the number the request names, else the number its pool picks, else the number
 * the agent's pool (`calls_from.pool_id`) picks; null when nothing names one (the carrier's own number).
 * A pick counts against the number's pace: when the call is not admitted, give it back (`Pacer.giveBack`).
 * Browser calls ring from no number.
 */
export async function ringFrom(
  store: Pick<Store, 'agents'>,
  pacer: Pacer,
  request: RingFromRequest,
): Promise<PickedNumber | null> {
  const { workspaceId } = request;
  if (request.channel === 'web') {
    if (request.phoneNumberId !== undefined)
      throw invalid('phone_number_id', 'web calls ring from no number');
    if (request.poolId !== undefined) throw invalid('pool_id', 'web calls ring from no pool');
    return null;
  }
  if (request.phoneNumberId !== undefined) return pacer.direct(workspaceId, request.phoneNumberId);
  if (request.poolId !== undefined) return pacer.pick(workspaceId, request.poolId);
  const agent = await store.agents.get(workspaceId, request.agentId);
  // An unknown agent is admission's 404.
  const poolId = agent ? storedSettings(agent.content).calls_from?.pool_id : undefined;
  return poolId === undefined ? null : pacer.pick(workspaceId, poolId);
}
