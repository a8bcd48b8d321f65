/** Reading the models' answers in a flow job: lenient about their shape, strict about what is kept. */
import { jsonObjectIn } from './models.ts';
import { type Finding, findingSchema, type Scenario } from './stored.ts';

const TEXT_CHARS = 2_000;
const MAX_FINDINGS = 50;
const MAX_CHANGES = 50;

type Obj = Record<string, unknown>;
const objectOr = (value: unknown): Obj =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Obj) : {};

/** `count` invented callers from the scenario writer's answer; missing ones get plain stand-ins. */
export function callersIn(text: string, count: number): Scenario[] {
  const listed = jsonObjectIn(text)?.callers;
  const callers = Array.isArray(listed) ? listed : [];
  const line = (v: unknown, fallback: string) =>
    typeof v === 'string' && v.trim() ? v.slice(0, TEXT_CHARS) : fallback;
  return Array.from({ length: count }, (_, i) => {
    const c = objectOr(callers[i]);
    const variables = Object.fromEntries(
      Object.entries(objectOr(c.variables))
        .filter((e): e is [string, string | number | boolean] =>
          ['string', 'number', 'boolean'].includes(typeof e[1]),
        )
        .slice(0, 50)
        .map(([k, v]) => [k.slice(0, 64), typeof v === 'string' ? v.slice(0, TEXT_CHARS) : v]),
    );
    return {
      kind: 'invented' as const,
      index: null,
      name: line(c.name, `Caller ${i + 1}`),
      goal: line(c.goal, 'A typical caller of the business in the brief.'),
      persona: line(c.persona, 'Polite, answers questions briefly.'),
      variables,
    };
  });
}

/** The findings of a review's answer; a severity outside the three (`critical`, `minor`) reads as the nearest. */
export function findingsIn(review: Obj): Finding[] {
  const listed = Array.isArray(review.findings) ? review.findings : [];
  return listed.slice(0, MAX_FINDINGS).flatMap((f) => {
    const given = objectOr(f);
    const checked = findingSchema.safeParse({
      node: null,
      fix: '',
      ...given,
      severity: severityOf(given.severity),
    });
    return checked.success ? [checked.data] : [];
  });
}

function severityOf(value: unknown): Finding['severity'] {
  const text = String(value ?? '').toLowerCase();
  if (/high|critical|severe|blocker|major/.test(text)) return 'high';
  if (/low|minor|trivial|nit/.test(text)) return 'low';
  return 'medium';
}

/** What a revision says it changed. */
export function changesIn(text: string): string[] {
  const listed = jsonObjectIn(text)?.changes;
  return Array.isArray(listed)
    ? listed
        .filter((c): c is string => typeof c === 'string')
        .slice(0, MAX_CHANGES)
        .map((c) => c.slice(0, 1_000))
    : [];
}
