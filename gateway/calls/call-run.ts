import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { storedSettings } from '../../core/agents/stored.ts';
import type { AgentSettings } from '../../core/agents/types.ts';
import { analyzeCall } from '../../core/calls/analysis.ts';
import type { CallArtifacts, TranscriptEntry } from '../../core/calls/artifacts.ts';
import type { LiveControl } from '../../core/calls/control.ts';
import type { CallLifecycle } from '../../core/calls/lifecycle.ts';
import type { LiveCallEvent } from '../../core/calls/live-events.ts';
import type { LiveCallSlots } from '../../core/calls/live-slots.ts';
import { callObject } from '../../core/calls/representation.ts';
import { type EndTrigger, isTerminal } from '../../core/calls/state-machine.ts';
import type { Clock } from '../../core/clock.ts';
import type { CallRecord, Store, ToolRunRecord } from '../../core/store/types.ts';
import { retryWhileStoreUnavailable } from '../../core/store/unavailable.ts';
import { callTools, onCallToolsOf } from '../../core/tools/on-call.ts';
import type { ToolRunner } from '../../core/tools/runner.ts';
import { toolCallEntry } from '../../core/tools/tool-calls.ts';
import { callKnowledge } from '../../core/v1/knowledge.ts';
import type { LatencyLabels, PipelineMetrics } from '../../pipeline/metrics.ts';
import { CallRecorder } from '../../pipeline/recorder.ts';
import {
  CallSession,
  type SessionEndReason,
  type SessionEngines,
  type SessionEvent,
  type SessionOutcome,
} from '../../pipeline/session.ts';
import type { TranscriptTurn } from '../../pipeline/transcript.ts';
import type { StreamContext } from '../media-handler.ts';
import { browserEventOf, callStatusEvent } from '../web/events.ts';

export interface CallRunDeps {
  store: Store;
  lifecycle: CallLifecycle;
  slots: LiveCallSlots;
  artifacts: CallArtifacts;
  /** Without an STT, calls take the caller's turns by voice activity alone. */
  engines: SessionEngines;
  /** Names of the engines, for the latency histograms' labels. */
  engineNames: Omit<LatencyLabels, 'language'>;
  metrics?: PipelineMetrics;
  /** Where recordings are written while calls run (same file system as the artifacts, so adoption is a rename). */
  partialDir: string;
  /** This gateway node's id, kept on the call for recovery. */
  nodeId: string;
  /** Where web calls' live events go (the coordinator, to the API node streaming them). */
  liveEvents?: (callId: string, event: LiveCallEvent) => void;
  /** Sends on_call tools' requests; without it they are not offered. */
  tools?: Pick<ToolRunner, 'run'>;
  clock?: Clock;
}

/**
 * The longest the post-call analysis may hold back settlement (and with it the terminal event, which carries
 * the analysis): a hosted model writes it in 2-8 s; past this the call settles with a failed analysis.
 */
const ANALYSIS_TIMEOUT_MS = 20_000;
/**
 * How long a call that ended while the database was away keeps trying to record its end (its slot kept
 * meanwhile, so recovery leaves it alone). Outages of seconds lose nothing; past this, recovery ends the call.
 */
const SETTLE_RETRY_MS = 300_000;
/** How long a call answered while the database is away waits for it before the stream is refused. */
const ANSWER_RETRY_MS = 30_000;

const TRIGGER_OF_SESSION_END: Record<SessionEndReason, EndTrigger> = {
  'assistant-ended-call': 'assistant_hangup',
  'customer-ended-call': 'customer_hangup',
  'exceeded-max-duration': 'max_duration',
  voicemail: 'voicemail',
  'pipeline-error': 'pipeline_error',
  // The agent hung up: the call completed, with the reason it gave.
  'silence-timed-out': 'assistant_hangup',
};

function transcriptEntry(turn: TranscriptTurn): TranscriptEntry {
  return {
    speaker: turn.speaker,
    text: turn.text,
    start_ms: Math.round(turn.startMs),
    end_ms: Math.round(turn.endMs),
    interrupted: turn.interrupted,
    ...(turn.recognized !== undefined ? { recognized: turn.recognized } : {}),
    ...(turn.node !== undefined ? { node: turn.node } : {}),
  };
}

/**
 * One call's media on this gateway, from the stream's start to its settlement: answers the call (dialing ->
 * in_progress, `call.started`), runs the agent's CallSession on the stream, keeps the live-call slot's lease
 * while it runs, and when the media ends keeps the transcript and recording, then settles the call by how the
 * session ended (billing and the terminal event in one transaction).
 */
export class CallRun {
  private readonly renewTimer: NodeJS.Timeout;
  private settled: Promise<void> | undefined;
  /** This node ended the call because it is shutting down (settles as `node-shutdown`). */
  private shuttingDown = false;
  /** Set once the call is settled and its slot is being freed: renewals stop re-asserting it. */
  private releasing = false;

  private constructor(
    private readonly deps: CallRunDeps,
    private readonly ctx: StreamContext,
    readonly call: CallRecord,
    /** The agent revision the call runs, as the session was given it. */
    private readonly agent: AgentSettings,
    readonly session: CallSession,
    private readonly recordingFile: string,
  ) {
    this.renewTimer = setInterval(() => this.keepSlot(), deps.slots.renewEveryMs);
    this.renewTimer.unref();
    void session.finished.then((outcome) => this.settle(outcome));
  }

  /**
   * Answers the call behind a verified stream and starts its session; undefined when the call is not one this
   * stream may answer (unknown, not dialing: aborted or ended meanwhile) or its agent is gone.
   */
  /**
   * `mayAnswer` is asked once the call is `dialing`, just before it is answered here; false: it is not (the
   * asker has ended it).
   */
  static async begin(
    deps: CallRunDeps,
    ctx: StreamContext,
    mayAnswer?: (call: CallRecord) => Promise<boolean>,
  ): Promise<CallRun | undefined> {
    // A call answered while the database is away waits for it a while (the caller hears silence), then goes on.
    const answering = <T>(run: () => Promise<T>) =>
      retryWhileStoreUnavailable(run, {
        giveUpAfterMs: ANSWER_RETRY_MS,
        onRetry: (err) =>
          ctx.logger.warn({ err }, 'database unreachable: answering the call once it is back'),
      });
    const found = await answering(() => waitUntilDialing(deps.store, ctx));
    if (!found) return undefined;
    if (mayAnswer && !(await mayAnswer(found))) return undefined;
    const revision = await answering(() =>
      deps.store.agents.getRevision(found.workspaceId, found.agentId, found.agentRevision),
    );
    if (!revision) {
      await deps.lifecycle.settle(found.workspaceId, found.id, 'pipeline_error', {
        error: 'the agent was deleted before the call was answered',
      });
      return undefined;
    }
    // Everything that waits comes before the answer: once the call is in_progress, it runs on this node at once
    // (a drain that starts then counts it).
    await mkdir(deps.partialDir, { recursive: true });
    const call = await answering(() =>
      deps.lifecycle.markAnswered(found.workspaceId, found.id, { gatewayNode: deps.nodeId }),
    );
    if (!call) return undefined;
    const engines = deps.engines;
    const live = call.channel === 'web' ? deps.liveEvents : undefined;
    const publish = (event: LiveCallEvent) => {
      live?.(call.id, event);
      ctx.output.sendEvent?.(browserEventOf(event));
    };
    publish({ type: 'call.status', call: callObject(call) });
    const stored = storedSettings(revision.content);
    const agent: AgentSettings = { ...stored, max_duration_secs: call.maxDurationSecs };
    const recordingFile = path.join(deps.partialDir, `${call.id}.wav`);
    // A v1 assistant whose knowledge base does not fit in its prompt: the rest is retrieved per caller turn.
    const knowledge = await callKnowledge(
      deps.store,
      call.workspaceId,
      call.agentId,
      agent.system_prompt,
    ).catch((err: unknown) => {
      ctx.logger.error({ err }, 'could not load the knowledge base: the call goes on with its prompt alone');
      return undefined;
    });
    if (knowledge) ctx.logger.debug({ passages: knowledge.passages }, 'knowledge base retrieved per turn');
    const tools = deps.tools
      ? callTools(
          deps.tools,
          {
            workspaceId: call.workspaceId,
            callId: call.id,
            agentId: call.agentId,
            to: call.toNumber ?? '',
            variables: call.variables,
          },
          deps.clock,
        )
      : undefined;
    const session = new CallSession({
      agent,
      variables: withoutNulls(call.variables),
      engines,
      output: ctx.output,
      recorder: new CallRecorder(recordingFile),
      ...(tools ? { tools } : {}),
      ...(knowledge ? { knowledge } : {}),
      onEvent: (event) => {
        logEvent(ctx, event);
        if (event.type === 'opt_out') {
          void listOptOut(deps.store, call).then(
            (listed) =>
              ctx.logger.info(
                { listed },
                'the caller asked not to be called again: the number is on the do-not-call list',
              ),
            (err: unknown) => ctx.logger.error({ err }, 'could not list an opted-out number'),
          );
        }
        if (event.type === 'tool_call') {
          // Kept before it is published, so a client told of the run finds it on the call.
          void keepToolRun(deps.store, call, event.outcome).then(
            () => publish({ type: 'tool.call', ...toolCallEntry(event.outcome) }),
            (err: unknown) =>
              ctx.logger.error({ err, tool: event.outcome.name }, 'could not record a tool run'),
          );
          return;
        }
        for (const out of liveEventsOf(event)) publish(out);
      },
      onSpeculation: (outcome, reason) => deps.metrics?.speculation(outcome, reason, deps.engineNames.llm),
      onLatency: (latency, _account, turn) =>
        deps.metrics?.observe(latency, {
          ...deps.engineNames,
          // A turn without words waited on no STT: its latency is not the engine's.
          ...(turn.recognized ? {} : { stt: 'none' }),
          language: agent.voice.language,
        }),
    });
    const onCall = onCallToolsOf(agent).map((t) => t.name);
    if (onCall.length > 0 && !(tools && engines.llm.capabilities.choosesTools)) {
      // pre_call and post_call tools run whatever the dialog engine; only a language model chooses on_call ones.
      ctx.logger.info(
        { tools: onCall, llm: engines.llm.provider },
        tools
          ? 'on_call tools are not offered: the scripted dialog engine cannot choose tools'
          : 'on_call tools are not offered: this gateway runs no tools',
      );
    }
    const run = new CallRun(deps, ctx, call, agent, session, recordingFile);
    session.start();
    return run;
  }

  /** The call was aborted elsewhere: end the media; settlement finds the call already ended. */
  hangUp(): void {
    this.ctx.output.end('aborted');
  }

  /** Resolves once the call's media ended and it is settled (or settling failed and was logged). */
  ended(): Promise<void> {
    return this.session.finished.then(() => this.settled).catch(() => {});
  }

  /**
   * This node is shutting down and its drain window ran out: ends the media now and settles the call `failed`
   * with `node-shutdown` (free), unless it already ended by its own rules. Resolves once the call is settled:
   * true when the shutdown ended it.
   */
  async shutDown(): Promise<boolean> {
    if (this.settled) {
      await this.ended();
      return false;
    }
    this.shuttingDown = true;
    this.ctx.output.end('node_shutdown');
    this.session.stopped();
    await this.ended();
    return true;
  }

  /** Retries a write while the database is away (see SETTLE_RETRY_MS), saying so once. */
  private whileStoreAway<T>(run: () => Promise<T>): Promise<T> {
    return retryWhileStoreUnavailable(run, {
      giveUpAfterMs: SETTLE_RETRY_MS,
      onRetry: (err) => this.ctx.logger.warn({ err }, 'database unreachable: retrying until it is back'),
    });
  }

  /**
   * Renews the call's slot, re-asserting it when the coordinator lost it, until settlement frees it; and ends
   * the media of a call that ended elsewhere (an abort whose hang-up command could not reach this node, as while
   * Redis is away).
   */
  private keepSlot(): void {
    const { deps, call, ctx } = this;
    if (this.releasing) return;
    if (!this.settled) {
      deps.store.calls.get(call.workspaceId, call.id).then(
        (current) => {
          if (current && isTerminal(current.status) && !this.settled) this.hangUp();
        },
        () => {},
      );
    }
    deps.slots.keep(call.workspaceId, call.id).then(
      async (renewed) => {
        if (renewed) return;
        // The renewal crossed settlement's release: the slot it put back belongs to no live call.
        if (this.releasing) await deps.slots.release(call.workspaceId, call.id);
        else ctx.logger.warn('re-asserted the live-call slot the coordinator had lost');
      },
      () => {},
    );
  }

  private settle(outcome: SessionOutcome): Promise<void> {
    this.settled ??= this.keepAndSettle(outcome).finally(() => clearInterval(this.renewTimer));
    return this.settled;
  }

  private async keepAndSettle(outcome: SessionOutcome): Promise<void> {
    const { deps, call } = this;
    const { workspaceId, id } = call;
    try {
      const turns = outcome.transcript.map(transcriptEntry);
      await deps.artifacts.saveTranscript(workspaceId, id, turns);
      await deps.artifacts.adoptRecording(workspaceId, id, this.recordingFile);
      await this.whileStoreAway(() =>
        deps.store.calls.setArtifacts(workspaceId, id, {
          transcriptAvailable: true,
          recordingAvailable: true,
        }),
      );
      const latency = outcome.latency;
      if (latency) await this.whileStoreAway(() => deps.store.calls.setLatency(workspaceId, id, latency));
    } catch (error) {
      this.ctx.logger.error({ err: error }, 'could not keep the transcript or recording');
      await rm(this.recordingFile, { force: true }).catch(() => {});
    }
    // A node on its way down does not wait up to the analysis timeout for a call that failed anyway.
    if (this.agent.analysis.enabled && !this.shuttingDown) await this.keepAnalysis(outcome);
    const trigger = this.shuttingDown ? 'node_shutdown' : TRIGGER_OF_SESSION_END[outcome.reason];
    try {
      // One transaction that only the first settlement wins, so a retry after a lost answer cannot bill twice.
      await this.whileStoreAway(() =>
        deps.lifecycle.settle(workspaceId, id, trigger, {
          // A shutdown names itself; otherwise the session's own reason (silence-timed-out shares a trigger).
          ...(this.shuttingDown ? {} : { endedReason: outcome.reason }),
          endedAt: (call.answeredAt ?? Date.now()) + outcome.durationMs,
        }),
      );
    } catch (error) {
      // Recovery settles it once the slot's lease has run out.
      this.ctx.logger.error({ err: error }, 'could not settle the call');
      return;
    }
    this.releasing = true;
    clearInterval(this.renewTimer);
    await deps.slots.release(workspaceId, id).catch(() => {});
    if (call.channel === 'web' && deps.liveEvents) {
      const final = await deps.store.calls.get(workspaceId, id);
      if (final) deps.liveEvents(id, { type: 'call.status', call: callObject(final) });
    }
  }

  /** Writes the post-call analysis before settlement, so the terminal event's call object carries it. */
  private async keepAnalysis(outcome: SessionOutcome): Promise<void> {
    const { deps, call } = this;
    try {
      const analysis = await analyzeCall({
        llm: deps.engines.llm,
        settings: this.agent,
        transcript: outcome.transcript.map(transcriptEntry),
        extracted: outcome.extracted,
        timeoutMs: ANALYSIS_TIMEOUT_MS,
      });
      if (analysis.status === 'failed') {
        this.ctx.logger.warn({ model: analysis.model, error: analysis.error }, 'post-call analysis failed');
      }
      await deps.store.calls.setAnalysis(call.workspaceId, call.id, { ...analysis });
    } catch (error) {
      this.ctx.logger.error({ err: error }, 'could not keep the post-call analysis');
    }
  }

  /** Live control of a web call. */
  control(control: LiveControl): void {
    const { session } = this;
    switch (control.action) {
      case 'say':
        session.say(control.text);
        break;
      case 'end_call':
        session.hangUp(control.message);
        break;
      case 'mute':
        session.setMuted(true);
        break;
      case 'unmute':
        session.setMuted(false);
        break;
      case 'add_message':
        session.addMessage({ role: control.role, content: control.content });
        break;
    }
  }
}

/** A session event as the live event stream shows it; decisions without the words behind them twice. */
function liveEventsOf(event: SessionEvent): LiveCallEvent[] {
  switch (event.type) {
    case 'transcript':
      return [{ type: event.final ? 'transcript.final' : 'transcript.partial', text: event.text }];
    case 'caller_turn':
      return [{ type: 'caller.turn', text: event.text, recognized: event.recognized, at_ms: event.atMs }];
    case 'agent_turn':
      return [{ type: 'agent.turn', turn_id: event.turnId, text: event.text, at_ms: event.atMs }];
    case 'interruption':
      return [
        {
          type: 'interruption',
          decision: event.event.type,
          reason: event.event.reason,
          at_ms: event.event.atMs,
        },
      ];
    case 'reanswer':
      // The follow-up of an interruption decision: the reply cut off by wordless speech is given again.
      return [{ type: 'interruption', decision: 'reanswered', reason: event.reason, at_ms: event.atMs }];
    case 'latency':
      return [
        {
          type: 'latency',
          turn_id: event.turnId,
          latency: event.latency,
          recognized: event.recognized,
        },
      ];
    default:
      return [];
  }
}

function keepToolRun(store: Store, call: CallRecord, outcome: ToolRunRecord): Promise<void> {
  return store.toolRuns.record(call.workspaceId, call.id, {
    name: outcome.name,
    phase: outcome.phase,
    status: outcome.status,
    httpStatus: outcome.httpStatus,
    startedAt: outcome.startedAt,
    durationMs: outcome.durationMs,
  });
}

/** How often a browser that joined a queued web call looks whether its call has left the queue. */
const QUEUED_POLL_MS = 250;

/**
 * The call behind a stream, once it is `dialing` (ringing, or for a web call: given its live slot). A browser
 * may join a web call that still waits in the queue behind the workspace's live calls: it waits here, its
 * stream open, until the dialer lets the call go. Undefined when the call cannot be answered.
 */
async function waitUntilDialing(store: Store, ctx: StreamContext): Promise<CallRecord | undefined> {
  for (let polls = 0; ; polls++) {
    const call = await store.calls.findById(ctx.callId);
    if (call?.status === 'dialing') return call;
    if (call?.status !== 'queued' || call.channel !== 'web' || ctx.signal.aborted) return undefined;
    if (polls === 0) ctx.output.sendEvent?.(callStatusEvent(call));
    await sleep(QUEUED_POLL_MS);
  }
}

/** Lists the caller's number (the callee of an outbound call) as opted out; false for a call without one. */
async function listOptOut(store: Store, call: CallRecord): Promise<boolean> {
  const number = call.direction === 'inbound' ? call.fromNumber : call.toNumber;
  if (call.channel !== 'phone' || !number) return false;
  await store.dnc.add(call.workspaceId, [number], { reason: 'opt_out', source: 'opt_out', callId: call.id });
  return true;
}

/** Variables are a flat map; a null value substitutes as nothing. */
function withoutNulls(variables: CallRecord['variables']): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const [key, value] of Object.entries(variables)) if (value !== null) out[key] = value;
  return out;
}

function logEvent(ctx: StreamContext, event: SessionEvent): void {
  // Caller words are personal data: the log keeps decisions and timings, not what was said.
  switch (event.type) {
    case 'interruption': {
      const { evidence, ...decision } = event.event;
      ctx.logger.info(
        { decision, speech_ms: evidence.speechMs, words: evidence.words.length },
        'interruption decision',
      );
      break;
    }
    case 'transition':
      ctx.logger.info({ from: event.from, to: event.to, label: event.label }, 'flow transition');
      break;
    case 'error':
      ctx.logger.warn({ stage: event.stage, error: event.message }, 'engine failure');
      break;
    case 'reanswer':
      ctx.logger.info({ turn_id: event.turnId, at_ms: event.atMs, reason: event.reason }, 'answering again');
      break;
    case 'voicemail_detected':
      ctx.logger.info({ action: event.action, at_ms: event.atMs }, 'voicemail detected');
      break;
    case 'silence':
      ctx.logger.info(
        { action: event.action, at_ms: event.atMs, silent_ms: event.silentMs },
        event.action === 'reprompt' ? 'caller silent: re-prompting' : 'caller silent: ending the call',
      );
      break;
    case 'latency':
      ctx.logger.debug({ latency: event.latency, recognized: event.recognized }, 'turn latency');
      break;
    case 'tool_call': {
      // The error words name no URL, header or value (core/tools/runner.ts); arguments and bodies stay out.
      const { name, status, httpStatus, durationMs, error } = event.outcome;
      ctx.logger.info(
        { tool: name, status, http_status: httpStatus, duration_ms: durationMs, error, at_ms: event.atMs },
        'on_call tool run',
      );
      break;
    }
    case 'turn_taking_by_voice':
      ctx.logger.info(
        { at_ms: event.atMs, reason: event.reason },
        'caller turns taken by voice activity alone, without words',
      );
      break;
    case 'caller_turn':
      if (!event.recognized) ctx.logger.info({ at_ms: event.atMs }, 'caller turn without recognised words');
      break;
    default:
      break;
  }
}
