/**
 * G.711 mu-law and A-law (ITU-T G.711), table-driven.
 *
 * G.711 quantises a 14-bit (mu-law) or 13-bit (A-law) linear sample. A PCM16 sample is first reduced to that
 * width by rounding to nearest (halves up) and clipping to the positive maximum, exactly as SoX does; the
 * segment encoding is the classic one (Sun / ITU reference). The result is bit-exact with
 * `sox -D -t raw -e signed -b 16 ... -e u-law|a-law` for all 65,536 inputs (see g711.test.ts).
 *
 * Decoding expands each code to the segment midpoint scaled to 16 bits (mu-law: +-32124 max, A-law: +-32256).
 * Encoding is one lookup in a 64 Ki-entry table indexed by the sample's 16-bit pattern (64 KB per law).
 */

const MULAW_BIAS = 0x84 >> 2; // 33, in 14-bit units
const MULAW_CLIP = 8159;

/** Encode one 14-bit signed sample to a mu-law code. */
function mulawEncode14(sample14: number): number {
  let magnitude = sample14;
  let mask = 0xff;
  if (magnitude < 0) {
    magnitude = -magnitude;
    mask = 0x7f;
  }
  if (magnitude > MULAW_CLIP) magnitude = MULAW_CLIP;
  magnitude += MULAW_BIAS;
  let segment = 0;
  while (segment < 8 && magnitude > (0x40 << segment) - 1) segment++;
  if (segment === 8) return 0x7f ^ mask;
  return ((segment << 4) | ((magnitude >> (segment + 1)) & 0x0f)) ^ mask;
}

/** Encode one 13-bit signed sample to an A-law code (even bits inverted). */
function alawEncode13(sample13: number): number {
  let magnitude = sample13;
  let mask = 0xd5;
  if (magnitude < 0) {
    magnitude = -magnitude - 1;
    mask = 0x55;
  }
  let segment = 0;
  while (segment < 8 && magnitude > (0x20 << segment) - 1) segment++;
  if (segment === 8) return 0x7f ^ mask;
  const mantissa = segment < 2 ? (magnitude >> 1) & 0x0f : (magnitude >> segment) & 0x0f;
  return ((segment << 4) | mantissa) ^ mask;
}

function mulawExpand(code: number): number {
  const u = ~code & 0xff;
  const segment = (u >> 4) & 0x07;
  const magnitude = ((((u & 0x0f) << 3) + 0x84) << segment) - 0x84;
  return u & 0x80 ? -magnitude : magnitude;
}

function alawExpand(code: number): number {
  const a = code ^ 0x55;
  const segment = (a >> 4) & 0x07;
  let magnitude = (a & 0x0f) << 4;
  if (segment === 0) magnitude += 8;
  else magnitude = (magnitude + 0x108) << (segment - 1);
  return a & 0x80 ? magnitude : -magnitude;
}

function buildDecodeTable(expand: (code: number) => number): Int16Array {
  const table = new Int16Array(256);
  for (let code = 0; code < 256; code++) table[code] = expand(code);
  return table;
}

/** Index: the sample's 16-bit pattern (`sample & 0xffff`). */
function buildEncodeTable(shift: number, encode: (reduced: number) => number): Uint8Array {
  const table = new Uint8Array(65536);
  const max = (32767 >> shift) | 0;
  const half = 1 << (shift - 1);
  for (let sample = -32768; sample < 32768; sample++) {
    let reduced = (sample + half) >> shift;
    if (reduced > max) reduced = max;
    table[sample & 0xffff] = encode(reduced);
  }
  return table;
}

const MULAW_DECODE = buildDecodeTable(mulawExpand);
const ALAW_DECODE = buildDecodeTable(alawExpand);
const MULAW_ENCODE = buildEncodeTable(2, mulawEncode14);
const ALAW_ENCODE = buildEncodeTable(3, alawEncode13);

function checkOut<T extends { length: number }>(out: T, needed: number): T {
  if (out.length < needed) throw new RangeError(`output holds ${out.length} samples, ${needed} needed`);
  return out;
}

function decodeWith(table: Int16Array, input: Uint8Array, out?: Int16Array): Int16Array {
  const n = input.length;
  const target = out ? checkOut(out, n) : new Int16Array(n);
  for (let i = 0; i < n; i++) target[i] = table[input[i]!]!;
  return target;
}

function encodeWith(table: Uint8Array, input: Int16Array, out?: Uint8Array): Uint8Array {
  const n = input.length;
  const target = out ? checkOut(out, n) : new Uint8Array(n);
  for (let i = 0; i < n; i++) target[i] = table[input[i]! & 0xffff]!;
  return target;
}

/**
 * mu-law bytes to PCM16. Writes into `out` when given (it must hold `input.length` samples; extra room is left
 * untouched) and returns it.
 */
export function mulawDecode(input: Uint8Array, out?: Int16Array): Int16Array {
  return decodeWith(MULAW_DECODE, input, out);
}

/** PCM16 to mu-law bytes; `out`, when given, must hold `input.length` bytes. */
export function mulawEncode(input: Int16Array, out?: Uint8Array): Uint8Array {
  return encodeWith(MULAW_ENCODE, input, out);
}

/** A-law bytes to PCM16; `out`, when given, must hold `input.length` samples. */
export function alawDecode(input: Uint8Array, out?: Int16Array): Int16Array {
  return decodeWith(ALAW_DECODE, input, out);
}

/** PCM16 to A-law bytes; `out`, when given, must hold `input.length` bytes. */
export function alawEncode(input: Int16Array, out?: Uint8Array): Uint8Array {
  return encodeWith(ALAW_ENCODE, input, out);
}
