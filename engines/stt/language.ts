/** Language codes as speech engines want them. Our interfaces carry BCP-47 tags (`hi-IN`, `en-US`, `ta`). */

/**
 * The ISO-639-1 code of a BCP-47 tag (`hi-IN` -> `hi`, `en` -> `en`, `zh-Hans-CN` -> `zh`), as OpenAI-compatible
 * transcription servers take it. `undefined` when the primary language has no two-letter code (`fil`, `yue`) or
 * the tag names no language (`und`, `mul`, empty): the server then detects the language itself.
 */
export function iso639_1(tag: string): string | undefined {
  const primary = tag.trim().split(/[-_]/, 1)[0]?.toLowerCase() ?? '';
  return /^[a-z]{2}$/.test(primary) ? primary : undefined;
}

/** Whether a BCP-47 tag is some English (`en`, `en-IN`, `en_GB`). */
export function isEnglish(tag: string): boolean {
  return iso639_1(tag) === 'en';
}

/**
 * Whether an engine that lists `languages` (BCP-47; empty means any) gives words for speech in `tag`. A listed
 * tag serves every tag of its primary language (`en-IN` serves `en-AU` and `en`): an engine's model for a
 * language hears its regional accents too, and the tags an agent carries are regional.
 */
export function transcribesLanguage(languages: readonly string[], tag: string): boolean {
  if (languages.length === 0) return true;
  const wanted = primaryLanguage(tag);
  return wanted !== '' && languages.some((listed) => primaryLanguage(listed) === wanted);
}

function primaryLanguage(tag: string): string {
  return tag.trim().split(/[-_]/, 1)[0]?.toLowerCase() ?? '';
}
