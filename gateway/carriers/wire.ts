import { PrefixView } from '../../codecs/index.ts';
import type { AudioEncoding, WireMessage } from './types.ts';

/**
 * Reading and writing the carriers' wire messages: lenient field readers (carriers send numbers as strings
 * (Twilio, Exotel) or numbers (Plivo), fields in camelCase or snake_case), JSON and base64 payloads, and the
 * carriers' spellings of codecs and rates. The audio itself is audio-edges.ts's.
 */

export type JsonObject = Record<string, unknown>;

export function asObject(value: unknown): JsonObject | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as JsonObject)
    : undefined;
}

export function asString(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return undefined;
}

export function asNumber(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value === 'string' && value.trim() !== '') {
    const n = Number(value);
    return Number.isFinite(n) ? n : undefined;
  }
  return undefined;
}

/** The first of `keys` present on `obj` (camelCase and snake_case spellings of one field). */
export function field(obj: JsonObject | undefined, ...keys: string[]): unknown {
  if (!obj) return undefined;
  for (const key of keys) {
    const value = obj[key];
    if (value !== undefined && value !== null) return value;
  }
  return undefined;
}

/** An object of scalars as strings; other values are skipped. */
export function stringMap(value: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  const obj = asObject(value);
  if (!obj) return out;
  for (const [key, v] of Object.entries(obj)) {
    if (typeof v === 'string') out[key] = v;
    else if (typeof v === 'number' || typeof v === 'boolean') out[key] = String(v);
  }
  return out;
}

/** `k=v;k2=v2` (Plivo's extra_headers; also accepts `,` and `&` separators). */
export function parseHeaderList(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of text.split(/[;,&]/)) {
    const eq = part.indexOf('=');
    if (eq <= 0) continue;
    const key = part.slice(0, eq).trim();
    if (key) out[key] = part.slice(eq + 1).trim();
  }
  return out;
}

/** Takes `token` out of a parameter map (so it never reaches the handler or a log line) and returns it. */
export function takeToken(params: Record<string, string>): string | undefined {
  const token = params.token;
  delete params.token;
  return token === '' ? undefined : token;
}

const decoder = new TextDecoder('utf-8', { fatal: false });

/** A JSON object message, or undefined for anything else (invalid JSON, arrays, scalars). */
export function parseJsonObject(data: Uint8Array): JsonObject | undefined {
  let value: unknown;
  try {
    value = JSON.parse(decoder.decode(data));
  } catch {
    return undefined;
  }
  return asObject(value);
}

/**
 * Base64 payloads decoded into one buffer reused across messages (grown as needed): the bytes are valid until
 * the next decode, which suits the inbound audio path, where they are decoded to samples at once.
 */
export class Base64Decoder {
  private decoded = new PrefixView(Buffer.alloc(0));

  decode(value: unknown): Uint8Array | undefined {
    if (typeof value !== 'string') return undefined;
    const most = Math.ceil(value.length / 4) * 3;
    const { buffer } = this.decoded;
    if (buffer.length < most)
      this.decoded = new PrefixView(Buffer.allocUnsafe(Math.max(most, 2 * buffer.length)));
    return this.decoded.of(this.decoded.buffer.write(value, 0, 'base64'));
  }
}

export function toBase64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
}

/** Reads an encoding name in any of the carriers' spellings. */
export function parseEncoding(text: string | undefined): AudioEncoding | undefined {
  if (text === undefined) return undefined;
  const t = text.toLowerCase();
  if (t.includes('mulaw') || t.includes('ulaw') || t.includes('pcmu') || t.includes('g711_u')) return 'mulaw';
  if (t.includes('alaw') || t.includes('pcma') || t.includes('g711_a')) return 'alaw';
  if (
    t.includes('l16') ||
    t.includes('raw') ||
    t.includes('slin') ||
    t.includes('pcm') ||
    t.includes('linear')
  ) {
    return 'pcm16';
  }
  if (t.includes('opus')) return 'opus';
  return undefined;
}

/** `audio/l16;rate=16000` -> 16000. */
export function rateFromContentType(text: string | undefined): number | undefined {
  const match = text ? /rate=(\d+)/i.exec(text) : null;
  return match ? Number(match[1]) : undefined;
}

/** A JSON control message. */
export function control(value: unknown): WireMessage {
  return { data: JSON.stringify(value), binary: false, audioMs: 0 };
}
