import type { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { VARIABLE_NAME } from '../../../core/calls/variables.ts';
import type { CampaignService, RawContact } from '../../../core/campaigns/service.ts';
import { CAMPAIGN_LIMITS } from '../../../core/campaigns/settings.ts';
import { ApiError } from '../../../core/errors.ts';
import { newId } from '../../../core/ids.ts';
import { csvRowBatches, isCsvRequest, registerStreamedCsvBodies } from '../../http/csv-body.ts';
import { listBody, resolveCursor } from '../../http/pagination.ts';
import { type RouteDefinition, type RouteRegistry, registerRoutes, route } from '../../http/route.ts';
import {
  campaignList,
  campaignListQuery,
  campaignSchema,
  contactList,
  contactListQuery,
  contactsBody,
  contactsReportSchema,
  createCampaignBody,
  updateCampaignBody,
} from '../../schemas/campaign.ts';
import { idParams } from '../../schemas/common.ts';

const tag = 'Campaigns';
const params = idParams('campaign');
/** Rows written per batch of a CSV upload. */
const CSV_BATCH_ROWS = 1_000;

/** `/v2/campaigns`: campaigns, their contacts and their transitions (the dialler runs in the worker role). */
export function registerCampaignRoutes(
  app: FastifyInstance,
  registry: RouteRegistry,
  campaigns: CampaignService,
): void {
  // Encapsulated, so the streamed CSV parser serves these routes only.
  app.register(async (scoped) => {
    registerStreamedCsvBodies(scoped);
    registerRoutes(scoped, registry, [
      createRoute(campaigns),
      listRoute(campaigns),
      getRoute(campaigns),
      updateRoute(campaigns),
      deleteRoute(campaigns),
      startRoute(campaigns),
      resumeRoute(campaigns),
      pauseRoute(campaigns),
      stopRoute(campaigns),
      addContactsRoute(campaigns),
      listContactsRoute(campaigns),
    ]);
  });
}

function createRoute(campaigns: CampaignService): RouteDefinition {
  return route({
    method: 'POST',
    url: '/campaigns',
    operationId: 'createCampaign',
    summary: 'Create a campaign: paused with pause_reason "not_started" until it is started',
    tag,
    body: createCampaignBody,
    responses: { 201: { description: 'The campaign', schema: campaignSchema } },
    errors: ['invalid_request', 'not_found', 'tier_unavailable', 'campaigns_unavailable'],
    handler: async ({ auth, body, reply }) => {
      reply.code(201);
      return campaigns.create(auth.workspaceId, body);
    },
  });
}

function listRoute(campaigns: CampaignService): RouteDefinition {
  return route({
    method: 'GET',
    url: '/campaigns',
    operationId: 'listCampaigns',
    summary: 'List campaigns, newest first (cursor-paginated; filter by status)',
    tag,
    query: campaignListQuery,
    responses: { 200: { description: 'A page of campaigns', schema: campaignList } },
    errors: ['invalid_request', 'campaigns_unavailable'],
    handler: async ({ auth, query }) => {
      const after = resolveCursor(query, 'campaign');
      const page = await campaigns.list(auth.workspaceId, {
        limit: query.limit,
        ...(after ? { after } : {}),
        ...(query.status ? { status: query.status } : {}),
      });
      return listBody(page.items, page.hasMore, (c) => c.id);
    },
  });
}

function getRoute(campaigns: CampaignService): RouteDefinition {
  return route({
    method: 'GET',
    url: '/campaigns/:id',
    operationId: 'getCampaign',
    summary: 'Read a campaign with its progress',
    tag,
    params,
    responses: { 200: { description: 'The campaign', schema: campaignSchema } },
    errors: ['not_found', 'campaigns_unavailable'],
    handler: async ({ auth, params }) => campaigns.get(auth.workspaceId, params.id),
  });
}

function updateRoute(campaigns: CampaignService): RouteDefinition {
  return route({
    method: 'PATCH',
    url: '/campaigns/:id',
    operationId: 'updateCampaign',
    summary: 'Change settings; 409 conflict while it is running (play)',
    tag,
    params,
    body: updateCampaignBody,
    responses: { 200: { description: 'The campaign', schema: campaignSchema } },
    errors: ['invalid_request', 'not_found', 'conflict', 'tier_unavailable', 'campaigns_unavailable'],
    handler: async ({ auth, params, body }) => campaigns.update(auth.workspaceId, params.id, body),
  });
}

function deleteRoute(campaigns: CampaignService): RouteDefinition {
  return route({
    method: 'DELETE',
    url: '/campaigns/:id',
    operationId: 'deleteCampaign',
    summary: 'Delete a campaign that is not running; its calls keep their campaign_id',
    tag,
    params,
    responses: {
      200: {
        description: 'Deleted',
        schema: z.object({ id: z.string(), object: z.literal('campaign'), deleted: z.literal(true) }),
      },
    },
    errors: ['not_found', 'conflict', 'campaigns_unavailable'],
    handler: async ({ auth, params }) => {
      await campaigns.remove(auth.workspaceId, params.id);
      return { id: params.id, object: 'campaign' as const, deleted: true as const };
    },
  });
}

function startRoute(campaigns: CampaignService): RouteDefinition {
  return route({
    method: 'POST',
    url: '/campaigns/:id/start',
    operationId: 'startCampaign',
    summary:
      'Start dialling, or resume a paused campaign whatever paused it (campaign.started the first time, campaign.resumed after)',
    tag,
    params,
    bodyOptional: true,
    responses: { 200: { description: 'The campaign, playing', schema: campaignSchema } },
    errors: ['not_found', 'conflict', 'fleet_offline', 'campaigns_unavailable'],
    handler: async ({ auth, params }) => campaigns.start(auth.workspaceId, params.id),
  });
}

function resumeRoute(campaigns: CampaignService): RouteDefinition {
  return route({
    method: 'POST',
    url: '/campaigns/:id/resume',
    operationId: 'resumeCampaign',
    summary:
      'Resume a campaign its owner paused (pause_reason "requested"); 409 conflict when no dialler stands by for it (use start)',
    tag,
    params,
    bodyOptional: true,
    responses: { 200: { description: 'The campaign, playing', schema: campaignSchema } },
    errors: ['not_found', 'conflict', 'fleet_offline', 'campaigns_unavailable'],
    handler: async ({ auth, params }) => campaigns.resume(auth.workspaceId, params.id),
  });
}

function pauseRoute(campaigns: CampaignService): RouteDefinition {
  return route({
    method: 'POST',
    url: '/campaigns/:id/pause',
    operationId: 'pauseCampaign',
    summary: 'Pause a running campaign (pause_reason "requested"); calls in progress finish',
    tag,
    params,
    bodyOptional: true,
    responses: { 200: { description: 'The campaign', schema: campaignSchema } },
    errors: ['not_found', 'conflict', 'campaigns_unavailable'],
    handler: async ({ auth, params }) => campaigns.pause(auth.workspaceId, params.id),
  });
}

function stopRoute(campaigns: CampaignService): RouteDefinition {
  return route({
    method: 'POST',
    url: '/campaigns/:id/stop',
    operationId: 'stopCampaign',
    summary: 'Stop a campaign for good (stopped): no more calls, no more contacts',
    tag,
    params,
    bodyOptional: true,
    responses: { 200: { description: 'The campaign', schema: campaignSchema } },
    errors: ['not_found', 'conflict', 'campaigns_unavailable'],
    handler: async ({ auth, params }) => campaigns.stop(auth.workspaceId, params.id),
  });
}

function addContactsRoute(campaigns: CampaignService): RouteDefinition {
  return route({
    method: 'POST',
    url: '/campaigns/:id/contacts',
    operationId: 'addCampaignContacts',
    summary: `Add contacts: JSON {contacts: [{to, variables}]} (up to ${CAMPAIGN_LIMITS.contactsPerJsonRequest}) or text/csv (up to ${CAMPAIGN_LIMITS.contactsPerCsv} rows, streamed); 409 conflict on a stopped or completed campaign`,
    tag,
    params,
    body: contactsBody,
    streamedBody: {
      contentType: 'text/csv',
      description:
        'A header row with a `to` column; every other column is a call variable of that name (empty cells are left out)',
    },
    responses: { 200: { description: 'What was added', schema: contactsReportSchema } },
    errors: ['invalid_request', 'body_too_large', 'not_found', 'conflict', 'campaigns_unavailable'],
    handler: async ({ auth, params, body, request }) => {
      const report = isCsvRequest(request)
        ? await campaigns.addContactBatches(
            auth.workspaceId,
            params.id,
            contactsFromCsv(request.body as Readable),
            newId('contact'),
          )
        : await campaigns.addContacts(
            auth.workspaceId,
            params.id,
            body.contacts.map((c) => ({ to: c.to, variables: c.variables ?? {} })),
          );
      return { object: 'contact_upload' as const, ...report };
    },
  });
}

/** A contacts CSV as batches of contacts: the header names the `to` column and the variables. */
async function* contactsFromCsv(stream: Readable): AsyncGenerator<RawContact[]> {
  let columns: string[] | undefined;
  let toColumn = -1;
  for await (const rows of csvRowBatches(stream, {
    maxBytes: CAMPAIGN_LIMITS.csvBytes,
    maxRows: CAMPAIGN_LIMITS.contactsPerCsv + 1,
    batchRows: CSV_BATCH_ROWS,
  })) {
    let data = rows;
    if (!columns) {
      columns = rows[0] ?? [];
      toColumn = columns.findIndex((c) => c.toLowerCase() === 'to');
      if (toColumn < 0) throw new ApiError('invalid_request', 'body: the CSV header has no "to" column');
      const bad = columns.find((c, i) => i !== toColumn && c !== '' && !VARIABLE_NAME.test(c));
      if (bad !== undefined) {
        throw new ApiError(
          'invalid_request',
          `body: column "${bad.slice(0, 70)}" is not a valid variable name`,
        );
      }
      data = rows.slice(1);
    }
    const header = columns;
    yield data.map((row) => {
      const variables: Record<string, string> = {};
      header.forEach((name, i) => {
        const cell = row[i];
        if (i !== toColumn && name !== '' && cell) variables[name] = cell;
      });
      return { to: row[toColumn] ?? '', variables };
    });
  }
  if (!columns) throw new ApiError('invalid_request', 'body: the CSV is empty');
}

function listContactsRoute(campaigns: CampaignService): RouteDefinition {
  return route({
    method: 'GET',
    url: '/campaigns/:id/contacts',
    operationId: 'listCampaignContacts',
    summary: 'List a campaign’s contacts in the order they were added (cursor-paginated; filter by status)',
    tag,
    params,
    query: contactListQuery,
    responses: { 200: { description: 'A page of contacts', schema: contactList } },
    errors: ['invalid_request', 'not_found', 'campaigns_unavailable'],
    handler: async ({ auth, params, query }) => {
      const after = resolveCursor(query, 'contact');
      const page = await campaigns.listContacts(auth.workspaceId, params.id, {
        limit: query.limit,
        ...(after ? { after } : {}),
        ...(query.status ? { status: query.status } : {}),
      });
      return listBody(page.items, page.hasMore, (c) => c.id);
    },
  });
}
