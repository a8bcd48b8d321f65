/**
 * What the model reads for a caller turn whose words no engine recognised (no STT serves the call's language,
 * or the STT failed): the caller spoke, and nothing more is known. A language model can answer it as it would a
 * line it did not catch; the scripted dialog engine moves a flow on by it (see scripted.ts).
 */
export const UNRECOGNIZED_SPEECH = '[the caller spoke; their words could not be recognised]';

export function isUnrecognizedSpeech(content: string): boolean {
  return content.trim() === UNRECOGNIZED_SPEECH;
}
