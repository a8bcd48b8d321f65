/** An agent's settings as stored in each revision (everything but id, object, revision and timestamps). */
export interface AgentSettings {
  name: string;
  draft: boolean;
  archived: boolean;
  system_prompt: string;
  first_message: string;
  language: string;
  secondary_languages: string[];
  voice: { voice_id: string; language: string };
  max_duration_secs: number;
  end_call: EndCallSettings;
  voicemail: { action: VoicemailAction; message?: string };
  background_sound: { sound: BackgroundSound };
  behavior: AgentBehavior;
  analysis: AnalysisSettings;
  tools: ToolDefinition[];
  flow?: Flow;
  calls_from?: { pool_id: string };
  /** Where the `call.*` webhooks of the agent's incoming calls go (outgoing calls name their own). */
  webhook_url?: string;
}

export interface EndCallSettings {
  /** The model may hang up (it is offered the `end_call` function). */
  enabled: boolean;
  /** What the agent says before it hangs up ('' for nothing). */
  message: string;
  confirm: boolean;
  /**
   * Re-prompts in a row the caller may leave unanswered: when the silence after the last one lasts as long
   * again, the agent says goodbye and hangs up (`silence-timed-out`). 0: silence never ends the call.
   */
  after_silence_reprompts: number;
}

export const VOICEMAIL_ACTIONS = ['hangup', 'leave_message'] as const;
export type VoicemailAction = (typeof VOICEMAIL_ACTIONS)[number];
/** Only `off` is live; ambient sounds are not mixed in yet. */
export const BACKGROUND_SOUNDS = ['off'] as const;
export type BackgroundSound = (typeof BACKGROUND_SOUNDS)[number];
export const INTERRUPTION_MODES = ['off', 'low', 'normal', 'high'] as const;
export type InterruptionMode = (typeof INTERRUPTION_MODES)[number];

export interface AgentBehavior {
  /** How readily the caller's speech stops the agent: `off` never, `low` needs more speech, `high` less. */
  interruptions: InterruptionMode;
  /** Backchannels ("haan", "ok", "hmm") do not interrupt. */
  adaptive_interruptions: boolean;
  /** Caller speech needed to interrupt, in ms. */
  min_interrupt_ms: number;
  /** Words needed to interrupt (0: duration alone decides). */
  min_words: number;
  /** Silence after speech that ends the caller's turn, in ms. */
  endpointing_ms: number;
  /**
   * Seconds of caller silence after the agent's audio has played out before the agent checks on the caller
   * (0: never). Flow nodes may set their own.
   */
  silence_reprompt_secs: number;
  /** What the agent says then; '' for a short line in the voice's language. */
  silence_reprompt_message: string;
  /**
   * A caller who clearly asks not to be called again is put on the workspace's do-not-call list (reason
   * `opt_out`, with the call's id); the agent acknowledges and ends the call.
   */
  dnc_on_opt_out: boolean;
  /**
   * The reply starts (model, and the speech of its first clause) as soon as the caller has stopped and the STT
   * has given their words, while the turn-end policy is still deciding; it plays the moment the turn ends with
   * the same words, and is discarded unheard when the caller goes on. Faster answers for some extra model spend.
   */
  speculative_replies: boolean;
}

/** What the post-call analysis writes about each call of the agent; prompts left out use generic defaults. */
export interface AnalysisSettings {
  enabled: boolean;
  /** How to summarise the call. */
  summary_prompt?: string;
  /** What makes a call a success. */
  success_criteria?: string;
  /** Named values read from each call, each of one type (null when the call did not tell). */
  structured_data?: AnalysisField[];
}

export const ANALYSIS_FIELD_TYPES = ['string', 'number', 'boolean'] as const;
export type AnalysisFieldType = (typeof ANALYSIS_FIELD_TYPES)[number];

export interface AnalysisField {
  /** An identifier: letters, digits and `_`, not starting with a digit. */
  name: string;
  type: AnalysisFieldType;
  /** What the value is, for the model that reads it from the transcript. */
  description: string;
}

export const TOOL_PHASES = ['pre_call', 'on_call', 'post_call'] as const;
export type ToolPhase = (typeof TOOL_PHASES)[number];

export const TOOL_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
export type ToolMethod = (typeof TOOL_METHODS)[number];

/** A tool as stored on the agent once it passed validation (core/tools/definition.ts), defaults filled in. */
export interface ToolDefinition {
  name: string;
  phase: ToolPhase;
  description?: string;
  /** JSON Schema of the arguments (on_call only). */
  parameters?: Record<string, unknown>;
  request: {
    method: ToolMethod;
    /** Template; scheme and host are literal. */
    url: string;
    /** Header values are templates. */
    headers: Record<string, string>;
    /** Any JSON; every string in it is a template. Absent for post_call tools (they send the call). */
    body?: unknown;
  };
  timeout_ms: number;
  /** on_call only: after this long without an answer the agent says a filler line; 0: never. */
  filler_after_ms?: number;
}

export const NODE_TYPES = ['globalNode', 'startCall', 'agentNode', 'endCall'] as const;
export type NodeType = (typeof NODE_TYPES)[number];

export interface ExtractionVariable {
  name: string;
  type: string;
  prompt: string;
}

export interface FlowNodeData {
  name: string;
  prompt: string;
  greeting?: string;
  is_start: boolean;
  allow_interrupt: boolean;
  add_global_prompt: boolean;
  extraction_enabled: boolean;
  extraction_variables: ExtractionVariable[];
  tools: string[];
  /** This node's own `behavior.silence_reprompt_secs`; the agent's when absent. */
  silence_reprompt_secs?: number;
  /** This node's own `behavior.silence_reprompt_message`; the agent's when absent. */
  silence_reprompt_message?: string;
}

export interface FlowNode {
  id: string;
  type: NodeType;
  data: FlowNodeData;
}

export interface FlowEdge {
  id: string;
  source: string;
  target: string;
  data: { label: string; condition: string };
}

export interface Flow {
  nodes: FlowNode[];
  edges: FlowEdge[];
}

export const AGENT_LIMITS = {
  nameChars: 200,
  systemPromptChars: 8000,
  firstMessageChars: 500,
  endCallMessageChars: 500,
  voicemailMessageChars: 500,
  minDurationSecs: 30,
  maxDurationSecs: 1800,
  defaultDurationSecs: 300,
  secondaryLanguages: 9,
  tools: 32,
  analysisPromptChars: 2000,
  analysisFields: 20,
  analysisFieldNameChars: 64,
  analysisFieldDescriptionChars: 500,
  /** `silence_reprompt_secs` is 0 (off) or within these bounds. */
  minSilenceRepromptSecs: 2,
  maxSilenceRepromptSecs: 60,
  silenceRepromptMessageChars: 500,
  maxSilenceReprompts: 10,
} as const;

export const DEFAULT_LANGUAGE = 'en-IN';

export const DEFAULT_BEHAVIOR: AgentBehavior = {
  interruptions: 'normal',
  adaptive_interruptions: true,
  min_interrupt_ms: 300,
  min_words: 0,
  endpointing_ms: 500,
  silence_reprompt_secs: 6,
  silence_reprompt_message: '',
  dnc_on_opt_out: true,
  speculative_replies: true,
};

export const DEFAULT_END_CALL: EndCallSettings = {
  enabled: true,
  message: '',
  confirm: false,
  after_silence_reprompts: 2,
};

/** What a client may send when creating an agent: `name` and anything else; the rest takes defaults. */
export type AgentInput = { name: string } & Partial<
  Omit<AgentSettings, 'name' | 'flow' | 'voice' | 'analysis' | 'behavior' | 'end_call'>
> & {
    behavior?: Partial<AgentBehavior> | undefined;
    end_call?: Partial<EndCallSettings> | undefined;
    voice?: { voice_id: string; language?: string | undefined } | undefined;
    analysis?: Partial<AnalysisSettings> | undefined;
    flow?: unknown;
  };

/** A partial update: objects merge one level deep, `null` clears `flow` and `calls_from`. */
export type AgentPatch = Partial<Omit<AgentInput, 'flow' | 'calls_from' | 'webhook_url'>> & {
  flow?: unknown;
  calls_from?: { pool_id: string } | null;
  webhook_url?: string | null;
};

/** Voices as the agent rules need them; the composition root hands in the catalogue. */
export interface VoiceDirectory {
  get(id: string): { id: string; languages: readonly string[] } | undefined;
  defaultFor(language: string): { id: string } | undefined;
}
