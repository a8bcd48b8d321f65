import { readFileSync } from 'node:fs';

/** One voice of the catalogue (`GET /v2/voices`); agents name it by `id` in `voice.voice_id`. */
export interface Voice {
  id: string;
  name: string;
  /** The voice's main language (BCP-47). */
  language: string;
  /** Every language the voice can speak. */
  languages: string[];
  gender: 'male' | 'female' | 'neutral';
  /** The TTS engine that renders it (`espeak` local, `openai` OpenAI-compatible endpoint). */
  engine: 'espeak' | 'openai';
  /** The engine's own name for the voice. */
  engine_voice: string;
  description: string;
}

/** The voice catalogue, loaded once from `voices.json` beside this file. */
export class VoiceCatalogue {
  private readonly byId: Map<string, Voice>;

  constructor(readonly voices: readonly Voice[]) {
    this.byId = new Map(voices.map((v) => [v.id, v]));
  }

  static load(file = new URL('./voices.json', import.meta.url)): VoiceCatalogue {
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as { voices: Voice[] };
    return new VoiceCatalogue(parsed.voices);
  }

  get(id: string): Voice | undefined {
    return this.byId.get(id);
  }

  /** The default voice for a language: the first local voice that speaks it, else any that does. */
  defaultFor(language: string): Voice | undefined {
    const speaks = this.voices.filter((v) => v.languages.includes(language));
    return speaks.find((v) => v.engine === 'espeak') ?? speaks[0];
  }

  languages(): string[] {
    return [...new Set(this.voices.flatMap((v) => v.languages))].sort();
  }
}
