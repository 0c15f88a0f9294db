/**
 * The layering of the architecture (docs/decisions.md, "The layering, checked"), as rules that fail
 * `npm run lint`. Paths are regular expressions on paths from the project root.
 *
 * A folder of src/modules is a module; its public face is its `*.service.ts` (the functions other modules
 * call) and its `*.schemas.ts` (the shapes of what they exchange). Everything else in it (tables,
 * repositories, routes, jobs, provider clients, pages) is its own business.
 *
 * test/fixtures/dependency-rules/ is a small tree laid out like this one that breaks every rule on purpose
 * (test/dependency-rules.test.ts cruises it with this file): it is not part of the project's cruise.
 */

/** Test code: the tests beside the code they test, and the shared test folder. */
const TESTS = ['\\.test\\.ts$', '^test/']
/** A module's public face: what another module, or a test of another module, may import from it. */
const PUBLIC_FACE = '\\.(service|schemas)\\.ts$'

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment:
        'Files in a circle cannot be understood, tested or loaded one without the other, and an ESM circle ' +
        'can reach a binding before it is initialised. Type-only imports count too (tsPreCompilationDeps): ' +
        'a circle of types is still two files that change together. Break it by moving what both need ' +
        '(a shared type, a constant) into a file both import.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'platform-knows-no-module',
      severity: 'error',
      comment:
        'src/platform is what every module leans on and knows nothing of any module: a platform file ' +
        'importing a module (or src/app.ts, which registers them all) ties every module to that one. ' +
        "Pass what the platform needs in as a parameter. Platform tests fall under 'test-through-public-face'.",
      from: { path: '^src/platform/', pathNot: TESTS },
      to: { path: ['^src/modules/', '^src/app\\.ts$'] },
    },
    {
      name: 'no-test-code-in-production',
      severity: 'error',
      comment:
        'What ships (src without its tests) never imports a test, a test helper or fake, or the bench: ' +
        'the build compiles src alone, and a fake provider or a seeded secret must never answer in production.',
      from: { path: '^src/', pathNot: TESTS },
      to: { path: ['^test/', '^bench/', '\\.test\\.ts$'] },
    },
    {
      name: 'module-through-public-face',
      severity: 'error',
      comment:
        "A module reaches another module only through that module's services and schemas, never its " +
        'tables, repositories, routes, jobs, provider clients or pages: its rows and queries may then ' +
        'change without the rest of the service noticing, and every rule on its data is kept in one place.',
      from: { path: '^src/modules/([^/]+)/', pathNot: TESTS },
      to: { path: '^src/modules/[^/]+/', pathNot: ['^src/modules/$1/', PUBLIC_FACE] },
    },
    {
      name: 'test-through-public-face',
      severity: 'error',
      comment:
        'A test beside the code (src/**/*.test.ts) may import anything of its own module, and of another ' +
        "module only its services and schemas, like the module's code: a test reaching into another " +
        "module's tables or repository breaks whenever that module changes its storage. What a test needs " +
        "of another module's rows goes into a helper under test/helpers, which may import anything: the " +
        'helpers and fakes are cross-module by design (seeding rows, signing provider webhooks).',
      // $1: the test's module (src/modules/<module>/...), or `platform` or `cli` for the other tests of src,
      // for which every module is another module.
      from: { path: '^src/(?:modules/)?([^/]+)/.+\\.test\\.ts$' },
      to: { path: '^src/modules/[^/]+/', pathNot: ['^src/modules/$1/', PUBLIC_FACE] },
    },
  ],
  options: {
    tsConfig: { fileName: 'tsconfig.json' },
    // Type-only imports are dependencies too (see no-circular).
    tsPreCompilationDeps: true,
    doNotFollow: { path: 'node_modules' },
    // The deliberately broken tree of test/dependency-rules.test.ts, which cruises it on its own.
    exclude: { path: '^test/fixtures/dependency-rules/' },
    skipAnalysisNotInRules: true,
  },
}
