// Codec throughput on one core: encode, decode, and encode+decode of ~1 KB step events.
// Run: node --import tsx test/schemas/codec.bench.ts [trials=7] [secondsPerTrial=0.5]
// Not a *.spec.ts file, so the test runner skips it. Other processes share this 2-core machine, so
// each measurement is repeated and the best and median trials are reported; each trial also gives
// events per second of this process's CPU time (process.cpuUsage, all threads, GC included).
import { EventCodec, SchemaRegistry, type StepEvent } from '../../schemas/index.js';
import { makeStep } from '../fixtures/events.js';

const trials = Number(process.argv[2] ?? 7);
const seconds = Number(process.argv[3] ?? 0.5);
const codec = new EventCodec(SchemaRegistry.fromSchemasDir());
const steps: StepEvent[] = Array.from({ length: 1024 }, (_, i) => makeStep({}, i));
const encoded = steps.map((s) => codec.encode('step', s));
const meanBytes = encoded.reduce((sum, b) => sum + b.length, 0) / encoded.length;
let sink = 0;

function trial(op: (i: number) => void): { wall: number; cpu: number } {
  let n = 0;
  const cpu = process.cpuUsage();
  const start = process.hrtime.bigint();
  const budget = BigInt(Math.round(seconds * 1e9));
  let elapsed = 0n;
  while (elapsed < budget) {
    for (let i = 0; i < 10_000; i++, n++) op(n & 1023);
    elapsed = process.hrtime.bigint() - start;
  }
  const used = process.cpuUsage(cpu);
  return { wall: (n * 1e9) / Number(elapsed), cpu: n / ((used.user + used.system) / 1e6) };
}

function measure(name: string, op: (i: number) => void): void {
  for (let i = 0; i < 200_000; i++) op(i & 1023); // warm up the JIT
  const results = Array.from({ length: trials }, () => trial(op)).sort((a, b) => b.wall - a.wall);
  const fmt = (x: number) => Math.round(x).toLocaleString('en-US').padStart(9);
  const median = results[Math.floor(results.length / 2)]!;
  console.log(
    `${name.padEnd(14)} best ${fmt(results[0]!.wall)}/s  median ${fmt(median.wall)}/s  (per CPU-second: best ${fmt(Math.max(...results.map((r) => r.cpu)))})`,
  );
}

console.log(`${trials} trials x ${seconds}s; step events of ${meanBytes.toFixed(0)} bytes on average; node ${process.version}`);
measure('encode', (i) => (sink += codec.encode('step', steps[i]!).length));
measure('decode', (i) => (sink += codec.decode('step', encoded[i]!).stepIndex));
measure('encode+decode', (i) => (sink += codec.decode('step', codec.encode('step', steps[i]!)).stepIndex));
if (sink === 42) console.log(''); // keeps the work observable
