import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { Store } from '../../../core/store/types.ts';
import { listBody, listEnvelope, listQuery, resolveCursor } from '../../http/pagination.ts';
import { defineRoute, type RouteRegistry } from '../../http/route.ts';
import { ledgerEntryBody, walletBody } from '../../presenters.ts';
import { timestamp } from '../../schemas/common.ts';

const walletSchema = z.object({
  object: z.literal('wallet'),
  currency: z.literal('INR'),
  balance_inr: z.number(),
  held_inr: z.number().describe('reserved for calls in progress or queued'),
  available_inr: z.number().describe('balance minus held: what new calls can use'),
  balance_paise: z.number().int(),
  held_paise: z.number().int(),
  available_paise: z.number().int(),
});

const transactionSchema = z.object({
  id: z.string(),
  object: z.literal('wallet_transaction'),
  kind: z.enum(['topup', 'call', 'flow_generation', 'transcription', 'tts', 'number_rental', 'adjustment']),
  amount_inr: z.number().describe('positive for credits, negative for charges'),
  amount_paise: z.number().int(),
  balance_after_inr: z.number(),
  balance_after_paise: z.number().int(),
  reference: z.string().describe('what the money was for: a call id, a flow test id, a top-up reference'),
  description: z.string(),
  created_at: timestamp,
});

export function registerWalletRoutes(app: FastifyInstance, registry: RouteRegistry, store: Store): void {
  const tag = 'Wallet';
  defineRoute(app, registry, {
    method: 'GET',
    url: '/wallet',
    operationId: 'getWallet',
    summary: 'Balance, held and available amounts',
    tag,
    responses: { 200: { description: 'The wallet', schema: walletSchema } },
    errors: [],
    handler: async ({ auth }) => walletBody(await store.wallet.balance(auth.workspaceId)),
  });

  defineRoute(app, registry, {
    method: 'GET',
    url: '/wallet/transactions',
    operationId: 'listWalletTransactions',
    summary: 'The ledger, newest first (cursor-paginated)',
    tag,
    query: listQuery('transaction'),
    responses: { 200: { description: 'A page of transactions', schema: listEnvelope(transactionSchema) } },
    errors: ['invalid_request'],
    handler: async ({ auth, query }) => {
      const after = resolveCursor(query, 'transaction');
      const page = await store.wallet.transactions(auth.workspaceId, {
        limit: query.limit,
        after,
      });
      return listBody(page.items.map(ledgerEntryBody), page.hasMore, (t) => t.id);
    },
  });
}
