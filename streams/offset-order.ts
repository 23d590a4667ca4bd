// Kafka offsets as kafkajs gives them: decimal strings of non-negative integers without leading zeros.
// Comparing two such strings needs no BigInt (parsing one per message was a measurable share of the
// processors' main thread): the longer is larger, and at equal length the order is the strings' own.

/** a >= b for two kafkajs offsets. */
export function offsetAtLeast(a: string, b: string): boolean {
  return a.length === b.length ? a >= b : a.length > b.length;
}
