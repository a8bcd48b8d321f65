/**
 * `voiceagent flow-test`: runs a flow test on a running platform (its v2 API) and prints the job as it goes,
 * then the first and last review and the diff between the graph sent and the final one. A client like any
 * other: it needs the platform's URL and a key (by default the first workspace's, from DATA_DIR).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { Config } from '../../core/config.ts';
import { validateFlow } from '../../core/flows/validate.ts';
import { UsageError } from '../usage-error.ts';

type Review = {
  summary: string;
  findings: Array<{ severity: string; node: string | null; problem: string; fix: string }>;
};
type Job = {
  id: string;
  status: string;
  stage: string;
  progress: { round: number; rounds: number; tests_done: number; tests_total: number };
  first_review: Review | null;
  last_review: Review | null;
  final_flow: unknown;
  changed: boolean | null;
  cost: { amount_inr: number };
  tokens: { total: number };
  failure_reason: { code: string; message: string } | null;
};

export async function runFlowTestCommand(config: Config, args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      flow: { type: 'string' },
      brief: { type: 'string' },
      simulate: { type: 'string', default: '2' },
      rounds: { type: 'string', default: '1' },
      model: { type: 'string' },
      url: { type: 'string' },
      key: { type: 'string' },
    },
    strict: true,
  });
  if (!values.flow) throw new UsageError('flow-test: --flow FILE is required');
  const flow: unknown = JSON.parse(readFileSync(values.flow, 'utf8'));
  const brief = values.brief ? readFileSync(values.brief, 'utf8') : undefined;
  const url = (values.url ?? config.publicApiUrl ?? `http://127.0.0.1:${config.port}`).replace(/\/+$/, '');
  const key = values.key ?? keyFromCredentials(config);
  const call = async (method: string, pathname: string, body?: unknown): Promise<Job> => {
    const res = await fetch(`${url}${pathname}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    const text = await res.text();
    if (res.status >= 300) throw new Error(`${method} ${pathname}: ${res.status} ${text}`);
    return JSON.parse(text) as Job;
  };
  let job = await call('POST', '/v2/agents/flow/refine', {
    flow,
    ...(brief ? { brief } : {}),
    simulate: Number(values.simulate),
    rounds: Number(values.rounds),
    ...(values.model ? { model: values.model } : {}),
  });
  process.stdout.write(`flow test ${job.id}\n`);
  let last = '';
  while (job.status === 'running') {
    const line = `  ${job.stage}, round ${job.progress.round}/${job.progress.rounds}, tests ${job.progress.tests_done}/${job.progress.tests_total}`;
    if (line !== last) process.stdout.write(`${line}\n`);
    last = line;
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    job = await call('GET', `/v2/agents/flow/refine/${job.id}`);
  }
  process.stdout.write(`${job.status}: ${job.tokens.total} tokens, ₹${job.cost.amount_inr}\n`);
  if (job.failure_reason)
    process.stdout.write(`failure: ${job.failure_reason.code}: ${job.failure_reason.message}\n`);
  printReview('first review', job.first_review);
  printReview('last review', job.last_review);
  if (job.final_flow) {
    process.stdout.write(job.changed ? '\nflow diff (- sent, + final):\n' : '\nthe flow is unchanged\n');
    // The graph sent with its defaults filled in, as the job tested it, so the diff shows only real changes.
    const checked = validateFlow(flow, []);
    const sent = checked.ok ? checked.flow : flow;
    if (job.changed) process.stdout.write(`${lineDiff(pretty(sent), pretty(job.final_flow))}\n`);
  }
  return job.status === 'succeeded' ? 0 : 1;
}

function keyFromCredentials(config: Config): string {
  const file = path.join(config.dataDir, 'credentials.json');
  try {
    const saved = JSON.parse(readFileSync(file, 'utf8')) as { api_key?: string };
    if (saved.api_key) return saved.api_key;
  } catch {
    // reported below
  }
  throw new UsageError(`flow-test: give --key, or start the platform once so ${file} exists`);
}

function printReview(title: string, review: Review | null): void {
  if (!review) return;
  process.stdout.write(`\n${title}: ${review.summary}\n`);
  for (const f of review.findings) {
    process.stdout.write(`  [${f.severity}] ${f.node ?? '(graph)'}: ${f.problem}\n      fix: ${f.fix}\n`);
  }
}

function pretty(value: unknown): string[] {
  return JSON.stringify(value, null, 2).split('\n');
}

/** A line diff (longest common subsequence): unchanged lines indented, removed `-`, added `+`. */
export function lineDiff(a: readonly string[], b: readonly string[]): string {
  const n = a.length;
  const m = b.length;
  const lcs: number[][] = Array.from({ length: n + 1 }, () => new Array<number>(m + 1).fill(0));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lcs[i]![j] = a[i] === b[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
    }
  }
  const out: string[] = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] === b[j]) {
      out.push(`  ${a[i]}`);
      i++;
      j++;
    } else if (j < m && (i >= n || lcs[i]![j + 1]! >= lcs[i + 1]![j]!)) out.push(`+ ${b[j++]}`);
    else out.push(`- ${a[i++]}`);
  }
  return out.join('\n');
}
