/**
 * The call's on_call tool runs. A run belongs to the call, not to the reply that started it: a barge-in stops
 * the reply (the caller is heard at once) but not the run. The reply leaves the tool's message in the
 * conversation right after the model's call, and the run writes its result there when it ends; the next reply
 * waits for every run still going before it asks the model, so the result always reaches the model's context.
 */
import type { ToolDefinition } from '../core/agents/types.ts';
import { checkArguments, fillerAfterMs, type OnCallTools, resultForModel } from '../core/tools/on-call.ts';
import type { ToolRunOutcome } from '../core/tools/runner.ts';
import type { ChatMessage, ToolCall } from '../engines/llm/types.ts';

/** A tool message whose run has not ended (only seen if the conversation is read meanwhile). */
export const PENDING_RESULT = JSON.stringify({
  ok: false,
  pending: true,
  error: 'the tool is still running',
});

/** Runs one call may have going at once; a model calling more at once gets an error for the rest. */
export const MAX_CONCURRENT_RUNS = 4;

export class ToolRuns {
  /** Each run still going, with how long a wait on it may be before a filler line. */
  private readonly running = new Map<Promise<void>, number>();

  constructor(
    private readonly tools: OnCallTools,
    /** The call's signal: a run ends early only when the call does. */
    private readonly signal: AbortSignal,
    /** Each run's outcome, once (for the call's `tool_calls` and its live events). */
    private readonly ended: (outcome: ToolRunOutcome) => void,
  ) {}

  /**
   * Starts `tool` for the model's `call`; `message` (the tool message in the conversation) receives the result.
   * Arguments that do not match the tool's `parameters` never reach the customer's API: the model reads why.
   */
  start(tool: ToolDefinition, call: ToolCall, message: ChatMessage): void {
    const checked = checkArguments(tool, call.arguments);
    if (!checked.ok) {
      this.finish(message, this.tools.refused(tool, checked.error));
      return;
    }
    if (this.running.size >= MAX_CONCURRENT_RUNS) {
      const error = `too many tools at once: at most ${MAX_CONCURRENT_RUNS} run together`;
      this.finish(message, this.tools.refused(tool, error));
      return;
    }
    message.content = PENDING_RESULT;
    const run: Promise<void> = this.tools
      .run(tool, checked.args, this.signal)
      .catch((error: unknown) => ({
        ...this.tools.refused(tool, 'the tool run failed'),
        error: error instanceof Error ? `the tool run failed: ${error.message}` : 'the tool run failed',
      }))
      .then((outcome) => this.finish(message, outcome))
      .finally(() => this.running.delete(run));
    this.running.set(run, fillerAfterMs(tool));
  }

  /** Whether any run is still going. */
  get busy(): boolean {
    return this.running.size > 0;
  }

  /**
   * Waits until every run has ended (true) or `signal` aborts (false). When that takes longer than the
   * shortest filler delay of the runs waited on (tools with `filler_after_ms: 0` set none), `filler` is called
   * once, so the caller hears that the agent is on it.
   */
  wait(signal: AbortSignal, filler: () => void): Promise<boolean> {
    if (this.running.size === 0) return Promise.resolve(!signal.aborted);
    if (signal.aborted) return Promise.resolve(false);
    const delays = [...this.running.values()].filter((ms) => ms > 0);
    return new Promise((resolve) => {
      const timer =
        delays.length > 0
          ? setTimeout(
              () => {
                if (!signal.aborted) filler();
              },
              Math.min(...delays),
            )
          : undefined;
      const finish = (allEnded: boolean) => {
        clearTimeout(timer);
        signal.removeEventListener('abort', aborted);
        resolve(allEnded);
      };
      const aborted = () => finish(false);
      signal.addEventListener('abort', aborted, { once: true });
      void Promise.all(this.running.keys()).then(() => finish(!signal.aborted));
    });
  }

  private finish(message: ChatMessage, outcome: ToolRunOutcome): void {
    message.content = resultForModel(outcome);
    this.ended(outcome);
  }
}

/** Short "one moment" lines per language (the voice's BCP-47 primary tag); English for the rest. */
const FILLERS: Readonly<Record<string, string>> = {
  en: 'One moment, please.',
  hi: 'एक पल रुकिए।',
  bn: 'এক মুহূর্ত অপেক্ষা করুন।',
  mr: 'एक क्षण थांबा.',
  ta: 'ஒரு நிமிடம் காத்திருங்கள்.',
  te: 'ఒక్క క్షణం ఆగండి.',
  gu: 'એક ક્ષણ રાહ જુઓ.',
  kn: 'ಒಂದು ಕ್ಷಣ ಕಾಯಿರಿ.',
  ml: 'ഒരു നിമിഷം കാത്തിരിക്കൂ.',
  pa: 'ਇੱਕ ਪਲ ਰੁਕੋ ਜੀ।',
};

/** What the agent says while a tool keeps the caller waiting. */
export function fillerLine(language: string): string {
  const primary = language.toLowerCase().split('-')[0] ?? 'en';
  return FILLERS[primary] ?? (FILLERS.en as string);
}
