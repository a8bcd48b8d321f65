/**
 * `multipart/form-data` bodies (RFC 7578), read whole from a buffer: each part's field name, file name and
 * content type, and its bytes. Enough for uploads of one file beside a few text fields; no streaming.
 */
export interface FormPart {
  name: string;
  filename: string | undefined;
  contentType: string | undefined;
  data: Buffer;
}

export class MultipartError extends Error {
  override name = 'MultipartError';
}

/** The boundary of a `multipart/form-data` Content-Type, or undefined when it has none. */
export function multipartBoundary(contentType: string | undefined): string | undefined {
  const match = /boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType ?? '');
  return match?.[1] ?? match?.[2];
}

export function parseMultipart(body: Buffer, boundary: string): FormPart[] {
  const delimiter = Buffer.from(`--${boundary}`);
  const parts: FormPart[] = [];
  let at = body.indexOf(delimiter);
  if (at < 0) throw new MultipartError('no part starts with the boundary of the Content-Type');
  for (;;) {
    at += delimiter.length;
    if (body.subarray(at, at + 2).toString('latin1') === '--') return parts;
    if (body.subarray(at, at + 2).toString('latin1') !== '\r\n')
      throw new MultipartError('a boundary line is not followed by CRLF');
    at += 2;
    const headersEnd = body.indexOf('\r\n\r\n', at);
    if (headersEnd < 0) throw new MultipartError('a part has no end of its headers');
    const headers = body.subarray(at, headersEnd).toString('utf8').split('\r\n');
    const next = body.indexOf(Buffer.concat([Buffer.from('\r\n'), delimiter]), headersEnd + 4);
    if (next < 0) throw new MultipartError('the body ends before its closing boundary');
    let name: string | undefined;
    let filename: string | undefined;
    let contentType: string | undefined;
    for (const line of headers) {
      const colon = line.indexOf(':');
      const key = line.slice(0, colon).trim().toLowerCase();
      const value = line.slice(colon + 1).trim();
      if (key === 'content-disposition') {
        name = /\bname="([^"]*)"/i.exec(value)?.[1];
        filename = /\bfilename="([^"]*)"/i.exec(value)?.[1];
      } else if (key === 'content-type') {
        contentType = value.split(';')[0]!.trim().toLowerCase();
      }
    }
    if (name === undefined) throw new MultipartError('a part has no Content-Disposition name');
    parts.push({ name, filename, contentType, data: body.subarray(headersEnd + 4, next) });
    at = next + 2;
  }
}
