// V8 flags some commands run under. They size the heap, so they must be given when node starts (setting
// them later through v8.setFlagsFromString has no effect on a heap that already exists).
//
// The processors run under three: a 64 MB young generation, so a step's short-lived objects (alive for a
// rollout-batch window plus a transaction) die young instead of being copied and promoted; one V8 helper thread,
// so on 2 cores the transaction worker's messages do not wait behind GC helpers; and a 256 MB old generation
// before any mark-compact, since V8 counts the worker's many short-lived ArrayBuffers against that limit. The
// measurements behind each: docs/results/processors.md#node-flags.
export const PROCESSORS_NODE_FLAGS = Object.freeze(['--max-semi-space-size=64', '--v8-pool-size=1', '--initial-old-space-size=256']);

/** The node flags `trajflow <args>` runs under. */
export function nodeFlagsFor(args) {
  const [command, sub] = args;
  if (command === 'processors' || (command === 'bench' && sub === 'processors')) return PROCESSORS_NODE_FLAGS;
  return [];
}

/** The flags of `nodeFlagsFor(args)` this process was not started with (on its command line or in NODE_OPTIONS). */
export function missingNodeFlags(args, execArgv = process.execArgv, nodeOptions = process.env.NODE_OPTIONS ?? '') {
  const given = new Set([...execArgv, ...nodeOptions.split(/\s+/)].map((flag) => flag.split('=')[0].replaceAll('_', '-')));
  return nodeFlagsFor(args).filter((flag) => !given.has(flag.split('=')[0]));
}
