/** Interface "Limits": payload ceilings of a call's variables and webhook URL. */
export const CALL_LIMITS = {
  variables: 32,
  variableValueChars: 512,
  webhookUrlChars: 2_048,
} as const;

/** A variable's name: what templates and prompts refer to. */
export const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

export type VariableValue = string | number | boolean | null;

/** What is wrong with a flat map of call variables, or undefined when it is within the limits. */
export function variablesProblem(variables: Readonly<Record<string, VariableValue>>): string | undefined {
  const names = Object.keys(variables);
  if (names.length > CALL_LIMITS.variables) return `at most ${CALL_LIMITS.variables} variables`;
  const badName = names.find((name) => !VARIABLE_NAME.test(name));
  if (badName !== undefined) return `"${badName.slice(0, 70)}" is not a valid variable name`;
  const long = names.find((name) => {
    const value = variables[name];
    return typeof value === 'string' && value.length > CALL_LIMITS.variableValueChars;
  });
  if (long !== undefined)
    return `variable "${long}" is longer than ${CALL_LIMITS.variableValueChars} characters`;
  return undefined;
}
