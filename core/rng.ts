// A small seeded PRNG (mulberry32) for everything that must draw the same numbers again from the same seed:
// the environments (every draw comes from an Rng built from reset(seed), never Math.random, so the same seed
// and the same actions give the same episode), the policies' sampling, and the learner's initial weights,
// minibatch order and scoring pairs.

/** Independent draw streams of one seed, so e.g. FrozenLake's map does not depend on how many slips were drawn. */
export const RngStream = {
  task: 1,
  dynamics: 2,
  policy: 3,
  check: 4,
} as const;

/** Mixes a 32-bit value (the murmur3 finalizer): nearby seeds give unrelated states. */
function mix32(x: number): number {
  let h = x >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

export class Rng {
  private state: number;

  /**
   * @param seed a non-negative safe integer (seeds above 2^32 are folded in, not truncated)
   * @param stream which independent stream of that seed (see RngStream)
   */
  constructor(seed: number, stream = 0) {
    const low = seed >>> 0;
    const high = Math.floor(seed / 0x1_0000_0000) >>> 0;
    this.state = mix32(low ^ mix32(high + 0x9e3779b9) ^ mix32(Math.imul(stream + 1, 0x27d4eb2f)));
  }

  /** A float in [0, 1) (mulberry32). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in [0, n), like numpy's randint(n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  /** An integer in [low, high], both ends included, like Python's random.randint. */
  intBetween(low: number, high: number): number {
    return low + this.int(high - low + 1);
  }

  /** One element, uniformly (Python's random.choice). */
  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new RangeError('Rng.pick needs at least one item');
    return items[this.int(items.length)] as T;
  }

  /** True with probability p. */
  chance(p: number): boolean {
    return this.next() < p;
  }
}
