/**
 * A caller who goes quiet: after `silence_reprompt_secs` of silence the agent checks on them; after
 * `end_call.after_silence_reprompts` re-prompts in a row have gone unanswered, the next such silence ends the
 * call. Silence counts in call time from the later of the end of the agent's audio playout and the end of the
 * caller's last speech, so neither a slow model nor a long reply eats into it.
 */
import type { AgentSettings, FlowNodeData } from '../core/agents/types.ts';
import { DEFAULT_BEHAVIOR, DEFAULT_END_CALL } from '../core/agents/types.ts';

export interface SilenceSettings {
  /** Silence before a re-prompt, ms; 0: never. */
  repromptMs: number;
  /** What the agent says; '' for the line of the voice's language. */
  message: string;
  /** Unanswered re-prompts after which silence ends the call; 0: never. */
  maxReprompts: number;
}

/** The settings in force on a flow node: the node's own where it sets them, else the agent's. */
export function silenceSettings(agent: AgentSettings, node?: FlowNodeData): SilenceSettings {
  const secs =
    node?.silence_reprompt_secs ??
    agent.behavior.silence_reprompt_secs ??
    DEFAULT_BEHAVIOR.silence_reprompt_secs;
  return {
    repromptMs: secs * 1000,
    message:
      node?.silence_reprompt_message ??
      agent.behavior.silence_reprompt_message ??
      DEFAULT_BEHAVIOR.silence_reprompt_message,
    maxReprompts: agent.end_call.after_silence_reprompts ?? DEFAULT_END_CALL.after_silence_reprompts,
  };
}

export type SilenceAction = 'reprompt' | 'end';

/** Counts the caller's silence and the re-prompts it went unanswered through. Pure: call time comes in. */
export class SilenceWatch {
  private sinceMs = 0;
  private unanswered = 0;

  /** The agent's audio has played out (or stopped) at `atMs`: silence counts from there. */
  agentDone(atMs: number): void {
    this.sinceMs = Math.max(this.sinceMs, atMs);
  }

  /** The caller is speaking at `atMs`: they are there, whatever they said. */
  callerSpeaking(atMs: number): void {
    this.sinceMs = Math.max(this.sinceMs, atMs);
    this.unanswered = 0;
  }

  /**
   * Called while nobody speaks and the agent has nothing under way: what is due at `atMs`, if anything. A
   * re-prompt is counted here; the caller's silence after it counts from its own playout (`agentDone`).
   */
  due(atMs: number, settings: SilenceSettings, quietSinceMs: number): SilenceAction | null {
    this.sinceMs = Math.max(this.sinceMs, quietSinceMs);
    if (settings.repromptMs <= 0 || atMs - this.sinceMs < settings.repromptMs) return null;
    this.sinceMs = atMs;
    if (settings.maxReprompts > 0 && this.unanswered >= settings.maxReprompts) return 'end';
    this.unanswered++;
    return 'reprompt';
  }
}

type Lines = { reprompt: string; goodbye: string };

/** Short lines per language (the voice's BCP-47 primary tag); English for the rest. */
const LINES: Readonly<Record<string, Lines>> = {
  en: {
    reprompt: 'Are you still there?',
    goodbye: 'I cannot hear you, so I will end the call now. Goodbye.',
  },
  hi: {
    reprompt: 'क्या आप अभी भी लाइन पर हैं?',
    goodbye: 'मुझे आपकी आवाज़ नहीं आ रही, इसलिए मैं अब कॉल समाप्त कर रही हूँ। धन्यवाद।',
  },
  bn: {
    reprompt: 'আপনি কি এখনও লাইনে আছেন?',
    goodbye: 'আমি আপনার কথা শুনতে পাচ্ছি না, তাই এখন কলটি শেষ করছি। ধন্যবাদ।',
  },
  mr: {
    reprompt: 'तुम्ही अजून लाईनवर आहात का?',
    goodbye: 'मला तुमचा आवाज ऐकू येत नाही, म्हणून मी आता कॉल संपवत आहे. धन्यवाद.',
  },
  ta: {
    reprompt: 'நீங்கள் இன்னும் லைனில் இருக்கிறீர்களா?',
    goodbye: 'உங்கள் குரல் கேட்கவில்லை, அதனால் இப்போது அழைப்பை முடிக்கிறேன். நன்றி.',
  },
  te: {
    reprompt: 'మీరు ఇంకా లైన్‌లో ఉన్నారా?',
    goodbye: 'మీ మాట వినిపించడం లేదు, అందుకే ఇప్పుడు కాల్ ముగిస్తున్నాను. ధన్యవాదాలు.',
  },
  gu: {
    reprompt: 'શું તમે હજી લાઇન પર છો?',
    goodbye: 'મને તમારો અવાજ સંભળાતો નથી, તેથી હું હવે કૉલ સમાપ્ત કરું છું. આભાર.',
  },
  kn: {
    reprompt: 'ನೀವು ಇನ್ನೂ ಲೈನ್‌ನಲ್ಲಿದ್ದೀರಾ?',
    goodbye: 'ನಿಮ್ಮ ಧ್ವನಿ ಕೇಳಿಸುತ್ತಿಲ್ಲ, ಆದ್ದರಿಂದ ಈಗ ಕರೆಯನ್ನು ಮುಗಿಸುತ್ತಿದ್ದೇನೆ. ಧನ್ಯವಾದಗಳು.',
  },
  ml: {
    reprompt: 'നിങ്ങൾ ഇപ്പോഴും ലൈനിലുണ്ടോ?',
    goodbye: 'നിങ്ങളുടെ ശബ്ദം കേൾക്കുന്നില്ല, അതിനാൽ ഞാൻ ഇപ്പോൾ കോൾ അവസാനിപ്പിക്കുന്നു. നന്ദി.',
  },
  pa: {
    reprompt: "ਕੀ ਤੁਸੀਂ ਹਾਲੇ ਵੀ ਲਾਈਨ 'ਤੇ ਹੋ?",
    goodbye: 'ਮੈਨੂੰ ਤੁਹਾਡੀ ਆਵਾਜ਼ ਨਹੀਂ ਆ ਰਹੀ, ਇਸ ਲਈ ਮੈਂ ਹੁਣ ਕਾਲ ਖ਼ਤਮ ਕਰ ਰਹੀ ਹਾਂ। ਧੰਨਵਾਦ।',
  },
};

function linesFor(language: string): Lines {
  const primary = language.toLowerCase().split('-')[0] ?? 'en';
  return LINES[primary] ?? (LINES.en as Lines);
}

/** What the agent says on a re-prompt: the agent's (or node's) message, else the language's line. */
export function repromptLine(settings: SilenceSettings, language: string): string {
  return settings.message.trim() ? settings.message : linesFor(language).reprompt;
}

/** What the agent says before hanging up on silence. */
export function silenceGoodbyeLine(language: string): string {
  return linesFor(language).goodbye;
}
