/**
 * The structure docs/architecture.md describes, held by CI: the layering check (`npm run lint:layers`) fails on
 * a forbidden import, no file cites a design document that is not in the repository, wiring functions stay
 * short, and stored JSON is cast nowhere but in its decoders.
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

/** Production code: the layers, without tests and testing/ helpers. */
const PRODUCTION =
  /^(codecs|engines|core|pipeline|gateway|control-api|cli)\/(?!.*(\.test\.ts$|(^|\/)testing\/)).*\.ts$/;
/** The one decoder of each stored JSON shape: agent settings, a call's latency summary. */
const DECODERS = new Set(['core/agents/stored.ts', 'core/store/call-latency.ts']);
/** Names under which stored JSON travels: an agent record's `content`, a call's `latency`. */
const STORED_JSON = /\b(content|latency)\b/;

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

/**
 * Casts (`x as T`, `x as unknown as T`, `<T>x`) of stored JSON in `text`, as `file:line`: whatever is cast
 * names an agent's `content` or a call's `latency`. Those values are `unknown` (agent content) or typed by their
 * decoder (latency), so a cast there is a second, unchecked decoder.
 */
function storedJsonCasts(file: string, text: string): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isAsExpression(node) || ts.isTypeAssertionExpression(node)) {
      let operand = node.expression;
      while (ts.isAsExpression(operand) || ts.isParenthesizedExpression(operand))
        operand = operand.expression;
      if (STORED_JSON.test(operand.getText(source))) {
        found.push(`${file}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}`);
        return; // `x as unknown as T` is one cast
      }
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

  test('the layering check fails on an import cycle among core modules', () => {
    const tag = `${process.pid}-${Date.now().toString(36)}`;
    const one = `core/cycle-scratch-a-${tag}.ts`;
    const other = `core/cycle-scratch-b-${tag}.ts`;
    scratch(one, `import { b } from './${path.basename(other)}';\nexport const a = () => b;\n`);
    scratch(other, `import { a } from './${path.basename(one)}';\nexport const b = () => a;\n`);
    const refused = cruise(one);
    assert.notEqual(refused.status, 0, refused.output);
    assert.match(refused.output, /no-core-cycles/);
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

  test('stored agent and latency JSON is cast nowhere but in its decoder', () => {
    // The check sees the casts it is for, and not a decoder's call.
    assert.deepEqual(
      storedJsonCasts(
        'example.ts',
        [
          'const a = record.content as unknown as AgentSettings;',
          'const b = (revision?.content as { tools?: unknown }).tools;',
          'const c = <CallLatency>call.latency;',
          'const d = storedSettings(record.content);',
          'const e = storedLatency(JSON.parse(row.latency));',
        ].join('\n'),
      ),
      ['example.ts:1', 'example.ts:2', 'example.ts:3'],
    );
    const production = trackedFiles().filter((file) => PRODUCTION.test(file) && !DECODERS.has(file));
    assert.ok(
      production.includes('core/agents/service.ts') && production.includes('gateway/calls/call-run.ts'),
    );
    const casts = production.flatMap((file) =>
      storedJsonCasts(file, readFileSync(path.join(ROOT, file), 'utf8')),
    );
    assert.deepEqual(
      casts,
      [],
      `decode stored JSON with its decoder (storedSettings, storedLatency) instead of casting it: ${casts.join(', ')}`,
    );
  });
});
