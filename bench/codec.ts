// Codec throughput on one core: encode, decode, and encode+decode of ~1 KB step events.
// Each measurement is repeated (the machines are shared and noisy) and the best and median trials are
// reported, with events per second of this process's CPU time as a cross-check.
import { EventCodec, SchemaRegistry, type StepEvent } from '../schemas/index.js';
import { makeStep } from './load/events.js';

export interface CodecRate {
  readonly best: number;
  readonly median: number;
  readonly perCpuSecond: number;
}

export interface CodecResult {
  readonly eventBytes: number;
  readonly encode: CodecRate;
  readonly decode: CodecRate;
  readonly encodeDecode: CodecRate;
}

export function measureCodec(options: { trials?: number; secondsPerTrial?: number } = {}): CodecResult {
  const { trials = 7, secondsPerTrial = 0.5 } = options;
  const codec = new EventCodec(SchemaRegistry.fromSchemasDir());
  const steps: StepEvent[] = Array.from({ length: 1024 }, (_, i) => makeStep({}, i));
  const encoded = steps.map((s) => codec.encode('step', s));
  let sink = 0;

  const trial = (op: (i: number) => void) => {
    let n = 0;
    const cpu = process.cpuUsage();
    const start = process.hrtime.bigint();
    const budget = BigInt(Math.round(secondsPerTrial * 1e9));
    let elapsed = 0n;
    while (elapsed < budget) {
      for (let i = 0; i < 10_000; i++, n++) op(n & 1023);
      elapsed = process.hrtime.bigint() - start;
    }
    const used = process.cpuUsage(cpu);
    return { wall: (n * 1e9) / Number(elapsed), cpu: n / ((used.user + used.system) / 1e6) };
  };
  const measure = (op: (i: number) => void): CodecRate => {
    for (let i = 0; i < 200_000; i++) op(i & 1023); // warm up the JIT
    const results = Array.from({ length: trials }, () => trial(op)).sort((a, b) => b.wall - a.wall);
    return {
      best: results[0]!.wall,
      median: results[Math.floor(results.length / 2)]!.wall,
      perCpuSecond: Math.max(...results.map((r) => r.cpu)),
    };
  };

  const result: CodecResult = {
    eventBytes: encoded.reduce((sum, b) => sum + b.length, 0) / encoded.length,
    encode: measure((i) => (sink += codec.encode('step', steps[i]!).length)),
    decode: measure((i) => (sink += codec.decode('step', encoded[i]!).stepIndex)),
    encodeDecode: measure((i) => (sink += codec.decode('step', codec.encode('step', steps[i]!)).stepIndex)),
  };
  if (sink === 42) console.log(''); // keeps the work observable to the optimiser
  return result;
}
