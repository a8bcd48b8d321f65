import { existsSync } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';

/** Debian's Chromium, which `.ci/run` installs; browser suites skip without it. */
export const CHROMIUM = '/usr/bin/chromium';
export const chromiumMissing = !existsSync(CHROMIUM) && 'chromium is not installed';

/** Headless Chromium whose microphone is `wav` (looped), with autoplay and no permission prompts. */
export function launchChromium(wav: string): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      '--use-fake-device-for-media-stream',
      '--use-fake-ui-for-media-stream',
      `--use-file-for-fake-audio-capture=${wav}`,
      '--autoplay-policy=no-user-gesture-required',
    ],
  });
}
