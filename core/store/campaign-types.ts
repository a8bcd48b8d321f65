import type {
  CampaignSettings,
  CampaignStatus,
  CampaignVariables,
  ContactStatus,
  PauseReason,
} from '../campaigns/settings.ts';
import type { Page } from './values.ts';

export interface CampaignRecord {
  id: string;
  workspaceId: string;
  settings: CampaignSettings;
  status: CampaignStatus;
  pauseReason: PauseReason | null;
  createdAt: number;
  updatedAt: number;
}

export interface ContactRecord {
  id: string;
  campaignId: string;
  to: string;
  variables: CampaignVariables;
  status: ContactStatus;
  attempts: number;
  callIds: string[];
  nextAttemptAt: number | null;
  createdAt: number;
  updatedAt: number;
}

export interface NewContact {
  to: string;
  variables: CampaignVariables;
}

/**
 * Progress of a campaign: its contacts in each status and calls placed (every attempt), and its money, read
 * from its calls: `spentPaise` the charges of those that ended, `heldPaise` the holds of those still open.
 */
export interface ContactTally {
  byStatus: Record<ContactStatus, number>;
  attempts: number;
  spentPaise: number;
  heldPaise: number;
  openCalls: number;
}

/** See `CampaignRepo.dialState`. */
export interface DialState {
  hasContacts: boolean;
  unfinished: boolean;
  openCalls: number;
  heldPaise: number;
}

/** A campaign the dialler has work for. */
export interface ActiveCampaign {
  id: string;
  workspaceId: string;
}

/** Why contacts cannot be added: the campaign is gone, or stopped/completed. */
export type ContactsRefusal = 'missing' | 'closed';

export interface CampaignRepo {
  create(workspaceId: string, settings: CampaignSettings): Promise<CampaignRecord>;
  get(workspaceId: string, id: string): Promise<CampaignRecord | undefined>;
  /** Newest first, after `after` (an id). */
  list(
    workspaceId: string,
    options: { limit: number; after?: string; status?: CampaignStatus },
  ): Promise<Page<CampaignRecord>>;
  /** Replaces the settings unless the campaign is running (`running`). */
  update(
    workspaceId: string,
    id: string,
    settings: CampaignSettings,
  ): Promise<CampaignRecord | 'running' | undefined>;
  /** Marks it deleted unless it is running. */
  remove(workspaceId: string, id: string): Promise<'deleted' | 'running' | undefined>;
  /** Moves it to `to` when its status is one of `from`; `conflict` otherwise. */
  transition(
    workspaceId: string,
    id: string,
    from: readonly CampaignStatus[],
    to: CampaignStatus,
    pauseReason: PauseReason | null,
  ): Promise<CampaignRecord | 'conflict' | undefined>;
  /** Campaigns not over (neither stopped nor completed) that ring from the pool. */
  usingPool(workspaceId: string, poolId: string): Promise<string[]>;
  tally(campaignId: string): Promise<ContactTally>;
  /**
   * Adds contacts (numbers already in the campaign are duplicates, skipped) in one transaction. With an
   * `uploadId` they are held back as part of that upload until `commitUpload`.
   */
  addContacts(
    workspaceId: string,
    campaignId: string,
    contacts: readonly NewContact[],
    uploadId?: string,
  ): Promise<{ accepted: number; duplicates: number } | ContactsRefusal>;
  /** Makes an upload's contacts callable at once; refused when the campaign closed meanwhile. */
  commitUpload(workspaceId: string, campaignId: string, uploadId: string): Promise<true | ContactsRefusal>;
  /** Removes the contacts of an upload that failed. */
  discardUpload(campaignId: string, uploadId: string): Promise<void>;
  listContacts(
    workspaceId: string,
    campaignId: string,
    options: { limit: number; after?: string; status?: ContactStatus },
  ): Promise<Page<ContactRecord>>;
  /**
   * What a dialler pass needs, without reading every contact: whether the campaign has contacts and whether any
   * is still to be called or out (`pending`/`calling`), and its open calls with their holds.
   */
  dialState(campaignId: string): Promise<DialState>;
  /** The charges of the campaign's ended calls. */
  spentPaise(campaignId: string): Promise<number>;
  /** Campaigns that play, and those with a contact whose call is still out (across workspaces). */
  active(): Promise<ActiveCampaign[]>;
  /** `pending` contacts whose next attempt is due at `now`, in the order they were added. */
  dueContacts(campaignId: string, now: number, limit: number): Promise<ContactRecord[]>;
  /** Contacts with a call out (`calling`). */
  callingContacts(campaignId: string): Promise<ContactRecord[]>;
  /**
   * `pending` -> `calling` for the call `callId`: one attempt more, the call's id added. False when the contact
   * is no longer pending (another dialler took it): the caller's transaction must then roll back.
   */
  claimContact(contactId: string, callId: string): Promise<boolean>;
  /** Moves a contact on from `from` (its next attempt's time when it goes back to `pending`); false when it was not in `from`. */
  settleContact(
    contactId: string,
    from: ContactStatus,
    to: ContactStatus,
    nextAttemptAt: number | null,
  ): Promise<boolean>;
}
