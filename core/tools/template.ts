/**
 * Tool templates: text with `{{ namespace.name }}` placeholders. Namespaces: `args` (the model's arguments of an
 * on_call tool), `secrets` (the workspace's secrets), `variables` (the call's variables), `call` (`id`, `to`)
 * and `agent` (`id`). A value is escaped for where it lands: a URL component, a header value or a JSON string.
 */

export const TEMPLATE_NAMESPACES = ['args', 'secrets', 'variables', 'call', 'agent'] as const;
export type TemplateNamespace = (typeof TEMPLATE_NAMESPACES)[number];

export interface Placeholder {
  namespace: TemplateNamespace;
  name: string;
}

export type TemplatePart = string | Placeholder;

/** Where a rendered value lands, which decides its escaping. */
export type Landing = 'url' | 'header' | 'json_string';

const PLACEHOLDER = /\{\{\s*([^{}]*?)\s*\}\}/g;
const REFERENCE = /^([a-z_]+)\.([A-Za-z_][A-Za-z0-9_]{0,63})$/;
const FIXED_NAMES: Partial<Record<TemplateNamespace, readonly string[]>> = {
  call: ['id', 'to'],
  agent: ['id'],
};

export type ParsedTemplate = { ok: true; parts: TemplatePart[] } | { ok: false; problems: string[] };

/** Splits a template into literal text and placeholders, or lists what is wrong with it. */
export function parseTemplate(template: string): ParsedTemplate {
  const parts: TemplatePart[] = [];
  const problems: string[] = [];
  let last = 0;
  for (const match of template.matchAll(PLACEHOLDER)) {
    const index = match.index ?? 0;
    if (index > last) parts.push(template.slice(last, index));
    last = index + match[0].length;
    const reference = REFERENCE.exec(match[1] ?? '');
    const namespace = reference?.[1] as TemplateNamespace | undefined;
    const name = reference?.[2];
    if (!namespace || !name || !(TEMPLATE_NAMESPACES as readonly string[]).includes(namespace)) {
      problems.push(
        `"${match[0]}" is not a placeholder: use {{ args.<name> }}, {{ secrets.<name> }}, {{ variables.<name> }}, {{ call.id }}, {{ call.to }} or {{ agent.id }}`,
      );
      continue;
    }
    const fixed = FIXED_NAMES[namespace];
    if (fixed && !fixed.includes(name)) {
      problems.push(
        `"${match[0]}": ${namespace} has only ${fixed.map((f) => `${namespace}.${f}`).join(', ')}`,
      );
      continue;
    }
    parts.push({ namespace, name });
  }
  if (last < template.length) parts.push(template.slice(last));
  const rest = parts.filter((p): p is string => typeof p === 'string').join('');
  if (rest.includes('{{') || rest.includes('}}')) problems.push('has an unclosed or nested "{{"');
  return problems.length > 0 ? { ok: false, problems } : { ok: true, parts };
}

/** The placeholders of a template that parses; none otherwise. */
export function placeholdersOf(template: string): Placeholder[] {
  const parsed = parseTemplate(template);
  return parsed.ok ? parsed.parts.filter((p): p is Placeholder => typeof p !== 'string') : [];
}

/** What the placeholders of one run resolve to. */
export interface TemplateValues {
  args?: Record<string, unknown>;
  secrets?: Record<string, string>;
  variables?: Record<string, string>;
  call: { id: string; to: string };
  agent: { id: string };
}

export function placeholderValue(values: TemplateValues, placeholder: Placeholder): unknown {
  const source = values[placeholder.namespace] as Record<string, unknown> | undefined;
  return source && Object.hasOwn(source, placeholder.name) ? source[placeholder.name] : undefined;
}

/** Renders a template that parsed; a missing value renders empty. */
export function renderTemplate(template: string, values: TemplateValues, landing: Landing): string {
  const parsed = parseTemplate(template);
  if (!parsed.ok) throw new Error(`template does not parse: ${parsed.problems.join('; ')}`);
  return parsed.parts
    .map((part) =>
      typeof part === 'string' ? part : escapeFor(landing, textOf(placeholderValue(values, part))),
    )
    .join('');
}

/**
 * Renders a JSON body: every string in it is a template. A string that is exactly one placeholder takes the
 * value itself (so a number argument stays a number); other strings get text, escaped as a JSON string.
 */
export function renderJsonBody(body: unknown, values: TemplateValues): unknown {
  if (typeof body === 'string') {
    const parsed = parseTemplate(body);
    if (parsed.ok && parsed.parts.length === 1 && typeof parsed.parts[0] !== 'string') {
      const value = placeholderValue(values, parsed.parts[0] as Placeholder);
      return value === undefined ? null : value;
    }
    // Escaping as a JSON string happens once, when the whole body is serialised.
    return parsed.ok
      ? parsed.parts.map((p) => (typeof p === 'string' ? p : textOf(placeholderValue(values, p)))).join('')
      : body;
  }
  if (Array.isArray(body)) return body.map((item) => renderJsonBody(item, values));
  if (body !== null && typeof body === 'object') {
    return Object.fromEntries(Object.entries(body).map(([k, v]) => [k, renderJsonBody(v, values)]));
  }
  return body;
}

function textOf(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value;
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}

export function escapeFor(landing: Landing, text: string): string {
  switch (landing) {
    case 'url':
      return encodeURIComponent(text);
    case 'header':
      // A header value cannot carry line breaks or other control characters (header injection).
      // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is removed
      return text.replace(/[\u0000-\u001f\u007f]/g, ' ');
    case 'json_string':
      return JSON.stringify(text).slice(1, -1);
  }
}
