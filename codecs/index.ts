/**
 * Pure audio: G.711, PCM16 helpers, resampling, framing, Opus and WAV. No I/O; imports nothing of ours.
 * Canonical audio is PCM16 mono 16 kHz in 20 ms frames (docs/architecture.md, "Media path").
 */
export {
  ByteFramer,
  type ByteFramerOptions,
  CANONICAL_RATE,
  FRAME_MS,
  Framer,
  samplesPerFrame,
} from './framing.ts';
export { alawDecode, alawEncode, mulawDecode, mulawEncode } from './g711.ts';
export { OpusCodec, type OpusOptions, type OpusRate } from './opus.ts';
export {
  deinterleave,
  floatToPcm16,
  interleave,
  type Level,
  MIN_DBFS,
  measureLevel,
  pcm16FromBytes,
  pcm16ToBytes,
  pcm16ToFloat,
} from './pcm16.ts';
export { samplePeak } from './peak.ts';
export { PrefixView } from './prefix-view.ts';
export { type ResampleQuality, Resampler, type ResamplerOptions } from './resample.ts';
export { readWav, WAV_HEADER_BYTES, type WavAudio, wavHeader, writeWav } from './wav.ts';
