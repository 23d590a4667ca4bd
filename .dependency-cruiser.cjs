// The layer order (docs/design/layers.md): every import points down this list, never up, and nothing in it
// imports test/. Folders on one line are peers: they may import each other where a rule below allows it,
// never in a cycle. `npm test` runs `npm run deps` (depcruise with these rules) and fails on a violation.
const LAYERS = [
  ['core'],
  ['schemas', 'tokenizer'],
  ['streams'],
  ['infra'],
  ['envs', 'rollout', 'processors', 'learner', 'storage', 'detectors'],
  ['api', 'web', 'sdk', 'gateway'], // sdk/: the package's entry (package.json "exports"), over core, schemas, streams and envs; gateway/: the OpenAI-compatible gateway (imports api's auth and limits)
  ['cli'],
  ['bench'],
  ['bin'], // the entry: the command table (bin/main.ts) loads every command, bench included
];

const folder = (names) => `^(${names.join('|')})/`;

// web/static/ is the dashboard's browser code, served as it is (no build step): it imports uPlot by the URL the
// page loads it from (web/router.ts serves node_modules/uplot/dist/ there), which no resolver on disk finds.
const UPLOT_URL = '^/vendor/uplot/uPlot[.]esm[.]js$';
const browserRules = [
  {
    name: 'browser-code-imports-browser-code',
    comment: 'web/static/ runs in the browser: it may import only other web/static/ files (its JSDoc types included) and the uPlot the page serves',
    severity: 'error',
    from: { path: '^web/static/' },
    to: { pathNot: `^web/static/|${UPLOT_URL}` },
  },
  {
    name: 'browser-not-to-unresolvable',
    comment: 'an import of the browser code must resolve, but for the uPlot URL the server answers',
    severity: 'error',
    from: { path: '^web/static/' },
    to: { couldNotResolve: true, pathNot: UPLOT_URL },
  },
  {
    name: 'no-import-of-browser-code',
    comment: 'web/static/ is files the server sends to the browser (web/router.ts), not modules: only tests import it, for its types',
    severity: 'error',
    from: { pathNot: '^(web/static|test)/' },
    to: { path: '^web/static/' },
  },
];

const againstTheOrder = LAYERS.slice(0, -1).map((layer, i) => ({
  name: `layer-${layer.join('-')}`,
  comment: `${layer.join(', ')} sit below ${LAYERS.slice(i + 1)
    .flat()
    .join(', ')}: they must not import them`,
  severity: 'error',
  from: { path: folder(layer) },
  to: { path: folder(LAYERS.slice(i + 1).flat()) },
}));

/** Peers of the domain layer: which of them each may use. */
const peers = [
  { from: 'processors', may: [], why: 'the processors are stream logic over events: they know no environment, model or store' },
  { from: 'storage', may: [], why: 'storage writes and reads ClickHouse; the parts that use it import it, not the other way' },
  { from: 'envs', may: [], why: 'environments and the policy interface know nothing of rollouts or training: the rollout workers and the learner import them, not the other way' },
  {
    from: 'rollout',
    may: ['envs/', 'learner/policy/'],
    why: "the rollout workers play the environments; `trajflow actors` samples with the learner's transformer policy when asked (learner/policy/actors-provider.ts)",
  },
  { from: 'detectors', may: ['storage/'], why: 'the collapse detectors read the stored history through the read model' },
  {
    from: 'learner',
    may: ['envs/', 'rollout/', 'processors/', 'storage/'],
    why: "the learner evaluates on envs, plays episodes in process and follows policy versions with rollout's code, replays through the processors' core and reads stored trajectories",
  },
];
const DOMAIN = ['envs', 'rollout', 'processors', 'learner', 'storage', 'detectors'];
const peerRules = peers.map(({ from, may, why }) => ({
  name: `peers-${from}`,
  comment: why,
  severity: 'error',
  from: { path: `^${from}/` },
  to: { path: folder(DOMAIN.filter((d) => d !== from)), ...(may.length > 0 ? { pathNot: `^(${may.join('|')})` } : {}) },
}));

module.exports = {
  forbidden: [
    { name: 'no-circular', comment: 'a cycle makes two modules one: split them or move what they share down a layer', severity: 'error', from: {}, to: { circular: true } },
    {
      name: 'no-test-in-production',
      comment: 'production code must not import test/ (fixtures a bench needs live in bench/load)',
      severity: 'error',
      from: { pathNot: '^test/' },
      to: { path: '^test/' },
    },
    // test/sdk/app/ runs where the packed SDK is installed: its `import … from 'trajflow'` resolves there (dist/ is built by `npm pack`).
    { name: 'not-to-unresolvable', severity: 'error', from: { pathNot: '^(test/sdk/app|web/static)/' }, to: { couldNotResolve: true } },
    {
      name: 'sdk-is-an-entry',
      comment: "sdk/ is what another project imports: code in the repository imports the module it needs, never the package's entry",
      severity: 'error',
      from: { pathNot: '^(sdk|test)/' },
      to: { path: '^sdk/' },
    },
    ...againstTheOrder,
    ...peerRules,
    ...browserRules,
  ],
  options: {
    tsPreCompilationDeps: true,
    // The browser code names its types in JSDoc (`@import`): those imports obey the rules too.
    detectJSDocImports: true,
    tsConfig: { fileName: 'tsconfig.json' },
    doNotFollow: { path: 'node_modules' },
    exclude: { path: ['node_modules'] },
    // tsx and assemblyscript publish subpaths through package.json "exports" conditions.
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'] },
  },
};
