import type { Config, FlowModelKey } from '../core/config.ts';
import type { FlowModelSet, HostedModel } from '../core/flows/jobs/models.ts';
import type { FlowJobModel } from '../core/flows/jobs/stored.ts';
import { OpenAiChatModel } from '../engines/llm/index.ts';

const KEY_OF: Record<FlowJobModel, FlowModelKey> = {
  'provider1-3.8-flash': 'FLASH',
  'provider2-opus-5.5': 'OPUS',
  'provider3-6-sol': 'SOL',
};

/** Reviews and drafts are long answers: a slow first token is no stalled stream here. */
const FIRST_TOKEN_MS = 60_000;
const IDLE_MS = 30_000;

/** The models flow drafts and tests run on, from the settings (README "Flow tests"). */
export function buildFlowModels(config: Config): FlowModelSet {
  const { flowJobs, engines } = config;
  const hosted = (name: FlowJobModel): HostedModel | undefined => {
    const endpoint = flowJobs.models[KEY_OF[name]];
    if (!endpoint) return undefined;
    return {
      llm: new OpenAiChatModel({
        baseURL: endpoint.baseURL,
        model: endpoint.model,
        ...(endpoint.apiKey ? { apiKey: endpoint.apiKey } : {}),
        firstTokenTimeoutMs: Math.min(FIRST_TOKEN_MS, flowJobs.modelTimeoutMs),
        idleTimeoutMs: Math.min(IDLE_MS, flowJobs.modelTimeoutMs),
        maxRetryDelayMs: 5_000,
      }),
      usdPerMillion: endpoint.usdPerMillion,
    };
  };
  const llm = engines.llm;
  return {
    reviewing: {
      'provider1-3.8-flash': hosted('provider1-3.8-flash'),
      'provider2-opus-5.5': hosted('provider2-opus-5.5'),
      'provider3-6-sol': hosted('provider3-6-sol'),
    },
    live:
      llm.provider === 'openai'
        ? new OpenAiChatModel({
            baseURL: llm.baseURL,
            model: llm.model,
            ...(llm.apiKey ? { apiKey: llm.apiKey } : {}),
            maxAttempts: 2,
          })
        : undefined,
    timeoutMs: flowJobs.modelTimeoutMs,
  };
}
