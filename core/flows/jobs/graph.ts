/** What a flow job reads off a graph: the call variables it reads, and problems seen without a model. */
import type { Flow } from '../../agents/types.ts';
import type { Finding } from './stored.ts';

const PLACEHOLDER = /\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g;

/** The call variables the graph reads as `{{name}}`, less those its nodes extract during the call. */
export function variablesRead(flow: Flow): string[] {
  const extracted = new Set(flow.nodes.flatMap((n) => n.data.extraction_variables.map((v) => v.name)));
  const names = new Set<string>();
  for (const node of flow.nodes) {
    for (const text of [
      node.data.prompt,
      node.data.greeting ?? '',
      node.data.silence_reprompt_message ?? '',
    ]) {
      for (const m of text.matchAll(PLACEHOLDER))
        if (!extracted.has(m[1] as string)) names.add(m[1] as string);
    }
  }
  return [...names].sort();
}

/** The variables as an agent input schema (JSON Schema of the call's `variables`). */
export function inputSchemaOf(variables: Readonly<Record<string, string>>): Record<string, unknown> {
  const names = Object.keys(variables);
  return {
    type: 'object',
    properties: Object.fromEntries(names.map((n) => [n, { type: variables[n] }])),
    required: names,
    additionalProperties: true,
  };
}

/** A variable's type from its test value; `string` when none was given. */
export function typeOfValue(value: string | number | boolean | undefined): string {
  return typeof value === 'number' ? 'number' : typeof value === 'boolean' ? 'boolean' : 'string';
}

/** Problems of the graph's shape that need no model to see. */
export function structuralFindings(flow: Flow): Finding[] {
  const findings: Finding[] = [];
  if (!flow.nodes.some((n) => n.type === 'endCall')) {
    findings.push({
      severity: 'high',
      node: null,
      problem: 'The flow has no endCall node: no path closes the call.',
      fix: 'Add an endCall node with closing words and an edge to it from the steps where the call is done.',
    });
  }
  for (const node of flow.nodes) {
    if (node.type === 'globalNode' || node.type === 'endCall') continue;
    if (!flow.edges.some((e) => e.source === node.id)) {
      findings.push({
        severity: 'medium',
        node: node.id,
        problem: `Node "${node.id}" has no way out: a call that reaches it can never move on or close.`,
        fix: 'Add an edge from it to the next step or to an endCall node.',
      });
    }
  }
  return findings;
}
