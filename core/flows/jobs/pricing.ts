/**
 * The cost rule of flow jobs, in exact integers: millionths of a paisa until the total is rounded up once.
 *
 * - A simulated agent turn on the live-call model: ₹14.38 per million input tokens and ₹57.52 per million output
 *   tokens, i.e. 1,438 and 5,752 millionths of a paisa a token.
 * - Every hosted answer (callers, fallback turns, reviews, revisions, drafts): the provider's reported cost
 *   × 88 × 1.2 in rupees (× 10,560 in paise), or its configured USD rates per million tokens when it reports none.
 */
import type { Usage } from '../../../engines/llm/types.ts';
import type { JobUsage } from './stored.ts';

export const SIMULATED_INPUT_MICRO_PAISE = 1_438;
export const SIMULATED_OUTPUT_MICRO_PAISE = 5_752;
/** Provider currency to paise: 88 rupees a dollar, 20% on top, 100 paise a rupee. */
const PAISE_PER_PROVIDER_UNIT = 88 * 1.2 * 100;
const MICRO = 1_000_000;

/** The price of one hosted answer in millionths of a paisa. */
export function hostedMicroPaise(usage: Usage | undefined, usdPerMillion: readonly [number, number]): number {
  if (!usage) return 0;
  const providerCost =
    usage.cost ?? (usage.promptTokens * usdPerMillion[0] + usage.completionTokens * usdPerMillion[1]) / MICRO;
  return Math.round(providerCost * PAISE_PER_PROVIDER_UNIT * MICRO);
}

export function emptyUsage(): JobUsage {
  return {
    simulated_input: 0,
    simulated_output: 0,
    hosted_input: 0,
    hosted_output: 0,
    hosted_micro_paise: 0,
  };
}

/** The job's cost so far, rounded up to a paisa. */
export function costPaise(usage: JobUsage): number {
  const micro =
    usage.simulated_input * SIMULATED_INPUT_MICRO_PAISE +
    usage.simulated_output * SIMULATED_OUTPUT_MICRO_PAISE +
    usage.hosted_micro_paise;
  return Math.ceil(micro / MICRO);
}

export function totalTokens(usage: JobUsage): { input: number; output: number; total: number } {
  const input = usage.simulated_input + usage.hosted_input;
  const output = usage.simulated_output + usage.hosted_output;
  return { input, output, total: input + output };
}
