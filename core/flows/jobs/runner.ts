/**
 * Runs one flow test job, step by step, writing its state after every model answer, so a worker that dies
 * leaves the job where another worker resumes it. Stages: writing_scenarios -> simulating -> reviewing ->
 * revising, then (with `verify`) verifying -> reviewing -> revising while revisions remain, and done.
 */
import type { Logger } from 'pino';
import type { ChatMessage } from '../../../engines/llm/types.ts';
import { storedSettings } from '../../agents/stored.ts';
import type { AgentSettings, Flow } from '../../agents/types.ts';
import type { Store } from '../../store/types.ts';
import { validateFlow } from '../validate.ts';
import { callersIn, changesIn, findingsIn } from './answers.ts';
import { type EndStatus, endJob } from './ending.ts';
import { structuralFindings, typeOfValue, variablesRead } from './graph.ts';
import { type Answer, ask, type FlowModelSet, type HostedModel, jsonObjectIn } from './models.ts';
import { costPaise, hostedMicroPaise } from './pricing.ts';
import {
  CALLER_PROMPT,
  dataMessage,
  REPAIR_PROMPT,
  REVIEW_PROMPT,
  REVISE_PROMPT,
  SCENARIO_PROMPT,
} from './prompts.ts';
import { callReplays, exampleReplays, simulationAgent } from './scenarios.ts';
import type { Chat, SimulateCall } from './simulation.ts';
import {
  DEFAULT_FLOW_JOB_MODEL,
  type Finding,
  type JobInput,
  type JobState,
  jobJson,
  type Review,
  type RevisionOutcome,
  type Scenario,
} from './stored.ts';

export interface RunnerDeps {
  store: Store;
  models: FlowModelSet;
  simulate: SimulateCall;
  maxTurns: number;
  leaseMs: number;
  /** Logs carry job ids and outcomes only, never what the job holds. */
  logger: Logger;
}

/** The job stopped being this worker's to run: canceled, or its claim lapsed and another took it. */
class JobLost extends Error {
  override name = 'JobLost';
}

/** A reason the job fails with, as `failure_reason`. */
class JobFailure extends Error {
  override name = 'JobFailure';
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** Revisions a job makes at most: `rounds`, and one without `verify`. */
export function revisionsAllowed(input: JobInput): number {
  return input.verify ? input.rounds : Math.min(1, input.rounds);
}

/** The job's first state, written with it. */
export function initialState(input: JobInput, live: string): JobState {
  return {
    stage: 'writing_scenarios',
    round: 1,
    rounds_max: input.verify ? 1 + input.rounds : 1,
    scenarios: null,
    flow: input.flow,
    revision: 1,
    tests: [],
    tests_total: input.simulate,
    review: null,
    rounds_finished: [],
    first_review: null,
    last_review: null,
    revisions_made: 0,
    usage: {
      simulated_input: 0,
      simulated_output: 0,
      hosted_input: 0,
      hosted_output: 0,
      hosted_micro_paise: 0,
    },
    simulation: { model: live, fallback: false },
    result: null,
    failure: null,
    charge: null,
  };
}

export class FlowJobRun {
  private state: JobState;
  private settings: AgentSettings | undefined;

  constructor(
    private readonly deps: RunnerDeps,
    private readonly job: { id: string; workspaceId: string; input: JobInput; state: JobState },
    private readonly owner: string,
    private readonly signal: AbortSignal,
  ) {
    this.state = job.state;
  }

  /** Runs the job to its end; 'lost' when it stopped being ours (canceled, or taken over). */
  async run(): Promise<'ended' | 'lost'> {
    try {
      while (this.state.stage !== 'done') {
        if (this.signal.aborted) throw new JobLost('worker stopping');
        await this.checkBalance();
        await this.step();
      }
      this.finishResult();
      return (await this.end('succeeded')) ? 'ended' : 'lost';
    } catch (error) {
      if (error instanceof JobLost || this.signal.aborted) return 'lost';
      const failure =
        error instanceof JobFailure
          ? { code: error.code, message: error.message }
          : { code: 'model_failed', message: `a model request failed: ${errorText(error)}` };
      this.state = { ...this.state, failure };
      this.deps.logger.warn({ job_id: this.job.id, failure: failure.code }, 'flow test failed');
      return (await this.end('failed')) ? 'ended' : 'lost';
    }
  }

  private async end(status: EndStatus): Promise<boolean> {
    const ended = await endJob(this.deps.store, this.job, this.owner, status, this.state);
    if (ended) {
      this.deps.logger.info(
        { job_id: this.job.id, status, cost_paise: costPaise(this.state.usage) },
        'flow test ended',
      );
    }
    return ended;
  }

  private async save(): Promise<void> {
    const kept = await this.deps.store.flowJobs.saveState(
      this.job.id,
      this.owner,
      jobJson(this.state),
      this.deps.leaseMs,
    );
    if (!kept) throw new JobLost('the job ended or another worker holds it');
  }

  private async checkBalance(): Promise<void> {
    const { availablePaise } = await this.deps.store.wallet.balance(this.job.workspaceId);
    if (costPaise(this.state.usage) > availablePaise) {
      throw new JobFailure('insufficient_balance', 'the wallet cannot cover the model calls made so far');
    }
  }

  private async step(): Promise<void> {
    switch (this.state.stage) {
      case 'writing_scenarios':
        return this.writeScenarios();
      case 'simulating':
      case 'verifying':
        return this.runNextTest();
      case 'reviewing':
        return this.review();
      case 'revising':
        return this.revise();
      case 'done':
        return;
    }
  }

  // ---- models, metered ----

  private reviewingModel(): HostedModel {
    const model = this.deps.models.reviewing[this.job.input.model];
    if (!model)
      throw new JobFailure('model_unavailable', `the model ${this.job.input.model} is no longer configured`);
    return model;
  }

  /** A hosted request (callers, reviews, revisions), priced at the provider's cost; its usage saved at once. */
  private async hosted(
    model: HostedModel,
    system: string,
    messages: ChatMessage[],
    maxTokens: number,
  ): Promise<Answer> {
    const answer = await ask(
      model.llm,
      { messages: [{ role: 'system', content: system }, ...messages], maxTokens },
      this.deps.models.timeoutMs,
      this.signal,
    );
    this.meterHosted(answer, model);
    await this.save();
    return answer;
  }

  private meterHosted(answer: Answer, model: HostedModel): void {
    const u = this.state.usage;
    this.state.usage = {
      ...u,
      hosted_input: u.hosted_input + (answer.usage?.promptTokens ?? 0),
      hosted_output: u.hosted_output + (answer.usage?.completionTokens ?? 0),
      hosted_micro_paise: u.hosted_micro_paise + hostedMicroPaise(answer.usage, model.usdPerMillion),
    };
  }

  /**
   * The simulated agent's turns: on the live-call model at the text channel's rates; once that fails (or when
   * there is none), on the default reviewing model for the rest of the job, priced as hosted.
   */
  private readonly agentChat: Chat = async (request) => {
    const { live, reviewing, timeoutMs } = this.deps.models;
    if (live && !this.state.simulation.fallback) {
      try {
        const answer = await ask(live, request, timeoutMs, this.signal);
        const u = this.state.usage;
        this.state.usage = {
          ...u,
          simulated_input: u.simulated_input + (answer.usage?.promptTokens ?? 0),
          simulated_output: u.simulated_output + (answer.usage?.completionTokens ?? 0),
        };
        await this.save();
        return answer;
      } catch (error) {
        if (this.signal.aborted || error instanceof JobLost) throw error;
        this.deps.logger.warn(
          { job_id: this.job.id, err: errorText(error) },
          'simulation falls back to the default reviewing model',
        );
      }
    }
    const fallback = reviewing[DEFAULT_FLOW_JOB_MODEL];
    if (!fallback)
      throw new JobFailure(
        'model_unavailable',
        'the live-call model failed and no default reviewing model is configured',
      );
    this.state.simulation = { model: fallback.llm.model, fallback: true };
    const answer = await ask(fallback.llm, request, timeoutMs, this.signal);
    this.meterHosted(answer, fallback);
    await this.save();
    return answer;
  };

  // ---- stages ----

  private async writeScenarios(): Promise<void> {
    const { input } = this.job;
    const scenarios: Scenario[] = [];
    if (input.examples.length > 0) {
      scenarios.push(...exampleReplays(input.examples, input.simulate));
    } else if (input.simulate > 0) {
      scenarios.push(...(await this.inventCallers(input.simulate)));
    }
    this.state = {
      ...this.state,
      scenarios,
      stage: scenarios.length > 0 ? 'simulating' : 'reviewing',
      tests: [],
      tests_total: scenarios.length,
    };
    await this.save();
  }

  private async inventCallers(count: number): Promise<Scenario[]> {
    const { input } = this.job;
    const answer = await this.hosted(
      this.reviewingModel(),
      SCENARIO_PROMPT,
      [
        {
          role: 'user',
          content: dataMessage({
            count,
            brief: input.brief,
            language: input.language,
            variables_needed: variablesRead(this.state.flow),
            variables_given: input.variables,
            flow: this.state.flow,
          }),
        },
      ],
      3_000,
    );
    return callersIn(answer.text, count);
  }

  /** This round's scenarios: the simulated callers, and in verifying rounds a replay of every real call. */
  private roundScenarios(): Scenario[] {
    const base = this.state.scenarios ?? [];
    if (this.state.round === 1) return base;
    return [...base, ...callReplays(this.job.input.calls.length)];
  }

  private async runNextTest(): Promise<void> {
    const scenarios = this.roundScenarios();
    const at = this.state.tests.length;
    const scenario = scenarios[at];
    if (!scenario) {
      this.state = { ...this.state, stage: 'reviewing' };
      await this.save();
      return;
    }
    const { input } = this.job;
    const original =
      scenario.kind === 'example'
        ? input.examples[scenario.index ?? 0]
        : scenario.kind === 'call'
          ? input.calls[scenario.index ?? 0]
          : undefined;
    const callerModel = this.reviewingModel();
    const callerSystem = `${CALLER_PROMPT}\n\n${dataMessage({
      caller: { name: scenario.name, goal: scenario.goal, persona: scenario.persona },
      language: input.language,
      ...(original !== undefined ? { original_call: original } : {}),
    })}`;
    const callerChat: Chat = async (request) => {
      const answer = await ask(callerModel.llm, request, this.deps.models.timeoutMs, this.signal);
      this.meterHosted(answer, callerModel);
      await this.save();
      return answer;
    };
    const call = await this.deps.simulate({
      flow: this.state.flow,
      settings: await this.agentSettings(),
      variables: { ...scenario.variables, ...input.variables },
      callerSystem,
      maxTurns: this.deps.maxTurns,
      agentChat: this.agentChat,
      callerChat,
    });
    const tests = [
      ...this.state.tests,
      {
        scenario: at,
        source: scenario.kind === 'invented' ? null : { kind: scenario.kind, index: scenario.index ?? 0 },
        caller: scenario.name,
        model: this.state.simulation.model,
        transcript: call.transcript,
        ended_by: call.endedBy,
        path: call.path,
      },
    ];
    this.state = {
      ...this.state,
      tests,
      tests_total: scenarios.length,
      stage: tests.length >= scenarios.length ? 'reviewing' : this.state.stage,
    };
    await this.save();
  }

  private async review(): Promise<void> {
    const { input } = this.job;
    const scenarios = this.roundScenarios();
    const ask = () =>
      this.hosted(
        this.reviewingModel(),
        REVIEW_PROMPT,
        [
          {
            role: 'user',
            content: dataMessage({
              brief: input.brief,
              language: input.language,
              max_duration_secs: input.max_duration_secs,
              variables: input.variables,
              flow: this.state.flow,
              simulated_calls: this.state.tests.map((t) => ({
                caller: scenarios[t.scenario] ?? t.caller,
                transcript: t.transcript,
                ended_by: t.ended_by,
                ...(t.source?.kind === 'example' ? { original: input.examples[t.source.index] } : {}),
                ...(t.source?.kind === 'call' ? { original: input.calls[t.source.index] } : {}),
              })),
              real_calls: input.calls,
            }),
          },
        ],
        4_000,
      );
    // A model that wandered off the format once gets one more chance before the job fails.
    const parsed = jsonObjectIn((await ask()).text) ?? jsonObjectIn((await ask()).text);
    if (!parsed)
      throw new JobFailure(
        'review_unreadable',
        'the review model did not answer with the JSON asked for, twice',
      );
    const findings: Finding[] = [...structuralFindings(this.state.flow), ...findingsIn(parsed)];
    const review: Review = {
      revision: this.state.revision,
      summary: typeof parsed.summary === 'string' ? parsed.summary.slice(0, 4_000) : '',
      findings,
      model: this.reviewingModel().llm.model,
    };
    const canRevise = findings.length > 0 && this.state.revisions_made < revisionsAllowed(input);
    this.state = {
      ...this.state,
      review,
      first_review: this.state.first_review ?? review,
      last_review: input.verify || this.state.first_review === null ? review : this.state.last_review,
      stage: canRevise ? 'revising' : 'done',
    };
    if (!canRevise) this.closeRound(null);
    await this.save();
  }

  private async revise(): Promise<void> {
    const review = this.state.review;
    if (!review) throw new JobFailure('internal', 'revising without a review');
    const { input } = this.job;
    const data = {
      brief: input.brief,
      language: input.language,
      flow: this.state.flow,
      findings: review.findings,
    };
    let answer = await this.hosted(
      this.reviewingModel(),
      REVISE_PROMPT,
      [{ role: 'user', content: dataMessage(data) }],
      16_000,
    );
    let checked = await this.checkRevision(answer.text);
    if (!checked.ok && checked.raw !== undefined) {
      answer = await this.hosted(
        this.reviewingModel(),
        REPAIR_PROMPT,
        [{ role: 'user', content: dataMessage({ ...data, flow: checked.raw, problems: checked.details }) }],
        16_000,
      );
      checked = await this.checkRevision(answer.text);
    }
    const changes = changesIn(answer.text);
    const revisionsMade = this.state.revisions_made + 1;
    if (!checked.ok) {
      this.closeRound({
        status: 'discarded',
        revision: null,
        changes,
        problems: checked.details.slice(0, 50),
      });
      this.state = { ...this.state, revisions_made: revisionsMade, stage: 'done' };
      await this.save();
      return;
    }
    const revision = this.state.revision + 1;
    this.closeRound({ status: 'accepted', revision, changes, problems: [] });
    const retest = input.verify;
    this.state = {
      ...this.state,
      flow: checked.flow,
      revision,
      revisions_made: revisionsMade,
      ...(retest
        ? { round: this.state.round + 1, stage: 'verifying' as const, tests: [], review: null }
        : { stage: 'done' as const }),
    };
    if (retest) this.state.tests_total = this.roundScenarios().length;
    await this.save();
  }

  private async checkRevision(
    text: string,
  ): Promise<
    { ok: true; flow: Flow } | { ok: false; raw: unknown; details: { path: string; message: string }[] }
  > {
    const raw = jsonObjectIn(text)?.flow;
    if (raw === undefined)
      return { ok: false, raw: undefined, details: [{ path: 'flow', message: 'no flow in the answer' }] };
    const tools = (await this.agentSettings()).tools;
    const checked = validateFlow(raw, tools);
    return checked.ok ? { ok: true, flow: checked.flow } : { ok: false, raw, details: checked.details };
  }

  private closeRound(outcome: RevisionOutcome | null): void {
    const review = this.state.review;
    if (!review) return;
    this.state.rounds_finished = [
      ...this.state.rounds_finished,
      {
        round: this.state.round,
        revision: this.state.revision,
        tests: this.state.tests,
        review,
        revision_outcome: outcome,
      },
    ];
  }

  private finishResult(): void {
    const { input } = this.job;
    const changed = JSON.stringify(this.state.flow) !== JSON.stringify(input.flow);
    const variables = Object.fromEntries(
      variablesRead(this.state.flow).map((name) => [
        name,
        changed ? typeOfValue(input.variables[name]) : 'string',
      ]),
    );
    this.state = {
      ...this.state,
      result: { changed, final_flow: this.state.flow, final_revision: this.state.revision, variables },
    };
  }

  /** The agent simulated calls run as: the named agent's settings, or the defaults; never its tools' runs. */
  private async agentSettings(): Promise<AgentSettings> {
    if (this.settings) return this.settings;
    const { input, workspaceId } = { input: this.job.input, workspaceId: this.job.workspaceId };
    const record = input.agent_id ? await this.deps.store.agents.get(workspaceId, input.agent_id) : undefined;
    const base = record ? storedSettings(record.content) : simulationAgent(input);
    this.settings = base;
    return base;
  }
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
