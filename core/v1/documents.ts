import { Agent, request } from 'undici';
import { ApiError, invalid } from '../errors.ts';
import { AddressPolicyError, assertPublicHost, guardedLookup } from '../net/address-policy.ts';
import type { Store } from '../store/types.ts';
import type { V1DocumentRecord } from '../store/v1-types.ts';

/** Bounds of a knowledge-base document: what is downloaded, kept, and how many a workspace holds. */
export const DOCUMENT_LIMITS = {
  bytes: 1_048_576,
  textChars: 200_000,
  timeoutMs: 10_000,
  perWorkspace: 100,
} as const;

export interface DocumentUpload {
  url: string;
  title: string;
  type: 'pdf' | 'txt' | 'html';
}

/** HTML as the words a reader sees: scripts, styles and tags dropped, common entities decoded, spaces collapsed. */
export function htmlText(html: string): string {
  return html
    .replace(/<(script|style|noscript)[^>]*>[\s\S]*?<\/\1>/gi, ' ')
    .replace(/<br\s*\/?>|<\/(p|div|li|h[1-6]|tr)>/gi, '\n')
    .replace(/<[^>]+>/g, ' ')
    .replace(/&nbsp;/g, ' ')
    .replace(/&amp;/g, '&')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/[ \t\r\f\v]+/g, ' ')
    .replace(/\s*\n\s*/g, '\n')
    .replace(/\n{2,}/g, '\n')
    .trim();
}

/**
 * Knowledge-base documents: fetched once at upload from their URL through the outbound address guard (no
 * loopback or private address unless the operator allows it; HTTPS unless so too), at most 1 MB in 10 s,
 * their text kept. Text and HTML documents are read; PDF text extraction is not live yet (a 400 says so).
 */
export class V1Documents {
  private readonly agent: Agent;

  constructor(
    private readonly store: Store,
    private readonly allowPrivate: boolean,
  ) {
    this.agent = new Agent({
      connect: { lookup: guardedLookup({ allowPrivate }), timeout: DOCUMENT_LIMITS.timeoutMs },
      headersTimeout: DOCUMENT_LIMITS.timeoutMs,
      bodyTimeout: DOCUMENT_LIMITS.timeoutMs,
    });
  }

  async upload(workspaceId: string, input: DocumentUpload): Promise<V1DocumentRecord> {
    if (input.type === 'pdf') {
      throw invalid(
        'type',
        'PDF text extraction is not live yet; upload the text or HTML version of the document',
      );
    }
    const known = await this.store.v1.documents(workspaceId, { limit: DOCUMENT_LIMITS.perWorkspace + 1 });
    if (known.length >= DOCUMENT_LIMITS.perWorkspace && !known.some((d) => d.url === input.url)) {
      throw invalid('url', `the workspace has ${DOCUMENT_LIMITS.perWorkspace} documents, the most it may`);
    }
    const raw = await this.download(input.url);
    const text = (input.type === 'html' ? htmlText(raw) : raw.trim()).slice(0, DOCUMENT_LIMITS.textChars);
    if (!text) throw invalid('url', 'the document has no text');
    return this.store.v1.putDocument({
      workspaceId,
      url: input.url,
      title: input.title,
      type: input.type,
      text,
    });
  }

  list(workspaceId: string): Promise<V1DocumentRecord[]> {
    return this.store.v1.documents(workspaceId, { limit: DOCUMENT_LIMITS.perWorkspace });
  }

  close(): Promise<void> {
    return this.agent.close();
  }

  private async download(address: string): Promise<string> {
    const url = new URL(address);
    if (url.protocol !== 'https:' && !(this.allowPrivate && url.protocol === 'http:')) {
      throw invalid('url', 'must be an https:// URL');
    }
    try {
      await assertPublicHost(url.hostname, { allowPrivate: this.allowPrivate });
      const response = await request(url, {
        method: 'GET',
        dispatcher: this.agent,
        signal: AbortSignal.timeout(DOCUMENT_LIMITS.timeoutMs),
      });
      if (response.statusCode < 200 || response.statusCode >= 300) {
        await response.body.dump().catch(() => {});
        throw invalid('url', `the document answered HTTP ${response.statusCode}`);
      }
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of response.body) {
        size += (chunk as Buffer).length;
        if (size > DOCUMENT_LIMITS.bytes) {
          response.body.destroy();
          throw invalid('url', `the document is larger than ${DOCUMENT_LIMITS.bytes} bytes`);
        }
        chunks.push(chunk as Buffer);
      }
      return Buffer.concat(chunks).toString('utf8');
    } catch (error) {
      if (error instanceof ApiError) throw error;
      if (error instanceof AddressPolicyError) throw invalid('url', `refused: ${error.message}`);
      throw invalid(
        'url',
        `could not fetch the document: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  }
}

const WORD = /[\p{L}\p{N}]{3,}/gu;

/**
 * Passages of the documents for a prompt with `budgetChars` of room: every document's text cut into passages
 * (paragraphs, at most 600 characters), each scored by the words it shares with `context` (what the call is
 * about: the variant's brief, the client's prompt, the FAQ's questions), a shared word weighing more the fewer
 * passages have it (inverse document frequency), the best kept, in their documents' order, until the budget is
 * spent. When everything fits, everything is kept.
 */
export function retrievePassages(
  documents: ReadonlyArray<{ title: string; text: string }>,
  context: string,
  budgetChars: number,
): string[] {
  const passages = documents.flatMap((doc, d) =>
    splitPassages(doc.text).map((text, i) => ({
      key: d * 1_000_000 + i,
      text: `[${doc.title}] ${text}`,
      words: wordsOf(text),
    })),
  );
  const total = passages.reduce((sum, p) => sum + p.text.length + 1, 0);
  if (total <= budgetChars) return passages.map((p) => p.text);
  const wanted = wordsOf(context);
  const frequency = new Map<string, number>();
  for (const passage of passages)
    for (const word of passage.words) frequency.set(word, (frequency.get(word) ?? 0) + 1);
  const weight = (word: string) => Math.log((passages.length + 1) / (frequency.get(word) ?? 1));
  const scored = passages
    .map((p) => ({ ...p, score: [...p.words].reduce((sum, w) => sum + (wanted.has(w) ? weight(w) : 0), 0) }))
    .sort((a, b) => b.score - a.score || a.key - b.key);
  const chosen: typeof scored = [];
  let used = 0;
  for (const passage of scored) {
    if (used + passage.text.length + 1 > budgetChars) continue;
    chosen.push(passage);
    used += passage.text.length + 1;
  }
  return chosen.sort((a, b) => a.key - b.key).map((p) => p.text);
}

function wordsOf(text: string): Set<string> {
  return new Set(text.toLowerCase().match(WORD) ?? []);
}

function splitPassages(text: string): string[] {
  const out: string[] = [];
  for (const paragraph of text.split(/\n+/)) {
    const trimmed = paragraph.trim();
    for (let i = 0; i < trimmed.length; i += 600) out.push(trimmed.slice(i, i + 600));
  }
  return out.filter((p) => p.length > 0);
}
