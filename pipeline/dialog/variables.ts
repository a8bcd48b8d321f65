/** `{{name}}` (spaces allowed inside the braces) in prompts, greetings and messages. */
const PLACEHOLDER = /\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g;

export type CallVariables = Readonly<Record<string, string | number | boolean>>;

/**
 * Fills `{{name}}` from the call's variables. A placeholder with no value is dropped rather than spoken aloud,
 * and the spacing it leaves is tidied.
 */
export function substitute(template: string, variables: CallVariables): string {
  let missing = false;
  const filled = template.replace(PLACEHOLDER, (_match, name: string) => {
    const value = variables[name];
    if (value === undefined) {
      missing = true;
      return '';
    }
    return String(value);
  });
  return missing
    ? filled
        .replace(/[ \t]{2,}/g, ' ')
        .replace(/\s+([,.!?।])/g, '$1')
        .trim()
    : filled;
}

/** The variable names a text reads. */
export function placeholders(template: string): string[] {
  return [...new Set([...template.matchAll(PLACEHOLDER)].map((m) => m[1] as string))];
}
