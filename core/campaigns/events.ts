import { isoTime } from '../clock.ts';
import { newId } from '../ids.ts';
import type { NewEvent } from '../store/call-types.ts';
import type { CampaignObject } from './representation.ts';

export const CAMPAIGN_EVENT_TYPES = [
  'campaign.started',
  'campaign.paused',
  'campaign.resumed',
  'campaign.stopped',
  'campaign.completed',
] as const;
export type CampaignEventType = (typeof CAMPAIGN_EVENT_TYPES)[number];

/**
 * A campaign transition as an outbox row: `{id, type, created_at, data: {campaign}}`, delivered to the campaign's
 * `webhook_url` signed and retried like call events; written in the transition's transaction.
 */
export function campaignEvent(input: {
  workspaceId: string;
  type: CampaignEventType;
  campaign: CampaignObject;
  now: number;
}): NewEvent {
  const id = newId('event', input.now);
  return {
    id,
    workspaceId: input.workspaceId,
    callId: null,
    type: input.type,
    createdAt: input.now,
    body: JSON.stringify({
      id,
      type: input.type,
      created_at: isoTime(input.now),
      data: { campaign: input.campaign },
    }),
    webhookUrl: input.campaign.webhook_url,
  };
}
