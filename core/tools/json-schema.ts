import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';

/**
 * JSON Schema (draft-07, what OpenAI function parameters use) for on_call tool arguments: checking a schema
 * when an agent is saved, and arguments against it before a request is sent.
 */
const ajv = new Ajv({ allErrors: true, strict: false, validateSchema: true });
const compiled = new WeakMap<object, ValidateFunction>();

/** What is wrong with `schema` as the parameters of a function; empty when it is fine. */
export function schemaProblems(schema: unknown): string[] {
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema))
    return ['must be a JSON Schema object'];
  const problems: string[] = [];
  if ((schema as { type?: unknown }).type !== 'object') problems.push('must be a schema of type "object"');
  if (!ajv.validateSchema(schema)) problems.push(...describe(ajv.errors));
  if (problems.length === 0) {
    try {
      compile(schema);
    } catch (error) {
      problems.push(error instanceof Error ? error.message : String(error));
    }
  }
  return problems;
}

/** Problems of `args` against `schema` (one that passed `schemaProblems`); empty when they conform. */
export function argumentProblems(schema: object, args: unknown): string[] {
  let validate = compiled.get(schema);
  if (!validate) {
    validate = compile(schema);
    compiled.set(schema, validate);
  }
  return validate(args) ? [] : describe(validate.errors);
}

/** Ajv keeps every compiled schema in its cache; customers' schemas are dropped from it at once. */
function compile(schema: object): ValidateFunction {
  try {
    return ajv.compile(schema);
  } finally {
    ajv.removeSchema(schema);
  }
}

function describe(errors: ErrorObject[] | null | undefined): string[] {
  return (errors ?? []).slice(0, 10).map((e) => `${e.instancePath || '(root)'} ${e.message ?? 'is invalid'}`);
}
