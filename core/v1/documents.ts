import { Agent, request } from 'undici';
import { getDocumentProxy } from 'unpdf';
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
  pdfPages: 300,
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

/** A downloaded document's text, by its declared type. */
export async function documentText(type: DocumentUpload['type'], raw: Buffer): Promise<string> {
  if (type === 'pdf') return pdfText(raw);
  const text = raw.toString('utf8');
  return type === 'html' ? htmlText(text) : text.trim();
}

/**
 * The text of a PDF's pages (at most `DOCUMENT_LIMITS.pdfPages`), page after page, spaces collapsed; a file that
 * is not a readable PDF is a 400 naming `url`.
 */
export async function pdfText(raw: Buffer): Promise<string> {
  if (raw.subarray(0, 1024).indexOf('%PDF-') < 0) throw invalid('url', 'the document is not a PDF');
  let pages: string[];
  try {
    const pdf = await getDocumentProxy(new Uint8Array(raw), { isEvalSupported: false, verbosity: 0 });
    try {
      const wanted = Math.min(pdf.numPages, DOCUMENT_LIMITS.pdfPages);
      pages = [];
      for (let n = 1; n <= wanted; n++) {
        const page = await pdf.getPage(n);
        const content = await page.getTextContent();
        pages.push(
          content.items.map((item) => ('str' in item ? item.str + (item.hasEOL ? '\n' : '') : '')).join(''),
        );
      }
    } finally {
      await pdf.destroy();
    }
  } catch (error) {
    throw invalid(
      'url',
      `the PDF could not be read: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  return pages
    .join('\n')
    .replace(/[ \t\r\f\v]+/g, ' ')
    .replace(/\s*\n\s*/g, '\n')
    .trim();
}

/**
 * Knowledge-base documents: fetched once at upload from their URL through the outbound address guard (no
 * loopback or private address unless the operator allows it; HTTPS unless so too), at most 1 MB in 10 s,
 * their text kept: text as is, HTML as its visible words, PDF as the text of its pages (PDF.js, through unpdf).
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
    const known = await this.store.v1.documents(workspaceId, { limit: DOCUMENT_LIMITS.perWorkspace + 1 });
    if (known.length >= DOCUMENT_LIMITS.perWorkspace && !known.some((d) => d.url === input.url)) {
      throw invalid('url', `the workspace has ${DOCUMENT_LIMITS.perWorkspace} documents, the most it may`);
    }
    const raw = await this.download(input.url);
    const text = (await documentText(input.type, raw)).slice(0, DOCUMENT_LIMITS.textChars);
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

  private async download(address: string): Promise<Buffer> {
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
      return Buffer.concat(chunks);
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
