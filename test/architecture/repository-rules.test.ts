/**
 * The structure docs/architecture.md describes, held by CI: the layering check (`npm run lint:layers`) fails on
 * a forbidden import, and no file cites a design document that is not in the repository.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const scratchFiles: string[] = [];
/** Wiring code a person reads top to bottom: no function in it is longer than this. */
const MAX_WIRING_FUNCTION_LINES = 80;
const WIRING = /^(cli\/.*|gateway\/server|control-api\/routes\/.*)\.ts$/;

function trackedFiles(): string[] {
  const listed = spawnSync('git', ['ls-files', '-z'], { cwd: ROOT, encoding: 'utf8' });
  assert.equal(listed.status, 0, listed.stderr);
  return listed.stdout.split('\0').filter(Boolean);
}

/** Functions (declarations, methods, arrows) longer than `max` lines, as `file:line (n lines)`. */
function longFunctions(file: string, max: number): string[] {
  const source = ts.createSourceFile(
    file,
    readFileSync(path.join(ROOT, file), 'utf8'),
    ts.ScriptTarget.ES2022,
    true,
  );
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const first = source.getLineAndCharacterOfPosition(node.getStart()).line;
      const lines = source.getLineAndCharacterOfPosition(node.getEnd()).line - first + 1;
      if (lines > max) found.push(`${file}:${first + 1} (${lines} lines)`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** A scratch module at `relative` (inside a layer), removed after the suite. */
function scratch(relative: string, source: string): string {
  const file = path.join(ROOT, relative);
  writeFileSync(file, source);
  scratchFiles.push(file);
  return relative;
}

function cruise(file: string): { status: number | null; output: string } {
  const result = spawnSync(
    process.execPath,
    [
      path.join(ROOT, 'node_modules/dependency-cruiser/bin/dependency-cruise.mjs'),
      '--config',
      '.dependency-cruiser.cjs',
      '--output-type',
      'err',
      file,
    ],
    { cwd: ROOT, encoding: 'utf8' },
  );
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

describe('architecture rules', () => {
  after(() => {
    for (const file of scratchFiles) rmSync(file, { force: true });
  });

  test('the layering check fails on a forbidden import and passes an allowed one', () => {
    const tag = `${process.pid}-${Date.now().toString(36)}`;
    const forbidden = scratch(
      `codecs/layering-scratch-${tag}.ts`,
      "import { loadConfig } from '../core/config.ts';\nexport const scratch = loadConfig;\n",
    );
    const refused = cruise(forbidden);
    assert.notEqual(refused.status, 0, refused.output);
    assert.match(refused.output, /codecs-import-nothing/);

    const allowed = scratch(
      `codecs/layering-scratch-ok-${tag}.ts`,
      "import { FRAME_MS } from './framing.ts';\nexport const scratch = FRAME_MS;\n",
    );
    const passed = cruise(allowed);
    assert.equal(passed.status, 0, passed.output);
  });

  test('no file cites a design document outside the repository', () => {
    const files = trackedFiles().filter((f) => /\.(ts|js|cjs|mjs|md|json|yml|yaml)$/.test(f));
    // Documents that lived beside the code but never in it; docs/architecture.md and /openapi.json replace them.
    const outside = /\bARCHITECTURE\.md\b|\bspec\/interface\.md\b|\breference\/[\w-]+\.md\b/;
    const citing = files.filter((file) => {
      if (file === 'test/architecture/repository-rules.test.ts') return false;
      return outside.test(readFileSync(path.join(ROOT, file), 'utf8'));
    });
    assert.deepEqual(citing, [], `cite documents outside the repository: ${citing.join(', ')}`);
  });

  test(`no function in the wiring code is longer than ${MAX_WIRING_FUNCTION_LINES} lines`, () => {
    const wiring = trackedFiles().filter((file) => WIRING.test(file) && !file.endsWith('.test.ts'));
    assert.ok(wiring.includes('cli/serve.ts'));
    const long = wiring.flatMap((file) => longFunctions(file, MAX_WIRING_FUNCTION_LINES));
    assert.deepEqual(long, [], `split these into named steps: ${long.join(', ')}`);
  });
});
