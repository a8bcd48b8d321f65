import type { ToolDefinition } from '../../core/agents/types.ts';
import { toolFunction } from '../../core/tools/on-call.ts';
import type { FunctionSpec, ToolCall } from '../../engines/llm/types.ts';
import type { DialogAction } from './types.ts';

/**
 * The on_call tools a dialog offers at one moment: the agent's (single prompt) or the ones the current flow
 * node and the global node list. A name the dialog already offers (an edge, `end_call`) keeps its meaning: the
 * tool of that name is not offered there.
 */
export class OfferedTools {
  private readonly byName: ReadonlyMap<string, ToolDefinition>;

  constructor(tools: readonly ToolDefinition[]) {
    this.byName = new Map(tools.map((t) => [t.name, t]));
  }

  /** The functions for `names` (all tools when undefined), leaving out names in `taken`. */
  functions(names: readonly string[] | undefined, taken: ReadonlySet<string>): FunctionSpec[] {
    return this.pick(names, taken).map(toolFunction);
  }

  /** The action for a call of one of the offered tools; undefined when `call` names none. */
  action(
    call: ToolCall,
    names: readonly string[] | undefined,
    taken: ReadonlySet<string>,
  ): DialogAction | undefined {
    const tool = this.pick(names, taken).find((t) => t.name === call.name);
    return tool ? { type: 'tool', tool, call } : undefined;
  }

  private pick(names: readonly string[] | undefined, taken: ReadonlySet<string>): ToolDefinition[] {
    const wanted = names === undefined ? [...this.byName.keys()] : [...new Set(names)];
    return wanted.flatMap((name) => {
      const tool = this.byName.get(name);
      return tool && !taken.has(name) ? [tool] : [];
    });
  }
}
