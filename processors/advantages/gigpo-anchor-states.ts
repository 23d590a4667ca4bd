// GiGPO anchor-state grouping (docs/algorithms.md §3 step 4, Eq. 6; verl-agent `build_step_group`): inside one
// episode group, the step rows are clustered by their anchor state. A cluster may hold steps of different
// trajectories *and* different timesteps.
//
// - Exact match (default): rows with the same anchor key share a cluster. Our anchor key is the step's
//   `stateKey`, the environment's canonical string of the state before the action; verl-agent hashes the
//   raw observation with `to_hashable`, so a canonical string is the same thing already hashed.
// - Similarity (option): greedy, in row order — a row joins the first existing cluster whose
//   representative (its first member) has similarity(row, representative) ≥ threshold, else it starts a
//   new cluster. verl-agent uses difflib.SequenceMatcher(None, a, b).ratio() with threshold 0.95 and
//   asserts 0 < threshold < 1; supply your own `fn` (difflib's ratio, with its autojunk heuristic, is not
//   ported here), returning a similarity in [0, 1].
// - A null anchor (the environment gave no state key) is its own cluster of one: it cannot be matched,
//   so that step gets no step-level advantage (A^S = 0). verl-agent always has an observation; this case
//   is ours.
import { ConfigError } from '../../core/errors.js';

export interface AnchorSimilarity {
  /** Similarity of two anchor keys in [0, 1]; symmetric is expected but not required (called as fn(row, representative)). */
  fn: (a: string, b: string) => number;
  /** Join a cluster when fn ≥ threshold; in (0, 1) as verl-agent asserts (its default 0.95). */
  threshold: number;
}

export interface AnchorGroups {
  /** Cluster index of each row, in row order; indices are dense, in order of first appearance. */
  clusterOf: number[];
  /** Number of rows in each cluster. */
  sizes: number[];
}

export function checkAnchorSimilarity(similarity: AnchorSimilarity): void {
  if (typeof similarity.fn !== 'function') {
    throw new ConfigError('gigpo.similarity.fn must be a function (a, b) => similarity in [0, 1].');
  }
  if (!(similarity.threshold > 0 && similarity.threshold < 1)) {
    throw new ConfigError(
      `gigpo.similarity.threshold must be in (0, 1), e.g. 0.95 (verl-agent's default); got ${similarity.threshold}. For exact matching leave similarity unset.`,
    );
  }
}

/** Clusters the rows of one episode group by anchor key. */
export function buildAnchorGroups(anchors: readonly (string | null)[], similarity?: AnchorSimilarity): AnchorGroups {
  if (similarity !== undefined) checkAnchorSimilarity(similarity);
  const clusterOf: number[] = [];
  const sizes: number[] = [];
  const exact = new Map<string, number>();
  const representatives: { key: string; cluster: number }[] = [];
  const open = (): number => {
    sizes.push(0);
    return sizes.length - 1;
  };
  for (const anchor of anchors) {
    let cluster: number | undefined;
    if (anchor === null) {
      cluster = open();
    } else if (similarity === undefined) {
      cluster = exact.get(anchor);
      if (cluster === undefined) {
        cluster = open();
        exact.set(anchor, cluster);
      }
    } else {
      cluster = representatives.find((rep) => similarity.fn(anchor, rep.key) >= similarity.threshold)?.cluster;
      if (cluster === undefined) {
        cluster = open();
        representatives.push({ key: anchor, cluster });
      }
    }
    clusterOf.push(cluster);
    sizes[cluster]!++;
  }
  return { clusterOf, sizes };
}
