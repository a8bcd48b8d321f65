import type { Agent, AgentRevision } from '../core/agents/service.ts';
import { isoTime } from '../core/clock.ts';
import { paiseToRupees } from '../core/money.ts';
import type { LedgerEntry, WalletBalance } from '../core/store/types.ts';

/** The agent object of the API: identity first, then settings in the order of the spec's table. */
export function agentBody(agent: Agent) {
  const s = agent.settings;
  return {
    id: agent.id,
    object: 'agent' as const,
    revision: agent.revision,
    draft: s.draft,
    archived: s.archived,
    analysis: s.analysis,
    name: s.name,
    system_prompt: s.system_prompt,
    first_message: s.first_message,
    voice: s.voice,
    language: s.language,
    secondary_languages: s.secondary_languages,
    max_duration_secs: s.max_duration_secs,
    end_call: s.end_call,
    voicemail: s.voicemail,
    background_sound: s.background_sound,
    behavior: s.behavior,
    tools: s.tools,
    ...(s.flow ? { flow: s.flow } : {}),
    ...(s.calls_from ? { calls_from: s.calls_from } : {}),
    ...(s.webhook_url !== undefined ? { webhook_url: s.webhook_url } : {}),
    created_at: isoTime(agent.createdAt),
    updated_at: isoTime(agent.updatedAt),
  };
}

export function agentRevisionBody(revision: AgentRevision) {
  const {
    id: _id,
    object: _object,
    revision: _rev,
    created_at: _c,
    updated_at: _u,
    ...agent
  } = agentBody({
    id: revision.agentId,
    revision: revision.revision,
    settings: revision.settings,
    createdAt: revision.createdAt,
    updatedAt: revision.createdAt,
  });
  return {
    object: 'agent_revision' as const,
    agent_id: revision.agentId,
    revision: revision.revision,
    reason: revision.reason,
    restored_from: revision.restoredFrom,
    created_at: isoTime(revision.createdAt),
    agent,
  };
}

export function walletBody(balance: WalletBalance) {
  return {
    object: 'wallet' as const,
    currency: 'INR' as const,
    balance_inr: paiseToRupees(balance.balancePaise),
    held_inr: paiseToRupees(balance.heldPaise),
    available_inr: paiseToRupees(balance.availablePaise),
    balance_paise: balance.balancePaise,
    held_paise: balance.heldPaise,
    available_paise: balance.availablePaise,
  };
}

export function ledgerEntryBody(entry: LedgerEntry) {
  return {
    id: entry.id,
    object: 'wallet_transaction' as const,
    kind: entry.kind,
    amount_inr: paiseToRupees(entry.amountPaise),
    amount_paise: entry.amountPaise,
    balance_after_inr: paiseToRupees(entry.balanceAfterPaise),
    balance_after_paise: entry.balanceAfterPaise,
    reference: entry.reference,
    description: entry.description,
    created_at: isoTime(entry.createdAt),
  };
}
