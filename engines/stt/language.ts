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
