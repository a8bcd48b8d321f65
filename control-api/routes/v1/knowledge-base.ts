import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { isoTime } from '../../../core/clock.ts';
import type { V1DocumentRecord } from '../../../core/store/v1-types.ts';
import type { V1Documents } from '../../../core/v1/documents.ts';
import { type V1Registry, v1Route } from './http.ts';

const tag = 'Knowledge base';
const documentData = z.object({
  _id: z.string(),
  url: z.string(),
  title: z.string(),
  type: z.string(),
  characters: z.number().int(),
  createdAt: z.string(),
});

function present(record: V1DocumentRecord) {
  return {
    _id: record.id,
    url: record.url,
    title: record.title,
    type: record.type,
    characters: record.text.length,
    createdAt: isoTime(record.createdAt),
  };
}

/**
 * `/v1/admin/knowledge-base/*`: documents fetched once from their URL; an assistant whose
 * `knowledgeBase.documents` names that URL gets their text in its prompt (README "Knowledge base").
 */
export function registerKnowledgeBaseRoutes(
  app: FastifyInstance,
  registry: V1Registry,
  documents: V1Documents,
): void {
  v1Route(app, registry, {
    method: 'POST',
    url: '/v1/admin/knowledge-base/upload',
    operationId: 'v1UploadDocument',
    summary:
      'Fetch a document from its URL (through the address guard; at most 1 MB) and keep its text; the same URL again replaces it. Types `txt`, `html` (its visible text) and `pdf` (the text of its pages); a file that is not of its type is a 400',
    tag,
    body: z
      .object({
        url: z.string().url().max(2_048),
        title: z.string().min(1).max(200),
        type: z.enum(['pdf', 'txt', 'html']),
      })
      .strict(),
    data: documentData,
    status: 201,
    handler: async ({ auth, body }) => ({
      status: 201,
      message: 'document uploaded',
      data: present(await documents.upload(auth.workspaceId, body)),
    }),
  });
  v1Route(app, registry, {
    method: 'GET',
    url: '/v1/admin/knowledge-base/list',
    operationId: 'v1ListDocuments',
    summary: "The workspace's documents, newest first (at most 100)",
    tag,
    data: z.array(documentData),
    handler: async ({ auth }) => ({
      message: 'documents fetched',
      data: (await documents.list(auth.workspaceId)).map(present),
    }),
  });
}
