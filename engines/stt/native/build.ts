/**
 * Builds the resident PocketSphinx decoder (sphinx_decoder.c) at `npm ci` / `npm install`, when Debian's
 * `libpocketsphinx-dev` (with `libsphinxbase-dev`, found through pkg-config) is installed. Without it, one line
 * says so and the install succeeds: the sphinx engine then spawns `pocketsphinx_continuous` per utterance, if
 * that is installed, or reports itself unavailable. The output (build/) is git-ignored.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));

function libraryPresent(): boolean {
  const probe = spawnSync('pkg-config', ['--exists', 'pocketsphinx', 'sphinxbase'], { stdio: 'ignore' });
  return probe.error === undefined && probe.status === 0;
}

/** npm's own node-gyp (npm ships it; lifecycle scripts also find it on PATH), next to this Node's npm. */
function nodeGyp(): string[] | undefined {
  const bundled = path.join(
    path.dirname(process.execPath),
    '../lib/node_modules/npm/node_modules/node-gyp/bin/node-gyp.js',
  );
  if (existsSync(bundled)) return [process.execPath, bundled];
  const onPath = spawnSync('node-gyp', ['--version'], { stdio: 'ignore' });
  return onPath.error === undefined && onPath.status === 0 ? ['node-gyp'] : undefined;
}

function main(): number {
  if (!libraryPresent()) {
    console.log(
      'sphinx decoder: PocketSphinx headers not found (apt-get install libpocketsphinx-dev); not built, the sphinx STT will spawn pocketsphinx_continuous per utterance',
    );
    return 0;
  }
  const gyp = nodeGyp();
  if (!gyp) {
    console.log(
      'sphinx decoder: node-gyp not found; not built, the sphinx STT will spawn pocketsphinx_continuous',
    );
    return 0;
  }
  const [command, ...args] = gyp;
  const build = spawnSync(command!, [...args, 'rebuild'], { cwd: here, stdio: 'inherit' });
  if (build.status !== 0) {
    console.error('sphinx decoder: the build failed (see above)');
    return 1;
  }
  console.log('sphinx decoder: built');
  return 0;
}

process.exitCode = main();
