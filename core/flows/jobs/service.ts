/** Flow test jobs as the API starts, reads and cancels them; the worker role runs them (worker.ts). */

import { storedTools } from '../../agents/stored.ts';
import type { Clock } from '../../clock.ts';
import { ApiError, notFound } from '../../errors.ts';
import { newId } from '../../ids.ts';
import type { Store } from '../../store/types.ts';
import { validateFlow } from '../validate.ts';
import { endJob } from './ending.ts';
import { type FlowModelSet, missingModelSetting } from './models.ts';
import { type FlowRefinementBody, flowRefinementBody } from './representation.ts';
import { initialState } from './runner.ts';
import {
  DEFAULT_FLOW_JOB_MODEL,
  type FlowJobModel,
  type JobInput,
  jobJson,
  storedJobState,
} from './stored.ts';
import { tidyTranscript } from './transcripts.ts';
import { FLOW_JOB_RETENTION_MS } from './worker.ts';

export const FLOW_JOBS_PER_HOUR = 10;
const HOUR_MS = 60 * 60 * 1000;
/** Replays of example calls by default, at most. */
const DEFAULT_REPLAYS = 5;
const DEFAULT_INVENTED = 2;

export interface RefineRequest {
  flow: unknown;
  brief?: string | undefined;
  calls?: { transcript: string }[] | undefined;
  examples?: { transcript: string }[] | undefined;
  simulate?: number | undefined;
  rounds?: number | undefined;
  verify?: boolean | undefined;
  variables?: Record<string, string | number | boolean> | undefined;
  language?: string | undefined;
  max_duration_secs?: number | undefined;
  model?: FlowJobModel | undefined;
  agent_id?: string | undefined;
}

export class FlowJobService {
  constructor(
    private readonly store: Store,
    private readonly models: FlowModelSet,
    private readonly clock: Clock,
  ) {}

  async start(workspaceId: string, request: RefineRequest): Promise<FlowRefinementBody> {
    if (request.flow === undefined) throw new ApiError('invalid_request', 'flow is required');
    if (request.calls === undefined && request.simulate === undefined && request.examples === undefined) {
      throw new ApiError(
        'invalid_request',
        'no test specified: give calls or simulate (or examples to replay)',
      );
    }
    const agent = request.agent_id ? await this.store.agents.get(workspaceId, request.agent_id) : undefined;
    if (request.agent_id && !agent) throw notFound(`agent ${request.agent_id}`);
    const checked = validateFlow(request.flow, storedTools(agent));
    if (!checked.ok) throw new ApiError('invalid_flow', 'invalid flow', { details: checked.details });
    const calls = tidied(request.calls, 'calls');
    const examples = tidied(request.examples, 'examples');
    const simulate =
      examples.length > 0
        ? Math.min(request.simulate ?? DEFAULT_REPLAYS, examples.length)
        : (request.simulate ?? (calls.length > 0 ? 0 : DEFAULT_INVENTED));
    if (calls.length === 0 && simulate === 0) {
      throw new ApiError(
        'invalid_request',
        'no test specified: give calls, or simulate above 0 (or examples to replay)',
      );
    }
    const model = request.model ?? DEFAULT_FLOW_JOB_MODEL;
    const missing = missingModelSetting(this.models, model, simulate > 0 || calls.length > 0);
    if (missing) throw new ApiError('model_unavailable', missing);
    const input: JobInput = {
      flow: checked.flow,
      brief: request.brief ?? '',
      calls,
      examples,
      simulate,
      rounds: request.rounds ?? 1,
      verify: request.verify ?? true,
      variables: request.variables ?? {},
      language: request.language ?? null,
      max_duration_secs: request.max_duration_secs ?? null,
      model,
      agent_id: request.agent_id ?? null,
    };
    const liveModel =
      this.models.live?.model ?? this.models.reviewing[DEFAULT_FLOW_JOB_MODEL]?.llm.model ?? '';
    const state = initialState(input, liveModel);
    if (!this.models.live) state.simulation = { model: liveModel, fallback: true };
    const created = await this.store.flowJobs.create(
      {
        id: newId('flowTest', this.clock.now()),
        workspaceId,
        kind: 'refine',
        agentId: input.agent_id,
        input: jobJson(input),
        state: jobJson(state),
      },
      { perWindow: FLOW_JOBS_PER_HOUR, windowMs: HOUR_MS },
    );
    if ('retryAfterMs' in created) {
      throw new ApiError(
        'rate_limited',
        `flow test limit: ${FLOW_JOBS_PER_HOUR} per workspace per hour; the next one can start in ${Math.ceil(created.retryAfterMs / 1000)} s`,
        { retryAfterSecs: Math.ceil(created.retryAfterMs / 1000) },
      );
    }
    return flowRefinementBody(created.job);
  }

  async get(workspaceId: string, id: string): Promise<FlowRefinementBody> {
    return flowRefinementBody(await this.record(workspaceId, id));
  }

  /** Cancels a running job (charging what answered); a job that ended is answered as it is. */
  async cancel(workspaceId: string, id: string): Promise<FlowRefinementBody> {
    const record = await this.record(workspaceId, id);
    if (record.status === 'running') {
      await endJob(this.store, record, null, 'canceled', storedJobState(record.state));
    }
    return flowRefinementBody(await this.record(workspaceId, id));
  }

  async latestForAgent(workspaceId: string, agentId: string): Promise<FlowRefinementBody> {
    const record = await this.store.flowJobs.latestForAgent(workspaceId, agentId, this.since());
    if (!record) throw notFound(`flow test of agent ${agentId} in the last 24 hours`);
    return flowRefinementBody(record);
  }

  private async record(workspaceId: string, id: string) {
    const record = await this.store.flowJobs.get(workspaceId, id, this.since());
    if (record?.kind !== 'refine') throw notFound(`flow test ${id}`);
    return record;
  }

  private since(): number {
    return this.clock.now() - FLOW_JOB_RETENTION_MS;
  }
}

function tidied(items: { transcript: string }[] | undefined, field: string): string[] {
  return (items ?? []).map((item, i) => {
    const text = tidyTranscript(item.transcript);
    if (text === '') {
      throw new ApiError('invalid_request', `${field}[${i}].transcript: has no AGENT: or CALLER: turn`);
    }
    return text;
  });
}
