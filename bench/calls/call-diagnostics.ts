import { request } from 'undici';
import type { CallView, PlacedCall } from './call-watch.ts';

/**
 * Why calls did not complete, told briefly: for a few of them, the status and the end of the transcript as
 * spoken (`GET /v2/calls/{id}/transcript`), read before the platform stops.
 */

const SHOWN_CALLS = 3;
const SHOWN_TURNS = 4;
const TEXT_CHARS = 80;

interface TranscriptTurn {
  speaker?: string;
  text?: string;
  start_ms?: number;
  interrupted?: boolean;
}

async function transcriptTail(apiUrl: string, call: PlacedCall): Promise<string> {
  const response = await request(`${apiUrl}/v2/calls/${call.id}/transcript`, {
    headers: { authorization: `Bearer ${call.workspace.apiKey}` },
  });
  const text = await response.body.text();
  if (response.statusCode !== 200) return `transcript: ${response.statusCode}`;
  const turns = (JSON.parse(text) as { turns?: TranscriptTurn[] }).turns ?? [];
  const tail = turns
    .slice(-SHOWN_TURNS)
    .map(
      (t) =>
        `${t.speaker ?? '?'} at ${((t.start_ms ?? 0) / 1000).toFixed(1)} s${t.interrupted ? ' (cut off)' : ''}: ` +
        `"${(t.text ?? '').slice(0, TEXT_CHARS)}"`,
    );
  return `${turns.length} turns, last: ${tail.join(' | ')}`;
}

export async function describeIncomplete(
  apiUrl: string,
  placed: readonly PlacedCall[],
  calls: readonly CallView[],
  log: (line: string) => void,
): Promise<void> {
  const incomplete = calls.filter((call) => call.status !== 'completed');
  if (incomplete.length === 0) return;
  const byId = new Map(placed.map((call) => [call.id, call]));
  for (const call of incomplete.slice(0, SHOWN_CALLS)) {
    const placedCall = byId.get(call.id);
    const transcript = placedCall
      ? await transcriptTail(apiUrl, placedCall).catch((error: unknown) => `transcript: ${String(error)}`)
      : '';
    log(
      `  not completed: ${call.id} ${call.status} (${call.ended_reason ?? '-'}), ${call.duration_secs} s, ` +
        `${call.latency?.turns ?? 0} measured turns; ${transcript}`,
    );
  }
  if (incomplete.length > SHOWN_CALLS) log(`  ... and ${incomplete.length - SHOWN_CALLS} more`);
}
