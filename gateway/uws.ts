import type * as Uws from 'uWebSockets.js';
import { createRequire } from 'node:module';

/**
 * Loads uWebSockets.js (the `@trufflesuite/uws-js-unofficial` build, CommonJS) and tells whether the native
 * binary loaded. That package silently falls back to a JavaScript shim over `ws` when its `.node` binary does
 * not load for this platform and Node ABI (or when UWS_USE_FALLBACK is set), which is several times slower.
 *
 * Signals, both checked: the native module's functions are host functions (`[native code]`), the shim's are
 * ordinary JavaScript; and only the native binary exports `getParts` (the shim implements a subset).
 */
export type UwsModule = typeof Uws;

export interface UwsLoad {
  readonly uws: UwsModule;
  readonly native: boolean;
}

let cached: UwsLoad | undefined;

export function isNativeUws(uws: UwsModule): boolean {
  const app: unknown = (uws as { App?: unknown }).App;
  if (typeof app !== 'function') return false;
  const nativeSource = Function.prototype.toString.call(app).includes('[native code]');
  const fullSurface = typeof (uws as { getParts?: unknown }).getParts === 'function';
  return nativeSource && fullSurface;
}

export function loadUws(): UwsLoad {
  if (cached) return cached;
  const require = createRequire(import.meta.url);
  const uws = require('uWebSockets.js') as UwsModule;
  cached = { uws, native: isNativeUws(uws) };
  return cached;
}
