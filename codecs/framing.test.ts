/** Framing: exact frame sizes, carry-over between pushes, nothing lost or duplicated for any chunking. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { ByteFramer, FRAME_MS, Framer, samplesPerFrame } from './framing.ts';
import { concat } from './testing/signals.ts';

/** Cut `total` into consecutive chunk sizes drawn from `sizes` (cycled), the last one shortened. */
function chunkSizes(total: number, sizes: number[]): number[] {
  const out: number[] = [];
  let left = total;
  for (let i = 0; left > 0; i++) {
    const size = Math.min(left, sizes[i % sizes.length]!);
    out.push(size);
    left -= size;
  }
  return out;
}

describe('samplesPerFrame', () => {
  test('20 ms at each carried rate', () => {
    assert.equal(FRAME_MS, 20);
    assert.deepEqual([8000, 16000, 22050, 24000, 48000].map(samplesPerFrame), [160, 320, 441, 480, 960]);
  });

  test('refuses a rate with no whole number of samples in 20 ms', () => {
    assert.throws(() => samplesPerFrame(11025), RangeError);
    assert.throws(() => samplesPerFrame(0), RangeError);
  });
});

describe('Framer', () => {
  test('carries a partial frame over to the next push', () => {
    const framer = new Framer(4);
    assert.deepEqual(framer.push(Int16Array.of(1, 2, 3)), []);
    assert.equal(framer.pending, 3);
    const frames = framer.push(Int16Array.of(4, 5, 6, 7, 8, 9));
    assert.deepEqual(
      frames.map((f) => [...f]),
      [
        [1, 2, 3, 4],
        [5, 6, 7, 8],
      ],
    );
    assert.equal(framer.pending, 1);
    assert.deepEqual([...framer.flush()!], [9]);
    assert.equal(framer.flush(), undefined);
  });

  test('flush(true) pads the last frame with silence', () => {
    const framer = new Framer(160);
    framer.push(new Int16Array(100).fill(7));
    const last = framer.flush(true)!;
    assert.equal(last.length, 160);
    assert.equal(last[99], 7);
    assert.equal(last[100], 0);
    assert.equal(framer.pending, 0);
  });

  test('frames are copies: reusing the input buffer does not change them', () => {
    const framer = new Framer(2);
    const input = Int16Array.of(1, 2, 3, 4);
    const frames = framer.push(input);
    input.fill(0);
    assert.deepEqual(
      frames.map((f) => [...f]),
      [
        [1, 2],
        [3, 4],
      ],
    );
  });

  test('each frame is its own: later pushes and writes to other frames leave it as it was', () => {
    const framer = new Framer(3);
    const frames: Int16Array[] = [];
    for (let i = 0; i < 40; i++) frames.push(...framer.push(Int16Array.of(i, i + 1000)));
    assert.equal(frames.length, 26);
    for (const frame of frames) frame.fill(-1, 0, 1);
    frames.forEach((frame, k) => {
      const first = 3 * k;
      const sample = (n: number) => (n % 2 === 0 ? n / 2 : (n - 1) / 2 + 1000);
      assert.deepEqual([...frame], [-1, sample(first + 1), sample(first + 2)], `frame ${k}`);
    });
  });

  test('never loses or duplicates a sample, for any frame size and any chunking', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 400 }),
        fc.integer({ min: 0, max: 3000 }),
        fc.array(fc.integer({ min: 0, max: 1000 }), { minLength: 1, maxLength: 20 }),
        (size, total, sizes) => {
          const input = Int16Array.from({ length: total }, (_, i) => (i * 7919) % 65536);
          const framer = new Framer(size);
          const frames: Int16Array[] = [];
          let at = 0;
          for (const n of chunkSizes(
            total,
            sizes.map((s) => s || 1),
          )) {
            frames.push(...framer.push(input.subarray(at, at + n)));
            at += n;
            assert.ok(framer.pending < size);
          }
          assert.ok(frames.every((f) => f.length === size));
          const rest = framer.flush();
          assert.deepEqual(concat(rest ? [...frames, rest] : frames), input);
        },
      ),
    );
  });
});

describe('Framer.lend', () => {
  test('lends every sample once, in whole frames, for any frame size and any chunking', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 400 }),
        fc.integer({ min: 0, max: 3000 }),
        fc.array(fc.integer({ min: 1, max: 1000 }), { minLength: 1, maxLength: 20 }),
        (size, total, sizes) => {
          const input = Int16Array.from({ length: total }, (_, i) => (i * 7919) % 65536);
          const framer = new Framer(size);
          const lent: Int16Array[] = [];
          let at = 0;
          for (const n of chunkSizes(total, sizes)) {
            const chunk = input.slice(at, at + n);
            // A lent frame is only valid during the call: keep a copy, then scribble over the input.
            framer.lend(chunk, (frame) => lent.push(frame.slice()));
            chunk.fill(-1);
            at += n;
            assert.ok(framer.pending < size);
          }
          assert.ok(lent.every((f) => f.length === size));
          const rest = framer.flush();
          assert.deepEqual(concat(rest ? [...lent, rest] : lent), input);
        },
      ),
    );
  });
});

describe('ByteFramer', () => {
  test('fixed chunks: exactly one unit each (Vonage: 320 bytes at 8 kHz)', () => {
    const framer = new ByteFramer(320);
    const chunks = framer.push(new Uint8Array(1000));
    assert.deepEqual(
      chunks.map((c) => c.length),
      [320, 320, 320],
    );
    assert.equal(framer.pending, 40);
    const last = framer.flush()!;
    assert.equal(last.length, 320);
  });

  test('bounded chunks: multiples of 320, at least 3,200, at most 100 KB (Exotel)', () => {
    const framer = new ByteFramer(320, { minBytes: 3200, maxBytes: 100_000 });
    assert.deepEqual(framer.push(new Uint8Array(3000)), []);
    const chunks = framer.push(new Uint8Array(250_000));
    assert.deepEqual(
      chunks.map((c) => c.length),
      [99_840, 99_840, 53_120],
    );
    assert.equal(framer.pending, 200);
    const last = framer.flush()!;
    assert.equal(last.length, 3200);
  });

  test('flush pads with the given byte (mu-law silence is 0xff), or returns the rest as is', () => {
    const mulaw = new ByteFramer(160, { padByte: 0xff });
    mulaw.push(Uint8Array.of(1, 2, 3));
    const padded = mulaw.flush()!;
    assert.deepEqual([...padded.subarray(0, 4)], [1, 2, 3, 0xff]);
    assert.equal(padded.length, 160);
    const raw = new ByteFramer(160);
    raw.push(Uint8Array.of(9, 9));
    assert.deepEqual([...raw.flush(false)!], [9, 9]);
    assert.equal(raw.flush(), undefined);
  });

  test('refuses bounds that are not multiples of the unit', () => {
    assert.throws(() => new ByteFramer(320, { minBytes: 1000 }), RangeError);
    assert.throws(() => new ByteFramer(320, { minBytes: 3200, maxBytes: 640 }), RangeError);
    assert.throws(() => new ByteFramer(0), RangeError);
  });

  test('never loses or duplicates a byte, and every chunk obeys the bounds, for any chunking', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 64 }),
        fc.integer({ min: 1, max: 8 }),
        fc.integer({ min: 0, max: 8 }),
        fc.integer({ min: 0, max: 5000 }),
        fc.array(fc.integer({ min: 1, max: 900 }), { minLength: 1, maxLength: 10 }),
        (unit, minUnits, extraUnits, total, sizes) => {
          const min = unit * minUnits;
          const max = min + unit * extraUnits;
          const framer = new ByteFramer(unit, { minBytes: min, maxBytes: max });
          const input = Uint8Array.from({ length: total }, (_, i) => (i * 31) & 0xff);
          const chunks: Buffer[] = [];
          let at = 0;
          for (const n of chunkSizes(total, sizes)) {
            chunks.push(...framer.push(input.subarray(at, at + n)));
            at += n;
          }
          for (const c of chunks) assert.ok(c.length % unit === 0 && c.length >= min && c.length <= max);
          const rest = framer.flush(false);
          assert.deepEqual(new Uint8Array(Buffer.concat(rest ? [...chunks, rest] : chunks)), input);
        },
      ),
    );
  });
});
