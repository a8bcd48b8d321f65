/**
 * Whether the local engines' system packages are here. Tests that need them skip with a message elsewhere, but
 * run (and fail) in CI (`CI=1`), where the packages must be installed.
 */
import { requiredInCi } from '../../../codecs/testing/ci.ts';
import { SphinxTranscriber } from '../providers/sphinx.ts';
import { sphinxAddon } from '../providers/sphinx-resident.ts';
import { espeakInstalled } from './speech.ts';

const INSTALL_HINT =
  'apt-get install -y pocketsphinx pocketsphinx-en-us libpocketsphinx-dev espeak-ng, then npm ci';

/** For `test(name, { skip: sphinxSkip }, ...)`: false when the test must run, else why it is skipped. */
export const sphinxSkip: string | false =
  (SphinxTranscriber.available() && espeakInstalled()) || requiredInCi()
    ? false
    : `PocketSphinx or eSpeak NG is not installed (${INSTALL_HINT}); sphinx tests skipped`;

/** For tests of the resident decoder: also skipped (outside CI) when `npm ci` could not build it. */
export const residentSphinxSkip: string | false =
  sphinxSkip ||
  (sphinxAddon() || requiredInCi()
    ? false
    : `the resident PocketSphinx decoder is not built (${INSTALL_HINT}); its tests skipped`);

/** Fails the test with the install hint when the packages are missing (reached only in CI). */
export function requireSphinx(): void {
  if (!SphinxTranscriber.available()) throw new Error(`PocketSphinx is required in CI: ${INSTALL_HINT}`);
  if (!espeakInstalled()) throw new Error(`eSpeak NG is required in CI: ${INSTALL_HINT}`);
}
