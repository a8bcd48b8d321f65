import { OpenAiChatModel, type OpenAiChatOptions } from './providers/openai.ts';
import { ScriptedDialogModel, type ScriptedDialogOptions } from './providers/scripted.ts';
import type { LanguageModel } from './types.ts';

export { type CollectedReply, collectReply } from './collect.ts';
export { OPENAI_CHAT_DEFAULTS, OpenAiChatModel, type OpenAiChatOptions } from './providers/openai.ts';
export type { MaxTokensField } from './providers/openai-wire.ts';
export {
  decide as scriptedDecision,
  END_CALL_FUNCTION,
  FIRST_MESSAGE_MARKER,
  firstMessageLine,
  MATCH_THRESHOLD,
  type ScriptedDecision,
  ScriptedDialogModel,
  type ScriptedDialogOptions,
} from './providers/scripted.ts';
export type * from './types.ts';

export type LanguageModelConfig =
  | ({ provider: 'openai' } & OpenAiChatOptions)
  | ({ provider: 'scripted' } & ScriptedDialogOptions);

/** The engine a configuration names; the composition root turns settings into one of these. */
export function createLanguageModel(config: LanguageModelConfig): LanguageModel {
  switch (config.provider) {
    case 'openai': {
      const { provider: _, ...options } = config;
      return new OpenAiChatModel(options);
    }
    case 'scripted': {
      const { provider: _, ...options } = config;
      return new ScriptedDialogModel(options);
    }
  }
}
