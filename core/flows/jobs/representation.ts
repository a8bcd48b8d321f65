/** A flow test job as the API shows it (object `flow_refinement`). */
import { paiseToRupees } from '../../money.ts';
import type { FlowJobRecord } from '../../store/types.ts';
import { inputSchemaOf } from './graph.ts';
import { costPaise, totalTokens } from './pricing.ts';
import {
  type JobInput,
  type JobState,
  type Review,
  storedJobInput,
  storedJobState,
  type TestResult,
} from './stored.ts';

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

function testView(test: TestResult) {
  return {
    source: test.source,
    caller: test.caller,
    model: test.model,
    ended_by: test.ended_by,
    path: test.path,
    transcript: test.transcript,
  };
}

function reviewView(review: Review | null) {
  return (
    review && {
      revision: review.revision,
      summary: review.summary,
      findings: review.findings,
      model: review.model,
    }
  );
}

export function flowRefinementBody(record: FlowJobRecord) {
  const input: JobInput = storedJobInput(record.input);
  const state: JobState = storedJobState(record.state);
  const ended = record.status !== 'running';
  const amountPaise = ended ? (state.charge?.amount_paise ?? 0) : costPaise(state.usage);
  const result = record.status === 'succeeded' ? state.result : null;
  return {
    id: record.id,
    object: 'flow_refinement' as const,
    status: record.status,
    stage: state.stage,
    progress: {
      round: state.round,
      rounds: state.rounds_max,
      tests_done: state.tests.length,
      tests_total: state.tests_total,
    },
    model: input.model,
    simulation_model: state.simulation.model,
    simulation_fell_back: state.simulation.fallback,
    agent_id: input.agent_id,
    revision_sent: 1,
    rounds_requested: input.rounds,
    verify: input.verify,
    tests: state.tests.map(testView),
    rounds_finished: state.rounds_finished.map((r) => ({
      round: r.round,
      revision: r.revision,
      tests: r.tests.map(testView),
      review: reviewView(r.review),
      revision_outcome: r.revision_outcome,
    })),
    test_calls: input.calls,
    example_calls: input.examples,
    first_review: reviewView(state.first_review),
    last_review: reviewView(state.last_review),
    tokens: totalTokens(state.usage),
    cost: {
      amount_inr: paiseToRupees(amountPaise),
      charged: ended,
      transaction_id: ended ? (state.charge?.transaction_id ?? null) : null,
    },
    changed: result ? result.changed : null,
    final_flow: result ? result.final_flow : null,
    final_revision: result ? result.final_revision : null,
    input_schema: result ? inputSchemaOf(result.variables) : null,
    variables: result ? result.variables : null,
    failure_reason: record.status === 'failed' ? state.failure : null,
    created_at: iso(record.createdAt),
    updated_at: iso(record.updatedAt),
    ended_at: iso(record.endedAt),
  };
}

export type FlowRefinementBody = ReturnType<typeof flowRefinementBody>;
