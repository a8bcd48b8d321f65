import { readFileSync } from 'node:fs';

/**
 * The browser client and demo page, served by the gateway from memory: a fixed list of files read once at
 * start, so no request path ever reaches the file system.
 */

export const STATIC_PREFIX = '/web/static/';

const FILES: Readonly<Record<string, string>> = {
  'index.html': 'text/html; charset=utf-8',
  'client.js': 'text/javascript; charset=utf-8',
  'worklet.js': 'text/javascript; charset=utf-8',
};

export interface StaticFile {
  readonly body: Buffer;
  readonly contentType: string;
}

export function loadStaticFiles(): ReadonlyMap<string, StaticFile> {
  const dir = new URL('./web/static/', import.meta.url);
  const files = new Map<string, StaticFile>();
  for (const [name, contentType] of Object.entries(FILES)) {
    files.set(name, { body: readFileSync(new URL(name, dir)), contentType });
  }
  return files;
}
