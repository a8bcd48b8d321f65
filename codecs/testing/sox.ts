import { spawnSync } from 'node:child_process';
import { requiredInCi } from './ci.ts';

/**
 * SoX as an independent oracle for codec tests. In CI (`CI=1`) SoX is required: a test that needs it fails
 * when it is missing. Elsewhere such tests are skipped with a message saying how to install it.
 */

const INSTALL_HINT = 'install it with `apt-get update && apt-get install -y sox`';

function soxInstalled(): boolean {
  const probe = spawnSync('sox', ['--version'], { encoding: 'utf8' });
  return probe.status === 0;
}

const installed = soxInstalled();

/** For `test(name, { skip: soxSkip }, ...)`: false when the test must run, else the reason it is skipped. */
export const soxSkip: string | false =
  installed || requiredInCi() ? false : `sox is not installed (${INSTALL_HINT}); oracle tests skipped`;

/**
 * Run `sox` with stdin and stdout as raw streams ("-" in `args`); returns stdout. Dither is always off (-D):
 * SoX otherwise adds noise whenever it reduces precision, which would make it useless as an oracle.
 */
export function sox(args: readonly string[], input: Uint8Array): Buffer {
  if (!installed) throw new Error(`sox is required to run this test in CI; ${INSTALL_HINT}`);
  const run = spawnSync('sox', ['-D', '-V1', ...args], { input, maxBuffer: 64 * 1024 * 1024 });
  if (run.status !== 0) {
    throw new Error(`sox ${args.join(' ')} failed (${run.status}): ${run.stderr.toString()}`);
  }
  return run.stdout;
}

/** SoX arguments describing a raw mono PCM16 stream at `rateHz`. */
export function rawPcm16(rateHz: number): string[] {
  return ['-t', 'raw', '-r', String(rateHz), '-e', 'signed', '-b', '16', '-c', '1', '-L'];
}
