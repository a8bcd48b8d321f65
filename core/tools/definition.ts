import { TOOL_METHODS, type ToolDefinition, type ToolMethod, type ToolPhase } from '../agents/types.ts';
import type { ErrorDetail } from '../errors.ts';
import { isInternalHostName } from '../net/address-policy.ts';
import { schemaProblems } from './json-schema.ts';
import { type Placeholder, parseTemplate } from './template.ts';

export const TOOL_LIMITS = {
  tools: 32,
  nameChars: 64,
  descriptionChars: 1000,
  urlChars: 2048,
  headers: 20,
  headerValueChars: 2048,
  bodyChars: 16_384,
  parametersChars: 16_384,
  minTimeoutMs: 100,
  maxTimeoutMs: 10_000,
  defaultTimeoutMs: 5_000,
  /** An on_call tool still running after this long has the agent say a short filler line; 0: never. */
  minFillerAfterMs: 200,
  maxFillerAfterMs: 10_000,
  defaultFillerAfterMs: 1_000,
} as const;

/** Function names the dialog offers itself; an on_call tool cannot take one. */
export const RESERVED_TOOL_NAMES: ReadonlySet<string> = new Set(['end_call']);

export const TOOL_NAME = /^[a-z][a-z0-9_]{0,63}$/;
const PHASES: readonly ToolPhase[] = ['pre_call', 'on_call', 'post_call'];
const HEADER_NAME = /^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,128}$/;
/** Headers the runner sets itself. */
const RESERVED_HEADERS = new Set([
  'host',
  'content-length',
  'transfer-encoding',
  'connection',
  'x-service-signature',
]);
const TOOL_FIELDS = new Set([
  'name',
  'phase',
  'description',
  'parameters',
  'request',
  'timeout_ms',
  'filler_after_ms',
]);
const REQUEST_FIELDS = new Set(['method', 'url', 'headers', 'body']);

export interface ToolRules {
  /** The workspace's secret names. */
  secrets: ReadonlySet<string>;
  /** The operator allows plain-HTTP and internal targets (tests, private deployments). */
  allowPrivate: boolean;
}

export type ToolValidation = { ok: true; tools: ToolDefinition[] } | { ok: false; details: ErrorDetail[] };

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Checks an agent's tools as a client sent them: every problem at once, with its path. */
export function validateTools(input: unknown, rules: ToolRules, base = 'tools'): ToolValidation {
  const details: ErrorDetail[] = [];
  const problem = (path: string, message: string) => details.push({ path, message });
  if (!Array.isArray(input)) {
    problem(base, 'must be an array of tool definitions');
    return { ok: false, details };
  }
  if (input.length > TOOL_LIMITS.tools) problem(base, `at most ${TOOL_LIMITS.tools} tools`);
  const names = new Set<string>();
  const tools: ToolDefinition[] = [];
  input.slice(0, TOOL_LIMITS.tools).forEach((raw, i) => {
    const tool = checkTool(raw, `${base}[${i}]`, rules, details);
    if (!tool) return;
    if (names.has(tool.name)) problem(`${base}[${i}].name`, `duplicate tool name "${tool.name}"`);
    names.add(tool.name);
    tools.push(tool);
  });
  return details.length > 0 ? { ok: false, details } : { ok: true, tools };
}

/** The secret names a tool's templates use (to refuse deleting a secret that is still referenced). */
export function secretsOf(tool: unknown): string[] {
  if (!isObj(tool) || !isObj(tool.request)) return [];
  const texts: string[] = [];
  const collect = (value: unknown) => {
    if (typeof value === 'string') texts.push(value);
    else if (Array.isArray(value)) for (const v of value) collect(v);
    else if (isObj(value)) for (const v of Object.values(value)) collect(v);
  };
  collect(tool.request.url);
  collect(tool.request.headers);
  collect(tool.request.body);
  const names = new Set<string>();
  for (const text of texts) {
    const parsed = parseTemplate(text);
    if (!parsed.ok) continue;
    for (const part of parsed.parts)
      if (typeof part !== 'string' && part.namespace === 'secrets') names.add(part.name);
  }
  return [...names];
}

function checkTool(
  raw: unknown,
  path: string,
  rules: ToolRules,
  details: ErrorDetail[],
): ToolDefinition | undefined {
  const problem = (where: string, message: string) => details.push({ path: where, message });
  if (!isObj(raw)) {
    problem(path, 'must be an object');
    return undefined;
  }
  for (const key of Object.keys(raw)) if (!TOOL_FIELDS.has(key)) problem(`${path}.${key}`, 'unknown field');
  const before = details.length;
  const name = raw.name;
  const phase = raw.phase;
  if (typeof name !== 'string' || !TOOL_NAME.test(name)) {
    problem(`${path}.name`, 'must match ^[a-z][a-z0-9_]{0,63}$ (lowercase letters, digits and _)');
  } else if (phase === 'on_call' && RESERVED_TOOL_NAMES.has(name)) {
    problem(`${path}.name`, `"${name}" is a function the agent offers itself; choose another name`);
  }
  if (typeof phase !== 'string' || !(PHASES as readonly string[]).includes(phase)) {
    problem(`${path}.phase`, `must be one of ${PHASES.join(', ')}`);
  }
  const onCall = phase === 'on_call';
  const description = raw.description;
  if (
    description !== undefined &&
    (typeof description !== 'string' || description.length > TOOL_LIMITS.descriptionChars)
  ) {
    problem(`${path}.description`, `must be a string of at most ${TOOL_LIMITS.descriptionChars} characters`);
  } else if (onCall && (typeof description !== 'string' || description.trim() === '')) {
    problem(`${path}.description`, 'is required for on_call tools: it is what the model reads');
  }

  let declared = new Set<string>();
  const parameters = raw.parameters;
  if (parameters !== undefined) {
    if (!onCall) problem(`${path}.parameters`, 'only on_call tools take arguments');
    else if (JSON.stringify(parameters).length > TOOL_LIMITS.parametersChars) {
      problem(`${path}.parameters`, `at most ${TOOL_LIMITS.parametersChars} characters of JSON`);
    } else {
      const problems = schemaProblems(parameters);
      for (const p of problems) problem(`${path}.parameters`, `invalid JSON Schema: ${p}`);
      if (problems.length === 0)
        declared = new Set(Object.keys(((parameters as Obj).properties as Obj) ?? {}));
    }
  }

  const timeout = raw.timeout_ms ?? TOOL_LIMITS.defaultTimeoutMs;
  if (
    typeof timeout !== 'number' ||
    !Number.isInteger(timeout) ||
    timeout < TOOL_LIMITS.minTimeoutMs ||
    timeout > TOOL_LIMITS.maxTimeoutMs
  ) {
    problem(
      `${path}.timeout_ms`,
      `must be an integer from ${TOOL_LIMITS.minTimeoutMs} to ${TOOL_LIMITS.maxTimeoutMs}`,
    );
  }

  const filler = raw.filler_after_ms;
  if (filler !== undefined) {
    if (!onCall) problem(`${path}.filler_after_ms`, 'only on_call tools run while the caller waits');
    else if (
      typeof filler !== 'number' ||
      !Number.isInteger(filler) ||
      (filler !== 0 && (filler < TOOL_LIMITS.minFillerAfterMs || filler > TOOL_LIMITS.maxFillerAfterMs))
    ) {
      problem(
        `${path}.filler_after_ms`,
        `must be 0 (no filler) or an integer from ${TOOL_LIMITS.minFillerAfterMs} to ${TOOL_LIMITS.maxFillerAfterMs}`,
      );
    }
  }

  const request = checkRequest(
    raw.request,
    `${path}.request`,
    phase,
    rules,
    problem,
    (where, placeholder) => {
      if (placeholder.namespace === 'args') {
        if (!onCall) problem(where, `{{ args.${placeholder.name} }}: arguments exist only in on_call tools`);
        else if (!declared.has(placeholder.name))
          problem(
            where,
            `{{ args.${placeholder.name} }}: "${placeholder.name}" is not declared in parameters.properties`,
          );
      } else if (placeholder.namespace === 'secrets' && !rules.secrets.has(placeholder.name)) {
        problem(
          where,
          `{{ secrets.${placeholder.name} }}: no secret "${placeholder.name}" in this workspace (POST /v2/secrets)`,
        );
      }
    },
  );
  if (details.length > before || !request) return undefined;
  return {
    name: name as string,
    phase: phase as ToolPhase,
    ...(typeof description === 'string' ? { description } : {}),
    ...(onCall ? { parameters: (parameters as Obj | undefined) ?? { type: 'object', properties: {} } } : {}),
    request,
    timeout_ms: timeout as number,
    ...(onCall
      ? { filler_after_ms: (filler as number | undefined) ?? TOOL_LIMITS.defaultFillerAfterMs }
      : {}),
  };
}

function checkRequest(
  raw: unknown,
  path: string,
  phase: unknown,
  rules: ToolRules,
  problem: (path: string, message: string) => void,
  reference: (path: string, placeholder: Placeholder) => void,
): ToolDefinition['request'] | undefined {
  if (!isObj(raw)) {
    problem(path, 'must be an object {method, url, headers, body}');
    return undefined;
  }
  for (const key of Object.keys(raw))
    if (!REQUEST_FIELDS.has(key)) problem(`${path}.${key}`, 'unknown field');
  const method = raw.method ?? 'POST';
  if (typeof method !== 'string' || !(TOOL_METHODS as readonly string[]).includes(method)) {
    problem(`${path}.method`, `must be one of ${TOOL_METHODS.join(', ')}`);
  } else if (phase === 'post_call' && method !== 'POST') {
    problem(`${path}.method`, 'post_call tools POST the call; method must be POST');
  }
  const template = (value: string, where: string) => {
    const parsed = parseTemplate(value);
    if (!parsed.ok) for (const p of parsed.problems) problem(where, p);
    else for (const part of parsed.parts) if (typeof part !== 'string') reference(where, part);
  };

  const url = raw.url;
  if (typeof url !== 'string' || url.length === 0 || url.length > TOOL_LIMITS.urlChars) {
    problem(`${path}.url`, `must be a URL template of at most ${TOOL_LIMITS.urlChars} characters`);
  } else {
    checkUrl(url, `${path}.url`, rules, problem);
    template(url, `${path}.url`);
  }

  const headers = raw.headers ?? {};
  if (!isObj(headers)) problem(`${path}.headers`, 'must be an object of header names to value templates');
  else {
    const entries = Object.entries(headers);
    if (entries.length > TOOL_LIMITS.headers)
      problem(`${path}.headers`, `at most ${TOOL_LIMITS.headers} headers`);
    for (const [name, value] of entries) {
      const where = `${path}.headers.${name}`;
      if (!HEADER_NAME.test(name)) problem(where, 'is not a valid header name');
      else if (RESERVED_HEADERS.has(name.toLowerCase())) problem(where, 'is set by the platform');
      if (typeof value !== 'string' || value.length > TOOL_LIMITS.headerValueChars) {
        problem(where, `must be a string of at most ${TOOL_LIMITS.headerValueChars} characters`);
      } else template(value, where);
    }
  }

  const body = raw.body;
  if (body !== undefined) {
    if (phase === 'post_call')
      problem(`${path}.body`, 'post_call tools send the call, its transcript and analysis; no body');
    else if (method === 'GET' || method === 'DELETE')
      problem(`${path}.body`, `a ${String(method)} request has no body`);
    else if (JSON.stringify(body).length > TOOL_LIMITS.bodyChars) {
      problem(`${path}.body`, `at most ${TOOL_LIMITS.bodyChars} characters of JSON`);
    } else {
      const walk = (value: unknown, where: string) => {
        if (typeof value === 'string') template(value, where);
        else if (Array.isArray(value)) {
          for (const [i, v] of value.entries()) walk(v, `${where}[${i}]`);
        } else if (isObj(value)) for (const [k, v] of Object.entries(value)) walk(v, `${where}.${k}`);
      };
      walk(body, `${path}.body`);
    }
  }
  if (typeof url !== 'string' || typeof method !== 'string' || !isObj(headers)) return undefined;
  return {
    method: method as ToolMethod,
    url,
    headers: headers as Record<string, string>,
    ...(body !== undefined ? { body } : {}),
  };
}

/** Scheme and host must be literal, HTTPS and public (unless the operator allows private targets). */
function checkUrl(
  url: string,
  path: string,
  rules: ToolRules,
  problem: (path: string, message: string) => void,
): void {
  const origin = /^([a-z][a-z0-9+.-]*):\/\/([^/?#{}]+)(?=$|[/?#])/i.exec(url);
  if (!origin) {
    problem(path, 'must start with https://<host>, written out (no placeholder in the scheme or host)');
    return;
  }
  const scheme = (origin[1] as string).toLowerCase();
  let parsed: URL;
  try {
    parsed = new URL(`${scheme}://${origin[2]}`);
  } catch {
    problem(path, 'has an invalid host');
    return;
  }
  if (parsed.username || parsed.password)
    problem(path, 'must not carry credentials; use a header with a secret');
  if (scheme !== 'https' && !(scheme === 'http' && rules.allowPrivate))
    problem(path, 'must be an https:// URL');
  if (!rules.allowPrivate && isInternalHostName(parsed.hostname)) {
    problem(path, 'points at a loopback or private address; use a public HTTPS endpoint');
  }
}
