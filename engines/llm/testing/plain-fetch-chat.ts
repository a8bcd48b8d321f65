/**
 * The same streamed Chat Completions request as the SDK makes, with nothing but `fetch` and `SseDataDecoder`:
 * the baseline the SDK's latency is measured against (`bench/llm-sdk-latency.ts`).
 */
import type { StreamChunk } from '../providers/openai-wire.ts';
import { SseDataDecoder } from './sse-decoder.ts';

export async function* plainFetchChunks(
  baseURL: string,
  apiKey: string,
  body: object,
  signal?: AbortSignal,
): AsyncGenerator<StreamChunk, void, undefined> {
  const response = await fetch(`${baseURL}/chat/completions`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'text/event-stream',
      authorization: `Bearer ${apiKey}`,
    },
    body: JSON.stringify(body),
    ...(signal === undefined ? {} : { signal }),
  });
  if (!response.ok || response.body === null) throw new Error(`chat completions answered ${response.status}`);
  const decoder = new SseDataDecoder();
  const reader = response.body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      const events = done ? decoder.end() : decoder.push(value);
      for (const data of events) {
        if (data === '[DONE]') return;
        yield JSON.parse(data) as StreamChunk;
      }
      if (done) return;
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
}
