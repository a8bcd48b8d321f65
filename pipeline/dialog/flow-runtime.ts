import type { AgentSettings, Flow, FlowEdge, FlowNode, ToolDefinition } from '../../core/agents/types.ts';
import type { FunctionSpec, ToolCall } from '../../engines/llm/types.ts';
import { type SilenceSettings, silenceSettings } from '../silence.ts';
import { END_CALL_FUNCTION, endCallFunction } from './end-call.ts';
import { OfferedTools } from './tools.ts';
import type { Dialog, DialogAction, DialogTurnContext } from './types.ts';
import { type CallVariables, substitute } from './variables.ts';

/**
 * Runs a node-based agent: the call starts on the startCall node (its greeting is the opening line); each
 * outgoing edge is offered to the model as a function named by its label and described by its condition; taking
 * one moves to its target. A node with extraction enabled adds its variables as the edge functions' arguments, so
 * they are collected as the call leaves it. The globalNode's prompt is prepended where `add_global_prompt`.
 * On an endCall node the model may only say its closing words and end the call. The on_call tools a node lists
 * (and those the globalNode lists, on every node) are offered beside its edges.
 */
export class FlowRuntime implements Dialog {
  private node: FlowNode;
  private readonly nodes: Map<string, FlowNode>;
  private readonly global: FlowNode | undefined;
  private readonly values: Record<string, unknown> = {};
  private readonly tools: OfferedTools;

  constructor(
    private readonly agent: AgentSettings,
    private readonly flow: Flow,
    private readonly variables: CallVariables,
    tools: readonly ToolDefinition[] = [],
  ) {
    this.tools = new OfferedTools(tools);
    this.nodes = new Map(flow.nodes.map((n) => [n.id, n]));
    this.global = flow.nodes.find((n) => n.type === 'globalNode');
    const start = flow.nodes.find((n) => n.type === 'startCall');
    if (!start) throw new Error('flow has no startCall node');
    this.node = start;
  }

  opening(): string {
    const start = this.flow.nodes.find((n) => n.type === 'startCall');
    return substitute(start?.data.greeting ?? '', this.allVariables());
  }

  turnContext(): DialogTurnContext {
    const data = this.node.data;
    const parts: string[] = [];
    if (this.global && data.add_global_prompt && this.global.data.prompt) parts.push(this.global.data.prompt);
    if (data.prompt) parts.push(data.prompt);
    const functions: FunctionSpec[] = this.outgoing().map((edge) => this.edgeFunction(edge));
    if (this.node.type === 'endCall' || this.agent.end_call.enabled) functions.push(endCallFunction());
    functions.push(...this.tools.functions(this.toolNames(), this.ownNames()));
    return {
      system: substitute(parts.join('\n\n'), this.allVariables()),
      functions,
      allowInterrupt: data.allow_interrupt && this.agent.behavior.interruptions !== 'off',
    };
  }

  onFunctionCall(call: ToolCall): DialogAction {
    if (call.name === END_CALL_FUNCTION && (this.node.type === 'endCall' || this.agent.end_call.enabled)) {
      return {
        type: 'end_call',
        message: substitute(this.agent.end_call.message, this.allVariables()),
        reason: 'assistant-ended-call',
      };
    }
    const edge = this.outgoing().find((e) => e.data.label === call.name);
    const target = edge ? this.nodes.get(edge.target) : undefined;
    if (!edge || !target) {
      const tool = this.tools.action(call, this.toolNames(), this.ownNames());
      return tool ?? { type: 'unknown_function', name: call.name };
    }
    const extracted = this.extract(call.arguments);
    // The whole transition is these two assignments, with no await between them: an interruption can only
    // observe the flow before or after it.
    Object.assign(this.values, extracted);
    const from = this.node.id;
    this.node = target;
    return { type: 'transition', from, to: target.id, label: edge.data.label, extracted };
  }

  extracted(): Readonly<Record<string, unknown>> {
    return { ...this.values };
  }

  currentNode(): string {
    return this.node.id;
  }

  silence(): SilenceSettings {
    return silenceSettings(this.agent, this.node.data);
  }

  /** The functions the flow itself offers on the current node: its edges and end_call. */
  private ownNames(): Set<string> {
    const names = new Set(this.outgoing().map((e) => e.data.label));
    if (this.node.type === 'endCall' || this.agent.end_call.enabled) names.add(END_CALL_FUNCTION);
    return names;
  }

  /** The tools offered on the current node: its own, then the globalNode's. */
  private toolNames(): string[] {
    return [...(this.node.data.tools ?? []), ...(this.global?.data.tools ?? [])];
  }

  private outgoing(): FlowEdge[] {
    return this.flow.edges.filter((e) => e.source === this.node.id);
  }

  private edgeFunction(edge: FlowEdge): FunctionSpec {
    const data = this.node.data;
    const properties: Record<string, unknown> = {};
    if (data.extraction_enabled) {
      for (const v of data.extraction_variables) {
        properties[v.name] = { type: v.type === 'integer' ? 'integer' : v.type, description: v.prompt };
      }
    }
    return {
      name: edge.data.label,
      description: edge.data.condition,
      parameters: { type: 'object', properties, additionalProperties: false },
    };
  }

  /** Only the current node's declared variables are kept, whatever else the model sent. */
  private extract(argumentsJson: string): Record<string, unknown> {
    const data = this.node.data;
    if (!data.extraction_enabled || data.extraction_variables.length === 0) return {};
    let parsed: unknown;
    try {
      parsed = JSON.parse(argumentsJson || '{}');
    } catch {
      return {};
    }
    if (typeof parsed !== 'object' || parsed === null) return {};
    const out: Record<string, unknown> = {};
    for (const v of data.extraction_variables) {
      const value = (parsed as Record<string, unknown>)[v.name];
      if (value !== undefined && value !== null) out[v.name] = value;
    }
    return out;
  }

  private allVariables(): CallVariables {
    const merged: Record<string, string | number | boolean> = { ...this.variables };
    for (const [k, v] of Object.entries(this.values)) {
      if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') merged[k] = v;
    }
    return merged;
  }
}
