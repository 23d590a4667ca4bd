// V8 flags some commands run under. They size the heap, so they must be given when node starts (setting
// them later through v8.setFlagsFromString has no effect on a heap that already exists).
//
// The processors: a step's decoded event, its trajectory and its sample live from the step's arrival until
// their transaction commits (a rollout-batch window plus a transaction: ≈ 100–200 ms). With node's default
// 16 MB semi-space the young generation filled every ≈ 100 ms at full speed, so ≈ 45 % of it survived each
// scavenge and was copied, then promoted and marked again; GC was the largest share of the processors' CPU.
// At 64 MB most of it dies young. Measured with scratch/proc-split.ts on the 2-core VM, 3 runs each,
// interleaved: processors CPU 88.8 → 76.2 µs per step, 17.2k → 19.5k steps/s. At a steady 5,000 steps/s
// the main thread's GC pauses went from 96–99 (1.6–2.0 s in 15 s) to 30–38 (≈ 0.5 s), latency p99 203–263
// → 152–226 ms (3 alternating pairs).
//
// And one V8 helper thread instead of four: on a 2-core machine the transaction worker's messages (and the
// replies) waited for a core behind GC helpers; with --v8-pool-size=1 the latency's p50 at a steady 5,000
// steps/s was 81–88 ms against 96–106 ms, 3 alternating pairs, the CPU per step unchanged within the noise.
export const PROCESSORS_NODE_FLAGS = Object.freeze(['--max-semi-space-size=64', '--v8-pool-size=1']);

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
