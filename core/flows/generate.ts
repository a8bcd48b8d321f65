/**
 * Drafting a flow from a brief (`POST /v2/agents/flow/generate`): one request to the reviewing model, the draft
 * checked by every rule of saving a flow and repaired once by the model when it breaks one; charged as one
 * `flow_generation` transaction (reference `fdr_...`). Synchronous: a draft is one answer of a few thousand
 * tokens, well inside the API's 30 s (README "Flow tests").
 */
import type { Clock } from '../clock.ts';
import { ApiError } from '../errors.ts';
import { newId } from '../ids.ts';
import { paiseToRupees } from '../money.ts';
import { InsufficientBalanceError, type Store } from '../store/types.ts';
import { inputSchemaOf, typeOfValue, variablesRead } from './jobs/graph.ts';
import { type Answer, ask, type FlowModelSet, jsonObjectIn, MODEL_SETTING } from './jobs/models.ts';
import { costPaise, emptyUsage, hostedMicroPaise, totalTokens } from './jobs/pricing.ts';
import { dataMessage, GENERATE_PROMPT, REPAIR_PROMPT } from './jobs/prompts.ts';
import { DEFAULT_FLOW_JOB_MODEL, type FlowJobModel } from './jobs/stored.ts';
import { validateFlow } from './validate.ts';

export interface GenerateRequest {
  brief: string;
  language?: string | undefined;
  variables?: Record<string, string | number | boolean> | undefined;
  model?: FlowJobModel | undefined;
}

const DRAFT_TOKENS = 16_000;
/** A repair is not started with less time than this left. */
const MIN_ATTEMPT_MS = 2_000;

export class FlowDrafts {
  constructor(
    private readonly store: Store,
    private readonly models: FlowModelSet,
    private readonly clock: Clock,
    /** The whole draft, repair included: inside the API's answer deadline, so no draft is charged unseen. */
    private readonly budgetMs: number,
  ) {}

  async generate(workspaceId: string, request: GenerateRequest) {
    const modelName = request.model ?? DEFAULT_FLOW_JOB_MODEL;
    const model = this.models.reviewing[modelName];
    if (!model) {
      throw new ApiError(
        'model_unavailable',
        `the model ${modelName} is not configured: set ${MODEL_SETTING[modelName]}`,
      );
    }
    const { availablePaise } = await this.store.wallet.balance(workspaceId);
    if (availablePaise <= 0)
      throw new ApiError('insufficient_balance', 'the wallet is empty; top it up to draft flows');
    const usage = emptyUsage();
    const deadline = Date.now() + this.budgetMs;
    const request1 = async (system: string, data: Record<string, unknown>): Promise<Answer> => {
      const left = Math.min(this.models.timeoutMs, deadline - Date.now());
      if (left < MIN_ATTEMPT_MS) {
        throw new ApiError(
          'model_unavailable',
          'the model did not draft a valid flow within the request budget; nothing was charged',
        );
      }
      const answer = await ask(
        model.llm,
        {
          messages: [
            { role: 'system', content: system },
            { role: 'user', content: dataMessage(data) },
          ],
          maxTokens: DRAFT_TOKENS,
        },
        left,
      ).catch((error: unknown) => {
        throw new ApiError(
          'model_unavailable',
          `the model did not answer: ${error instanceof Error ? error.message : String(error)}`,
        );
      });
      usage.hosted_input += answer.usage?.promptTokens ?? 0;
      usage.hosted_output += answer.usage?.completionTokens ?? 0;
      usage.hosted_micro_paise += hostedMicroPaise(answer.usage, model.usdPerMillion);
      return answer;
    };
    const data = {
      brief: request.brief,
      language: request.language ?? null,
      variables: request.variables ?? {},
    };
    const first = await request1(GENERATE_PROMPT, data);
    let raw = jsonObjectIn(first.text)?.flow;
    let checked = validateFlow(raw, []);
    if (!checked.ok) {
      const repaired = await request1(REPAIR_PROMPT, {
        ...data,
        flow: raw ?? null,
        problems: checked.details,
      });
      raw = jsonObjectIn(repaired.text)?.flow;
      checked = validateFlow(raw, []);
    }
    if (!checked.ok) {
      throw new ApiError(
        'model_unavailable',
        'the model drafted a flow that breaks the rules of saving a flow, twice; nothing was charged; try again or another model',
      );
    }
    const id = newId('flowDraft', this.clock.now());
    const charge = await this.charge(workspaceId, id, costPaise(usage));
    const variables = Object.fromEntries(
      variablesRead(checked.flow).map((name) => [name, typeOfValue(request.variables?.[name])]),
    );
    return {
      object: 'flow_draft' as const,
      id,
      flow: checked.flow,
      input_schema: inputSchemaOf(variables),
      variables,
      tokens: totalTokens(usage),
      cost: { amount_inr: paiseToRupees(charge.paise), transaction_id: charge.transactionId },
      model: modelName,
    };
  }

  private async charge(workspaceId: string, reference: string, paise: number) {
    if (paise <= 0) return { paise: 0, transactionId: null };
    const debit = (amount: number) =>
      this.store.wallet.debit(workspaceId, {
        amountPaise: amount,
        reference,
        kind: 'flow_generation',
        description: `Flow draft ${reference}`,
      });
    try {
      const entry = await debit(paise);
      return { paise, transactionId: entry.id };
    } catch (error) {
      if (!(error instanceof InsufficientBalanceError) || error.availablePaise <= 0) throw error;
      const entry = await debit(error.availablePaise);
      return { paise: error.availablePaise, transactionId: entry.id };
    }
  }
}
