/**
 * Drafting a flow from a brief (`POST /v2/agents/flow/generate`). A draft is a job of the worker role (kind
 * `generate`, `fdr_...`) like a flow test, because a slow model cannot write a whole graph inside the API's
 * 30 s (README "Flow tests", measured by `npm run bench:flow-generate`): the request waits for it up to
 * `waitMs` and answers the finished draft (200), or the running job to poll (202).
 *
 * The worker asks the reviewing model once, checks the draft by every rule of saving a flow, and asks once
 * more to repair it when it breaks one; a draft that still breaks one fails. It is charged, succeeded or
 * failed, for what answered, as one `flow_generation` transaction whose reference is the job id.
 */
import type { Logger } from 'pino';
import type { Clock } from '../clock.ts';
import { ApiError, notFound } from '../errors.ts';
import { newId } from '../ids.ts';
import { paiseToRupees } from '../money.ts';
import type { FlowJobRecord, Store } from '../store/types.ts';
import { endJob } from './jobs/ending.ts';
import { inputSchemaOf, typeOfValue, variablesRead } from './jobs/graph.ts';
import { ask, type FlowModelSet, jsonObjectIn, MODEL_SETTING } from './jobs/models.ts';
import { costPaise, emptyUsage, hostedMicroPaise, totalTokens } from './jobs/pricing.ts';
import { dataMessage, GENERATE_PROMPT, REPAIR_PROMPT } from './jobs/prompts.ts';
import {
  DEFAULT_FLOW_JOB_MODEL,
  type DraftInput,
  type DraftState,
  type FlowJobModel,
  jobJson,
  storedDraftInput,
  storedDraftState,
} from './jobs/stored.ts';
import { validateFlow } from './validate.ts';

export interface GenerateRequest {
  brief: string;
  language?: string | undefined;
  variables?: Record<string, string | number | boolean> | undefined;
  model?: FlowJobModel | undefined;
}

const DRAFT_TOKENS = 16_000;
const RETENTION_MS = 24 * 60 * 60 * 1000;
const WAIT_POLL_MS = 50;

export function flowDraftBody(record: FlowJobRecord) {
  const input = storedDraftInput(record.input);
  const state = storedDraftState(record.state);
  const ended = record.status !== 'running';
  const result = record.status === 'succeeded' ? state.result : null;
  return {
    id: record.id,
    object: 'flow_draft' as const,
    status: record.status,
    model: input.model,
    flow: result?.flow ?? null,
    input_schema: result ? inputSchemaOf(result.variables) : null,
    variables: result?.variables ?? null,
    tokens: totalTokens(state.usage),
    cost: {
      amount_inr: paiseToRupees(ended ? (state.charge?.amount_paise ?? 0) : costPaise(state.usage)),
      charged: ended,
      transaction_id: ended ? (state.charge?.transaction_id ?? null) : null,
    },
    failure_reason: record.status === 'failed' ? state.failure : null,
    created_at: new Date(record.createdAt).toISOString(),
    ended_at: record.endedAt === null ? null : new Date(record.endedAt).toISOString(),
  };
}

export type FlowDraftBody = ReturnType<typeof flowDraftBody>;

/** The API's side of drafts: start one and wait for it a while; read one. */
export class FlowDrafts {
  constructor(
    private readonly store: Store,
    private readonly models: FlowModelSet,
    private readonly clock: Clock,
    /** How long a request waits for its draft before it answers 202 with the running job. */
    private readonly waitMs: number,
  ) {}

  async generate(
    workspaceId: string,
    request: GenerateRequest,
  ): Promise<{ finished: boolean; draft: FlowDraftBody }> {
    const model = request.model ?? DEFAULT_FLOW_JOB_MODEL;
    if (!this.models.reviewing[model]) {
      throw new ApiError(
        'model_unavailable',
        `the model ${model} is not configured: set ${MODEL_SETTING[model]}`,
      );
    }
    const input: DraftInput = {
      brief: request.brief,
      language: request.language ?? null,
      variables: request.variables ?? {},
      model,
    };
    const state: DraftState = {
      stage: 'drafting',
      rejected: null,
      usage: emptyUsage(),
      result: null,
      failure: null,
      charge: null,
    };
    const created = await this.store.flowJobs.create({
      id: newId('flowDraft', this.clock.now()),
      workspaceId,
      kind: 'generate',
      agentId: null,
      input: jobJson(input),
      state: jobJson(state),
    });
    if (!('job' in created)) throw new Error('a draft has no start limit');
    const deadline = Date.now() + this.waitMs;
    let record = created.job;
    while (record.status === 'running' && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, WAIT_POLL_MS));
      record = (await this.store.flowJobs.get(workspaceId, record.id, 0)) ?? record;
    }
    return { finished: record.status !== 'running', draft: flowDraftBody(record) };
  }

  async get(workspaceId: string, id: string): Promise<FlowDraftBody> {
    const record = await this.store.flowJobs.get(workspaceId, id, this.clock.now() - RETENTION_MS);
    if (record?.kind !== 'generate') throw notFound(`flow draft ${id}`);
    return flowDraftBody(record);
  }
}

/** The worker's side: writes one draft, its state saved after each answer. */
export async function runDraft(
  deps: { store: Store; models: FlowModelSet; leaseMs: number; logger: Logger },
  job: { id: string; workspaceId: string; input: unknown; state: unknown },
  owner: string,
  signal: AbortSignal,
): Promise<'ended' | 'lost'> {
  const input = storedDraftInput(job.input);
  let state = storedDraftState(job.state);
  const model = deps.models.reviewing[input.model];
  const save = async () => {
    if (!(await deps.store.flowJobs.saveState(job.id, owner, jobJson(state), deps.leaseMs))) throw new Lost();
  };
  const end = (status: 'succeeded' | 'failed') =>
    endJob(deps.store, job, owner, status, state, `Flow draft ${job.id}`).then((ended) =>
      ended ? 'ended' : 'lost',
    );
  const data = { brief: input.brief, language: input.language, variables: input.variables };
  try {
    if (!model) throw new Error(`the model ${input.model} is no longer configured`);
    const answer = async (system: string, body: Record<string, unknown>) => {
      const a = await ask(
        model.llm,
        {
          messages: [
            { role: 'system', content: system },
            { role: 'user', content: dataMessage(body) },
          ],
          maxTokens: DRAFT_TOKENS,
        },
        deps.models.timeoutMs,
        signal,
      );
      const u = state.usage;
      state = {
        ...state,
        usage: {
          ...u,
          hosted_input: u.hosted_input + (a.usage?.promptTokens ?? 0),
          hosted_output: u.hosted_output + (a.usage?.completionTokens ?? 0),
          hosted_micro_paise: u.hosted_micro_paise + hostedMicroPaise(a.usage, model.usdPerMillion),
        },
      };
      return jsonObjectIn(a.text)?.flow;
    };
    const raw =
      state.stage === 'repairing' && state.rejected
        ? await answer(REPAIR_PROMPT, {
            ...data,
            flow: state.rejected.flow ?? null,
            problems: state.rejected.problems,
          })
        : await answer(GENERATE_PROMPT, data);
    const checked = validateFlow(raw, []);
    if (checked.ok) {
      const variables = Object.fromEntries(
        variablesRead(checked.flow).map((name) => [name, typeOfValue(input.variables[name])]),
      );
      state = { ...state, stage: 'done', rejected: null, result: { flow: checked.flow, variables } };
      return await end('succeeded');
    }
    if (state.stage === 'drafting') {
      state = {
        ...state,
        stage: 'repairing',
        rejected: { flow: raw ?? null, problems: checked.details.slice(0, 50) },
      };
      await save();
      return await runDraft(deps, { ...job, state: jobJson(state) }, owner, signal);
    }
    state = {
      ...state,
      failure: {
        code: 'invalid_draft',
        message: 'the model drafted a flow that breaks the rules of saving a flow, twice',
      },
    };
    return await end('failed');
  } catch (error) {
    if (error instanceof Lost || signal.aborted) return 'lost';
    state = {
      ...state,
      failure: {
        code: 'model_failed',
        message: `a model request failed: ${error instanceof Error ? error.message : String(error)}`,
      },
    };
    deps.logger.warn({ job_id: job.id, failure: 'model_failed' }, 'flow draft failed');
    return await end('failed');
  }
}

class Lost extends Error {
  override name = 'Lost';
}
