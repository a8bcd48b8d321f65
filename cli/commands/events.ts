import { parseArgs } from 'node:util';
import { isoTime } from '../../core/clock.ts';
import type { Config } from '../../core/config.ts';
import { WebhookSender } from '../../core/events/delivery.ts';
import { replayEvent } from '../../core/events/replay.ts';
import { SecretCipher } from '../../core/secrets/cipher.ts';
import { SecretService } from '../../core/secrets/service.ts';
import type { EventRecord, Store } from '../../core/store/types.ts';
import { PostCallTools } from '../../core/tools/post-call.ts';
import { V1Keys } from '../../core/v1/keys.ts';
import { updateFirstStartCredentials } from '../bootstrap.ts';
import { resolveSecretKey } from '../secret-key.ts';
import { openConfiguredStore } from '../store.ts';
import { UsageError } from '../usage-error.ts';

/** Dead letters read per query while listing; the listing itself is complete. */
const LIST_PAGE_SIZE = 200;
/** Longest secret overlap an operator may ask for: a month is ample time for any receiver to switch. */
const MAX_OVERLAP_HOURS = 24 * 30;
const DEFAULT_OVERLAP_HOURS = 24;

function print(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value)}\n`);
}

async function withStore<T>(config: Config, fn: (store: Store) => Promise<T>): Promise<T> {
  const store = await openConfiguredStore(config);
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}

function eventLine(event: EventRecord) {
  return {
    id: event.id,
    workspace_id: event.workspaceId,
    call_id: event.callId,
    type: event.type,
    status: event.status,
    created_at: isoTime(event.createdAt),
    attempts: event.attempts,
    last_status: event.lastStatus,
    last_error: event.lastError,
    webhook_url: event.webhookUrl,
  };
}

/** `events list --dead [--workspace WS]`, `events replay EVT_ID` */
export async function runEventsCommand(config: Config, args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === 'list') {
    const { values, positionals } = parseArgs({
      args: rest,
      options: { dead: { type: 'boolean' }, workspace: { type: 'string' } },
      strict: true,
      allowPositionals: true,
    });
    if (!values.dead)
      throw new UsageError('events list: --dead is required (dead letters are what can be listed)');
    if (positionals.length > 0) throw new UsageError('events list: unexpected arguments');
    return withStore(config, async (store) => {
      let after: string | undefined;
      for (;;) {
        const page = await store.events.listDead({
          limit: LIST_PAGE_SIZE,
          ...(values.workspace ? { workspaceId: values.workspace } : {}),
          ...(after ? { after } : {}),
        });
        for (const event of page.items) print(eventLine(event));
        after = page.items.at(-1)?.id;
        if (!page.hasMore || !after) return 0;
      }
    });
  }
  if (sub === 'replay') {
    const [eventId, ...extra] = rest;
    if (!eventId || extra.length > 0) throw new UsageError('events replay: expected exactly one event id');
    return withStore(config, async (store) => {
      if (!(await store.events.get(eventId))) throw new Error(`no event ${eventId}`);
      const sender = new WebhookSender({
        allowPrivate: config.allowPrivateWebhooks,
        timeoutMs: config.webhookTimeoutMs,
      });
      try {
        // post_call tool deliveries render their target with the workspace's secrets, under the same SECRET_KEY.
        const cipher = new SecretCipher(resolveSecretKey(config));
        const secrets = new SecretService(store, cipher);
        const tools = new PostCallTools({ store, secrets });
        // Legacy v1 webhooks are signed with the organization's private key, sealed under the same SECRET_KEY.
        const v1Keys = new V1Keys(store, cipher);
        const report = await replayEvent({ store, sender, tools, v1Keys }, eventId);
        print({
          event_id: report.eventId,
          delivered: report.delivered,
          status: report.status,
          error: report.error,
        });
        return report.delivered ? 0 : 1;
      } finally {
        await sender.close();
      }
    });
  }
  throw new UsageError('events: expected "list --dead" or "replay EVT_ID"');
}

/** `webhook-secret rotate WORKSPACE_ID [--overlap-hours 24]` */
export async function runWebhookSecretCommand(config: Config, args: string[]): Promise<number> {
  const [sub, workspaceId, ...rest] = args;
  if (sub !== 'rotate' || !workspaceId || workspaceId.startsWith('-')) {
    throw new UsageError('webhook-secret: expected "rotate WORKSPACE_ID [--overlap-hours N]"');
  }
  const { values } = parseArgs({
    args: rest,
    options: { 'overlap-hours': { type: 'string' } },
    strict: true,
  });
  const text = values['overlap-hours'];
  const hours = text === undefined ? DEFAULT_OVERLAP_HOURS : Number(text);
  if (
    (text !== undefined && text.trim() === '') ||
    !Number.isFinite(hours) ||
    hours < 0 ||
    hours > MAX_OVERLAP_HOURS
  ) {
    throw new UsageError(`--overlap-hours must be a number of hours from 0 to ${MAX_OVERLAP_HOURS}`);
  }
  const overlapMs = Math.round(hours * 3_600_000);
  return withStore(config, async (store) => {
    if (!(await store.workspaces.get(workspaceId))) throw new Error(`no workspace ${workspaceId}`);
    const secret = await store.secrets.rotateWebhookSecret(workspaceId, overlapMs);
    updateFirstStartCredentials(config, workspaceId, { webhook_secret: secret });
    const previous = (await store.secrets.webhookSecrets(workspaceId)).filter((s) => s.secret !== secret);
    const until = previous.reduce<number | null>(
      (latest, s) => Math.max(latest ?? 0, s.expiresAt ?? 0),
      null,
    );
    print({
      workspace_id: workspaceId,
      webhook_secret: secret,
      previous_valid_until: until === null ? null : isoTime(until),
    });
    return 0;
  });
}
