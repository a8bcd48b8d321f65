import type { Kysely } from 'kysely';

/**
 * Incoming calls and numbers imported from a customer's Twilio account.
 *
 * `calls.direction`: `outbound` (the platform rang the callee; every call before this migration) or `inbound`
 * (a caller rang one of the workspace's numbers). The dialer takes only outbound calls from the queue.
 *
 * `phone_numbers.provider_secret`: the credentials of the customer's provider account for an imported number,
 * sealed like a workspace secret (AES-256-GCM under the deployment key, bound to the workspace and the number);
 * `phone_numbers.previous_voice_url`: the number's incoming-call address at its provider before we pointed it at
 * us, put back when the number is deleted.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('calls')
    .addColumn('direction', 'text', (c) => c.notNull().defaultTo('outbound'))
    .execute();
  await db.schema.alterTable('phone_numbers').addColumn('provider_secret', 'text').execute();
  await db.schema.alterTable('phone_numbers').addColumn('previous_voice_url', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('phone_numbers').dropColumn('previous_voice_url').execute();
  await db.schema.alterTable('phone_numbers').dropColumn('provider_secret').execute();
  await db.schema.alterTable('calls').dropColumn('direction').execute();
}
