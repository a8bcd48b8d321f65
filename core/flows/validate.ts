import {
  AGENT_LIMITS,
  type ExtractionVariable,
  type Flow,
  type FlowEdge,
  type FlowNode,
  NODE_TYPES,
  type NodeType,
  type ToolDefinition,
} from '../agents/types.ts';
import { VARIABLE_NAME } from '../calls/variables.ts';
import type { ErrorDetail } from '../errors.ts';

/** Limits of a flow graph; a graph past them is refused with `invalid_flow`. */
export const FLOW_LIMITS = {
  nodes: 100,
  edges: 400,
  idChars: 64,
  nameChars: 100,
  promptChars: 8000,
  greetingChars: 500,
  conditionChars: 1000,
  extractionVariables: 20,
  extractionPromptChars: 1000,
  nodeTools: 32,
} as const;

/** Edge labels become function names offered to the language model. */
const FUNCTION_NAME = /^[A-Za-z][A-Za-z0-9_]{0,63}$/;
const EXTRACTION_TYPES = ['string', 'number', 'integer', 'boolean'] as const;
const NODE_FIELDS = new Set([
  'name',
  'prompt',
  'greeting',
  'is_start',
  'allow_interrupt',
  'add_global_prompt',
  'extraction_enabled',
  'extraction_variables',
  'tools',
  'silence_reprompt_secs',
  'silence_reprompt_message',
]);

export type FlowValidation = { ok: true; flow: Flow } | { ok: false; details: ErrorDetail[] };

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Checks a graph as a client sent it and returns it with every default filled in, or every problem at once.
 * `tools` are the agent's tools: a node may only offer `on_call` tools of its agent.
 */
export function validateFlow(
  input: unknown,
  tools: readonly Pick<ToolDefinition, 'name' | 'phase'>[],
  base = 'flow',
): FlowValidation {
  const details: ErrorDetail[] = [];
  const problem = (path: string, message: string) => details.push({ path, message });
  if (!isObj(input)) {
    problem(base, 'must be an object with nodes and edges');
    return { ok: false, details };
  }
  for (const key of Object.keys(input)) {
    if (key !== 'nodes' && key !== 'edges') problem(`${base}.${key}`, 'unknown field');
  }
  const rawNodes = input.nodes;
  const rawEdges = input.edges ?? [];
  if (!Array.isArray(rawNodes) || rawNodes.length === 0) {
    problem(`${base}.nodes`, 'must be a non-empty array');
    return { ok: false, details };
  }
  if (rawNodes.length > FLOW_LIMITS.nodes) problem(`${base}.nodes`, `at most ${FLOW_LIMITS.nodes} nodes`);
  if (!Array.isArray(rawEdges)) {
    problem(`${base}.edges`, 'must be an array');
    return { ok: false, details };
  }
  if (rawEdges.length > FLOW_LIMITS.edges) problem(`${base}.edges`, `at most ${FLOW_LIMITS.edges} edges`);

  const onCallTools = new Set(tools.filter((t) => t.phase === 'on_call').map((t) => t.name));
  const nodes: FlowNode[] = [];
  const nodeIndex = new Map<string, number>();
  const rawIndex = new Map<FlowNode, number>();
  rawNodes.forEach((raw, i) => {
    const node = checkNode(raw, `${base}.nodes[${i}]`, onCallTools, problem);
    if (!node) return;
    rawIndex.set(node, i);
    if (nodeIndex.has(node.id)) problem(`${base}.nodes[${i}].id`, `duplicate node id "${node.id}"`);
    else nodeIndex.set(node.id, nodes.length);
    nodes.push(node);
  });

  const starts = nodes.filter((n) => n.type === 'startCall');
  if (starts.length !== 1)
    problem(`${base}.nodes`, `must have exactly one startCall node (found ${starts.length})`);
  if (nodes.filter((n) => n.type === 'globalNode').length > 1) {
    problem(`${base}.nodes`, 'at most one globalNode');
  }

  const edges: FlowEdge[] = [];
  const edgeIds = new Set<string>();
  const labelsBySource = new Map<string, Set<string>>();
  rawEdges.forEach((raw, i) => {
    const path = `${base}.edges[${i}]`;
    const edge = checkEdge(raw, path, problem);
    if (!edge) return;
    if (edgeIds.has(edge.id)) problem(`${path}.id`, `duplicate edge id "${edge.id}"`);
    edgeIds.add(edge.id);
    const source = nodes[nodeIndex.get(edge.source) ?? -1];
    const target = nodes[nodeIndex.get(edge.target) ?? -1];
    if (!source) problem(`${path}.source`, `no node "${edge.source}"`);
    else if (source.type === 'globalNode' || source.type === 'endCall') {
      problem(`${path}.source`, `a ${source.type} node cannot have outgoing edges`);
    }
    if (!target) problem(`${path}.target`, `no node "${edge.target}"`);
    else if (target.type === 'globalNode' || target.type === 'startCall') {
      problem(`${path}.target`, `an edge cannot lead into a ${target.type} node`);
    }
    const labels = labelsBySource.get(edge.source) ?? new Set<string>();
    if (labels.has(edge.data.label)) {
      problem(`${path}.data.label`, `label "${edge.data.label}" is used twice on node "${edge.source}"`);
    }
    labels.add(edge.data.label);
    labelsBySource.set(edge.source, labels);
    edges.push(edge);
  });

  // A tool a node offers and an edge leaving it would be one function name to the model.
  const allLabels = new Set([...labelsBySource.values()].flatMap((labels) => [...labels]));
  for (const node of nodes) {
    const labels = node.type === 'globalNode' ? allLabels : labelsBySource.get(node.id);
    node.data.tools.forEach((name, j) => {
      if (labels?.has(name)) {
        problem(
          `${base}.nodes[${rawIndex.get(node)}].data.tools[${j}]`,
          `"${name}" is also the label of an edge the model is offered on this node; rename one`,
        );
      }
    });
  }

  const start = starts[0];
  if (start && details.length === 0) {
    const reached = reachableFrom(start.id, edges);
    nodes.forEach((node, i) => {
      if (node.type !== 'globalNode' && !reached.has(node.id)) {
        problem(`${base}.nodes[${i}]`, `node "${node.id}" cannot be reached from the startCall node`);
      }
    });
  }
  return details.length > 0 ? { ok: false, details } : { ok: true, flow: { nodes, edges } };
}

function reachableFrom(startId: string, edges: readonly FlowEdge[]): Set<string> {
  const seen = new Set([startId]);
  const queue = [startId];
  for (let id = queue.shift(); id !== undefined; id = queue.shift()) {
    for (const edge of edges) {
      if (edge.source === id && !seen.has(edge.target)) {
        seen.add(edge.target);
        queue.push(edge.target);
      }
    }
  }
  return seen;
}

function checkString(
  value: unknown,
  path: string,
  max: number,
  problem: (p: string, m: string) => void,
  options: { required?: boolean } = {},
): string | undefined {
  if (value === undefined) {
    if (options.required) problem(path, 'is required');
    return undefined;
  }
  if (typeof value !== 'string') {
    problem(path, 'must be a string');
    return undefined;
  }
  if (options.required && value.trim().length === 0) problem(path, 'must not be empty');
  if (value.length > max) problem(path, `must be at most ${max} characters`);
  return value;
}

function checkBoolean(
  value: unknown,
  path: string,
  fallback: boolean,
  problem: (p: string, m: string) => void,
) {
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean') {
    problem(path, 'must be a boolean');
    return fallback;
  }
  return value;
}

/** A node's own re-prompt delay: 0 (off) or within the agent setting's bounds; undefined when not set. */
function checkSilenceSecs(
  value: unknown,
  path: string,
  problem: (p: string, m: string) => void,
): number | undefined {
  if (value === undefined) return undefined;
  const { minSilenceRepromptSecs: min, maxSilenceRepromptSecs: max } = AGENT_LIMITS;
  if (
    typeof value !== 'number' ||
    !Number.isInteger(value) ||
    (value !== 0 && (value < min || value > max))
  ) {
    problem(path, `must be an integer, 0 (off) or ${min}-${max}`);
    return undefined;
  }
  return value;
}

function checkNode(
  raw: unknown,
  path: string,
  onCallTools: ReadonlySet<string>,
  problem: (p: string, m: string) => void,
): FlowNode | undefined {
  if (!isObj(raw)) {
    problem(path, 'must be an object');
    return undefined;
  }
  const id = checkString(raw.id, `${path}.id`, FLOW_LIMITS.idChars, problem, { required: true });
  const type = raw.type;
  if (typeof type !== 'string' || !(NODE_TYPES as readonly string[]).includes(type)) {
    problem(`${path}.type`, `must be one of ${NODE_TYPES.join(', ')}`);
  }
  const data = raw.data === undefined ? {} : raw.data;
  if (!isObj(data)) {
    problem(`${path}.data`, 'must be an object');
    return undefined;
  }
  for (const key of Object.keys(data)) {
    if (!NODE_FIELDS.has(key)) problem(`${path}.data.${key}`, 'unknown field');
  }
  const d = `${path}.data`;
  const name = checkString(data.name, `${d}.name`, FLOW_LIMITS.nameChars, problem) ?? '';
  const prompt = checkString(data.prompt, `${d}.prompt`, FLOW_LIMITS.promptChars, problem) ?? '';
  const greeting = checkString(data.greeting, `${d}.greeting`, FLOW_LIMITS.greetingChars, problem);
  if (greeting !== undefined && type !== 'startCall')
    problem(`${d}.greeting`, 'only a startCall node has a greeting');
  if (data.is_start !== undefined && data.is_start !== (type === 'startCall')) {
    problem(`${d}.is_start`, 'is true on the startCall node and false elsewhere');
  }
  const extractionVariables = checkExtraction(
    data.extraction_variables,
    `${d}.extraction_variables`,
    problem,
  );
  const tools = checkNodeTools(data.tools, `${d}.tools`, onCallTools, problem);
  const silenceSecs = checkSilenceSecs(data.silence_reprompt_secs, `${d}.silence_reprompt_secs`, problem);
  const silenceMessage = checkString(
    data.silence_reprompt_message,
    `${d}.silence_reprompt_message`,
    AGENT_LIMITS.silenceRepromptMessageChars,
    problem,
  );
  if (id === undefined || typeof type !== 'string') return undefined;
  return {
    id,
    type: type as NodeType,
    data: {
      name,
      prompt,
      ...(type === 'startCall' ? { greeting: greeting ?? '' } : {}),
      is_start: type === 'startCall',
      allow_interrupt: checkBoolean(data.allow_interrupt, `${d}.allow_interrupt`, true, problem),
      add_global_prompt: checkBoolean(data.add_global_prompt, `${d}.add_global_prompt`, true, problem),
      extraction_enabled: checkBoolean(data.extraction_enabled, `${d}.extraction_enabled`, false, problem),
      extraction_variables: extractionVariables,
      tools,
      ...(silenceSecs !== undefined ? { silence_reprompt_secs: silenceSecs } : {}),
      ...(silenceMessage !== undefined ? { silence_reprompt_message: silenceMessage } : {}),
    },
  };
}

function checkExtraction(
  raw: unknown,
  path: string,
  problem: (p: string, m: string) => void,
): ExtractionVariable[] {
  if (raw === undefined) return [];
  if (!Array.isArray(raw)) {
    problem(path, 'must be an array');
    return [];
  }
  if (raw.length > FLOW_LIMITS.extractionVariables)
    problem(path, `at most ${FLOW_LIMITS.extractionVariables} items`);
  const out: ExtractionVariable[] = [];
  raw.forEach((item, j) => {
    const p = `${path}[${j}]`;
    if (!isObj(item)) {
      problem(p, 'must be an object {name, type, prompt}');
      return;
    }
    const name = checkString(item.name, `${p}.name`, 64, problem, { required: true });
    if (name !== undefined && !VARIABLE_NAME.test(name)) problem(`${p}.name`, 'must be a variable name');
    const type = item.type ?? 'string';
    if (typeof type !== 'string' || !(EXTRACTION_TYPES as readonly string[]).includes(type)) {
      problem(`${p}.type`, `must be one of ${EXTRACTION_TYPES.join(', ')}`);
    }
    const prompt = checkString(item.prompt, `${p}.prompt`, FLOW_LIMITS.extractionPromptChars, problem) ?? '';
    if (name !== undefined) out.push({ name, type: String(type), prompt });
  });
  return out;
}

function checkNodeTools(
  raw: unknown,
  path: string,
  onCallTools: ReadonlySet<string>,
  problem: (p: string, m: string) => void,
): string[] {
  if (raw === undefined) return [];
  if (!Array.isArray(raw)) {
    problem(path, 'must be an array of tool names');
    return [];
  }
  if (raw.length > FLOW_LIMITS.nodeTools) problem(path, `at most ${FLOW_LIMITS.nodeTools} tools`);
  const out: string[] = [];
  raw.forEach((name, j) => {
    if (typeof name !== 'string') problem(`${path}[${j}]`, 'must be a tool name');
    else if (!onCallTools.has(name))
      problem(`${path}[${j}]`, `"${name}" is not an on_call tool of this agent`);
    else out.push(name);
  });
  return out;
}

function checkEdge(
  raw: unknown,
  path: string,
  problem: (p: string, m: string) => void,
): FlowEdge | undefined {
  if (!isObj(raw)) {
    problem(path, 'must be an object');
    return undefined;
  }
  for (const key of Object.keys(raw)) {
    if (!['id', 'source', 'target', 'data'].includes(key)) problem(`${path}.${key}`, 'unknown field');
  }
  const id = checkString(raw.id, `${path}.id`, FLOW_LIMITS.idChars, problem, { required: true });
  const source = checkString(raw.source, `${path}.source`, FLOW_LIMITS.idChars, problem, { required: true });
  const target = checkString(raw.target, `${path}.target`, FLOW_LIMITS.idChars, problem, { required: true });
  if (!isObj(raw.data)) {
    problem(`${path}.data`, 'must be an object {label, condition}');
    return undefined;
  }
  const label = checkString(raw.data.label, `${path}.data.label`, 64, problem, { required: true });
  if (label !== undefined && label !== '' && !FUNCTION_NAME.test(label)) {
    problem(
      `${path}.data.label`,
      'must be a function name (letters, digits, underscores; starts with a letter)',
    );
  }
  const condition = checkString(
    raw.data.condition,
    `${path}.data.condition`,
    FLOW_LIMITS.conditionChars,
    problem,
    {
      required: true,
    },
  );
  if (id === undefined || source === undefined || target === undefined) return undefined;
  if (label === undefined || condition === undefined) return undefined;
  return { id, source, target, data: { label, condition } };
}
