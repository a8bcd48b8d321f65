import { rootCertificates } from 'node:tls';
import { Agent, request } from 'undici';
import type { ToolDefinition } from '../agents/types.ts';
import { type Clock, systemClock } from '../clock.ts';
import { AddressPolicyError, assertPublicHost, guardedLookup } from '../net/address-policy.ts';
import type { ToolRunStatus } from '../store/types.ts';
import { secretsOf } from './definition.ts';
import { renderJsonBody, renderTemplate, type TemplateValues } from './template.ts';

/** The most of a tool's response read; past it the run fails (the rest is never buffered). */
export const TOOL_RESPONSE_LIMIT_BYTES = 1_024 * 1_024;
export const TOOL_USER_AGENT = 'voiceagent-tools/1';

/** Where a run's secret values come from (the workspace's secrets, opened only for the run). */
export interface SecretSource {
  reveal(workspaceId: string, names: readonly string[]): Promise<Record<string, string>>;
}

export interface ToolCallContext {
  workspaceId: string;
  callId: string;
  agentId: string;
  /** The call's destination; '' for browser calls. */
  to: string;
  variables: Record<string, unknown>;
  /** The model's arguments (on_call). */
  args?: Record<string, unknown>;
}

/** One run, as it is recorded and as the dialog sees it. No bodies and no secret values are kept. */
export interface ToolRunOutcome {
  name: string;
  phase: ToolDefinition['phase'];
  status: ToolRunStatus;
  httpStatus: number | null;
  startedAt: number;
  durationMs: number;
  /** The response parsed as JSON when it was JSON (not recorded; the dialog or pre_call reads it). */
  response?: unknown;
  /** Why it failed, in words safe to show the model and operators: never a URL, header or secret. */
  error?: string;
}

export interface ToolRunnerOptions {
  secrets: SecretSource;
  /** Lets tools reach plain HTTP, loopback and private addresses (`ALLOW_PRIVATE_WEBHOOKS`). */
  allowPrivate: boolean;
  /** A CA (PEM) trusted besides the default roots (tests). */
  extraCa?: string;
  clock?: Clock;
}

/**
 * Sends one tool request: the templates rendered with the call's values (each escaped for where it lands), the
 * address guard shared with webhooks (refused before connecting and again at connect time), no redirects
 * followed, at most 1 MB of response read, the tool's own timeout. Never throws: every ending is an outcome.
 */
export class ToolRunner {
  private readonly agent: Agent;
  private readonly clock: Clock;

  constructor(private readonly options: ToolRunnerOptions) {
    this.clock = options.clock ?? systemClock;
    this.agent = new Agent({
      connect: {
        lookup: guardedLookup({ allowPrivate: options.allowPrivate }),
        ...(options.extraCa ? { ca: [...rootCertificates, options.extraCa] } : {}),
      },
    });
  }

  async run(tool: ToolDefinition, context: ToolCallContext, signal?: AbortSignal): Promise<ToolRunOutcome> {
    const startedAt = this.clock.now();
    const started = performance.now();
    const outcome = (
      status: ToolRunStatus,
      httpStatus: number | null,
      extra: Partial<ToolRunOutcome> = {},
    ) => ({
      name: tool.name,
      phase: tool.phase,
      status,
      httpStatus,
      startedAt,
      durationMs: Math.round(performance.now() - started),
      ...extra,
    });
    const timeout = AbortSignal.timeout(tool.timeout_ms);
    try {
      const values: TemplateValues = {
        ...(context.args ? { args: context.args } : {}),
        secrets: await this.options.secrets.reveal(context.workspaceId, secretsOf(tool)),
        variables: Object.fromEntries(
          Object.entries(context.variables).map(([k, v]) => [k, v === null ? '' : String(v)]),
        ),
        call: { id: context.callId, to: context.to },
        agent: { id: context.agentId },
      };
      const url = new URL(renderTemplate(tool.request.url, values, 'url'));
      if (url.protocol !== 'https:' && !(url.protocol === 'http:' && this.options.allowPrivate)) {
        return outcome('failed', null, { error: 'the tool URL is not https' });
      }
      await assertPublicHost(url.hostname, { allowPrivate: this.options.allowPrivate });
      const headers: Record<string, string> = { 'user-agent': TOOL_USER_AGENT, accept: 'application/json' };
      for (const [name, template] of Object.entries(tool.request.headers)) {
        headers[name.toLowerCase()] = renderTemplate(template, values, 'header');
      }
      let body: string | undefined;
      if (tool.request.body !== undefined) {
        body =
          typeof tool.request.body === 'string'
            ? renderTemplate(tool.request.body, values, 'json_string')
            : JSON.stringify(renderJsonBody(tool.request.body, values));
        headers['content-type'] ??= 'application/json';
      }
      const response = await request(url, {
        method: tool.request.method,
        dispatcher: this.agent,
        headers,
        ...(body !== undefined ? { body } : {}),
        signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
      });
      const text = await readLimited(response.body, TOOL_RESPONSE_LIMIT_BYTES);
      const status = response.statusCode;
      if (text === undefined) {
        return outcome('failed', status, {
          error: `the response was larger than ${TOOL_RESPONSE_LIMIT_BYTES} bytes`,
        });
      }
      const parsed = parseJson(text);
      if (status < 200 || status > 299) {
        // 3xx included: redirects are not followed.
        return outcome('failed', status, {
          error: `the tool answered HTTP ${status}`,
          response: parsed ?? text.slice(0, 500),
        });
      }
      return outcome('succeeded', status, { response: parsed ?? text });
    } catch (error) {
      if (timeout.aborted)
        return outcome('timeout', null, { error: `no answer within ${tool.timeout_ms} ms` });
      if (signal?.aborted)
        return outcome('failed', null, { error: 'the call ended before the tool answered' });
      return outcome('failed', null, { error: describe(error) });
    }
  }

  close(): Promise<void> {
    return this.agent.close();
  }
}

async function readLimited(body: AsyncIterable<Buffer> & { destroy(): unknown }, limit: number) {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > limit) {
      body.destroy();
      return undefined;
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Error words that name no URL, header or value. */
function describe(error: unknown): string {
  if (error instanceof AddressPolicyError) return 'refused: the tool host resolves to an internal address';
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'EADDRNOTALLOWED') return 'refused: the tool host resolves to an internal address';
  if (code === 'ENOTFOUND') return 'the tool host does not resolve';
  if (code === 'ECONNREFUSED') return 'the tool host refused the connection';
  if (error instanceof TypeError && /Invalid URL/i.test(error.message))
    return 'the rendered tool URL is not a URL';
  return code ? `the request failed (${code})` : 'the request failed';
}
