// Which transactional producers a fence (a new assignment) lets go and which it initialises. Pure: the worker
// (transaction-worker.ts) acts on the plan.
//
// Every partition of the new assignment is initialised again, those this member already held included. A
// member cannot tell that it held a partition without a break: one dropped from the consumer group for a
// generation (a session timeout on a loaded machine) never hears of it — its onAssignment does not run — while
// the partition's owner of that generation initialised the producer and fenced this member's. Kept, that
// producer's first transaction of the new generation is refused (producer fenced), its output and the steps
// it acknowledged dropped, and the partition written by nobody until the next rebalance (measured with two
// TransactionClients in test/processors/exactly-once/transaction-client.int.spec.ts). One InitProducerId per
// partition per rebalance is the price.
export interface FencePlan {
  /** Producers of partitions no longer assigned: disconnected. */
  readonly release: readonly number[];
  /** Partitions whose producer is (re)initialised, fencing whoever held the id before. */
  readonly initialise: readonly number[];
}

export function fencePlan(held: Iterable<number>, assigned: Iterable<number>): FencePlan {
  const wanted = [...new Set(assigned)].sort((a, b) => a - b);
  const keep = new Set(wanted);
  return { release: [...new Set(held)].filter((p) => !keep.has(p)).sort((a, b) => a - b), initialise: wanted };
}
