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
//
// And a 256 MB old generation before any mark-compact: V8 counts the ArrayBuffers an isolate allocates
// against its old generation's limit, and the transaction worker's heap is small (≈ 9 MB live) while it
// takes in every transaction's packed messages and builds its produce requests (megabytes a second of
// buffers): its limit (≈ 25–40 MB) was crossed every 100–150 ms, each time a full mark-compact (≈ 30 in
// a 4-second throughput run, a third of the worker's CPU, their marking on the one helper thread too).
// --initial-old-space-size also makes that size the floor under which V8 skips full GCs (heap.cc), so the
// limit does not shrink back after the first one. It applies to the main isolate as well (mark-compacts
// ≈ 22 → 11 per run). AMD EPYC 2-core VM, scratch/proc-prof.ts, 4,000 groups, 2 runs in one process,
// alternating with and without, twice: worker thread 8.9–11.6 vs 11.0–19.5 µs per step, V8 helper thread
// 8.7–12.8 vs 10.5–15.5, steps/s 27.2k–28.1k (cold) and 31.1k–31.4k (warm) vs 24.0k–26.3k and 29.0k–29.7k.
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
