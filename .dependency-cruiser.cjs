/**
 * The layering of docs/architecture.md ("Layers and what each may import"), checked by `npm run lint`.
 * Each rule names what a layer may NOT import; a file's own layer is always allowed.
 *
 * Layers: codecs -> engines -> core -> pipeline -> gateway; control-api beside gateway; cli (the composition
 * root), bench and test above everything. `testing/` folders hold test helpers (fakes that are real local
 * servers, fixtures): only tests, other testing helpers, bench and cli's test entry points may use them.
 */
const LAYERS = '^(codecs|engines|core|pipeline|gateway|control-api|cli|bench|test)/';
const TEST_FILE = '\\.test\\.ts$';
const TESTING = '(^|/)testing/';
/** The simulated phone network and callers: see the gateway rule. */
const SANDBOX_CARRIER = '^gateway/carriers/sandbox/';

/**
 * What each layer's files (production, testing/ helpers and the unit tests beside them) may not import. Unit
 * tests may use the shared test infrastructure in test/support (reachable services, a private redis-server);
 * a test that needs another layer's parts is a cross-module test and lives under test/.
 */
const layer = (name, from, forbidden, comment, pathNot = []) => ({
  name,
  comment,
  severity: 'error',
  from: { path: from, pathNot },
  to: { path: forbidden, pathNot: TEST_SUPPORT_FOR_TESTS },
});
/** Matched against the imported path; the importing file must be a test for the exemption (rule below). */
const TEST_SUPPORT_FOR_TESTS = '^test/support/';

module.exports = {
  forbidden: [
    layer(
      'codecs-import-nothing',
      '^codecs/',
      '^(engines|core|pipeline|gateway|control-api|cli|bench|test)/',
      'codecs are pure audio: they import nothing of ours',
    ),
    layer(
      'engines-import-codecs',
      '^engines/',
      '^(core|pipeline|gateway|control-api|cli|bench|test)/',
      'engines import codecs only; their settings come in as constructor options',
    ),
    {
      name: 'core-imports-no-media-no-http',
      comment:
        "core imports no media and no HTTP: where a domain service needs an engine, it takes the engine's interface type (type-only) and the composition root hands it an instance",
      severity: 'error',
      from: { path: '^core/' },
      to: { path: '^(codecs|pipeline|gateway|control-api|cli|bench|test)/', pathNot: TEST_SUPPORT_FOR_TESTS },
    },
    {
      name: 'core-takes-engine-types-only',
      severity: 'error',
      from: { path: '^core/' },
      to: { path: '^engines/', dependencyTypesNot: ['type-only'] },
    },
    layer(
      'pipeline-imports-engines-codecs-core',
      '^pipeline/',
      '^(gateway|control-api|cli|bench|test)/',
      'the pipeline imports engines, codecs and core',
    ),
    layer(
      'gateway-imports-pipeline-codecs-core',
      '^gateway/',
      '^(engines|control-api|cli|bench|test)/',
      'the gateway imports pipeline, codecs and core; engines reach it through the pipeline, built by the composition root',
      [SANDBOX_CARRIER],
    ),
    layer(
      'sandbox-carrier-imports-engines-too',
      SANDBOX_CARRIER,
      '^(control-api|cli|bench|test)/',
      'the sandbox carrier is the phone network and its callers, simulated: a client of the gateway (over a real WebSocket, like a carrier) that speaks with a TTS voice and listens with a VAD, as a person on the phone would; it is no part of the media server, so it may use engines',
    ),
    {
      name: 'only-tests-use-test-support',
      comment:
        'test/support is for tests (*.test.ts) and bench; production code and testing/ helpers never import it',
      severity: 'error',
      from: { path: '^(codecs|engines|core|pipeline|gateway|control-api|cli)/', pathNot: TEST_FILE },
      to: { path: TEST_SUPPORT_FOR_TESTS },
    },
    layer(
      'control-api-imports-core-engines',
      '^control-api/',
      '^(codecs|pipeline|gateway|cli|bench|test)/',
      'the control API imports core and engines, and reaches live calls through core services and the coordinator, never the gateway',
    ),
    {
      name: 'no-testing-helpers-in-production',
      comment: 'testing/ helpers serve tests and benchmarks; production code never imports them',
      severity: 'error',
      from: {
        path: '^(codecs|engines|core|pipeline|gateway|control-api|cli)/',
        pathNot: [TEST_FILE, TESTING],
      },
      to: { path: TESTING },
    },
    {
      name: 'no-core-cycles',
      comment:
        'core modules import each other one way: repositories in store, rules in their domain, shared types in leaf files',
      severity: 'error',
      from: { path: '^core/' },
      to: { path: '^core/', circular: true },
    },
    {
      name: 'no-unresolvable',
      severity: 'error',
      from: { path: LAYERS },
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)node_modules/|^data/|\\.d\\.ts$' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      extensions: ['.ts', '.js', '.json'],
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
    },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
