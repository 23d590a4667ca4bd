// Step values from a group's own transition graph (our option for GiGPO, not in the paper): every
// trajectory of an episode group starts from the same task, so their steps are transitions of one
// environment instance. Keyed by anchor state and action text, they form an empirical MDP:
//   Q(s, a) = mean over the observed (s, a) transitions of [r + γ·V(s')],  V(s) = max_a Q(s, a),
// solved by value iteration; V after a terminal step is 0, and after a trajectory's last step that did
// not terminate (truncated, incomplete) it is also 0, as in the Monte-Carlo return.
//
// Why: GiGPO's step return R_t is the discounted return of the rest of *that* trajectory, so a good move
// followed by random ones scores like a bad move. Here a move is credited with the best continuation any
// rollout of the group found from where it led: a step toward a goal that some rollout reached from that
// state gets that rollout's discounted reward. On 512 untrained FrozenLake rollouts this raises the
// correlation between the step advantage and "the action was optimal" (docs/results/frozenlake.md).
// In deterministic environments (FrozenLake non-slippery, Sokoban) the backed-up values are exact for the
// observed graph; with stochastic transitions the mean over observed outcomes is a certainty-equivalent
// estimate, and the max over actions is optimistic where few outcomes were seen.
// Steps without an anchor are states of their own (never merged). Steps with the same anchor and the same
// action text are the same action.

export interface GroupTransition {
  /** Anchor state key before the action; null = a state of its own. */
  anchor: string | null;
  /** The action text (the step's `action`). */
  action: string;
  reward: number;
}

/** Value iteration stops when no value moves by more than this, or after MAX_SWEEPS sweeps. */
const TOLERANCE = 1e-12;
const MAX_SWEEPS = 1000;

/** Q(s_t, a_t) of every step, [trajectory][step], from the group's transition graph. */
export function groupBellmanValues(trajectories: readonly (readonly GroupTransition[])[], gamma: number): number[][] {
  const nodeOf = new Map<string, number>();
  let nodes = 0;
  const node = (anchor: string | null): number => {
    if (anchor === null) return nodes++;
    let id = nodeOf.get(anchor);
    if (id === undefined) {
      id = nodes++;
      nodeOf.set(anchor, id);
    }
    return id;
  };
  // Per step: its state node and the (state, action) edge it belongs to.
  const edgeOf = new Map<string, number>();
  const edges: { state: number; outcomes: { reward: number; next: number | null }[] }[] = [];
  const stepEdges: number[][] = [];
  const stepNodes = trajectories.map((steps) => steps.map((step) => node(step.anchor)));
  trajectories.forEach((steps, i) => {
    const row: number[] = [];
    steps.forEach((step, t) => {
      const state = stepNodes[i]![t]!;
      const key = `${state}\u0000${step.action}`;
      let edge = edgeOf.get(key);
      if (edge === undefined || step.anchor === null) {
        edge = edges.length;
        edges.push({ state, outcomes: [] });
        if (step.anchor !== null) edgeOf.set(key, edge);
      }
      // The last step's successor is unknown (terminal or cut off): its value counts as 0.
      const next = t + 1 < steps.length ? stepNodes[i]![t + 1]! : null;
      edges[edge]!.outcomes.push({ reward: step.reward, next });
      row.push(edge);
    });
    stepEdges.push(row);
  });

  const values = new Float64Array(nodes);
  const q = new Float64Array(edges.length);
  for (let sweep = 0; sweep < MAX_SWEEPS; sweep++) {
    edges.forEach((edge, e) => {
      let sum = 0;
      for (const { reward, next } of edge.outcomes) sum += reward + (next === null ? 0 : gamma * values[next]!);
      q[e] = sum / edge.outcomes.length;
    });
    const best = new Float64Array(nodes).fill(-Infinity);
    edges.forEach((edge, e) => {
      if (q[e]! > best[edge.state]!) best[edge.state] = q[e]!;
    });
    let change = 0;
    for (let n = 0; n < nodes; n++) {
      change = Math.max(change, Math.abs(best[n]! - values[n]!));
      values[n] = best[n]!;
    }
    if (change <= TOLERANCE) break;
  }
  return stepEdges.map((row) => row.map((edge) => q[edge]!));
}
