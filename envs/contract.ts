// The environment contract (Gymnasium's Env, adapted to text agents).
//
// One step() is one agent TURN: the policy's whole reply (RAGEN format, see actions.ts) goes in, and the
// environment executes the actions in its <answer> (several, separated by "||", up to maxActionsPerTurn)
// in order. The turn's reward is the sum of its actions' rewards (docs/algorithms.md §4.4). One step() is one
// step event downstream.
//
// Lifecycle: reset(seed) starts an episode; step() before the first reset throws ResetNeededError;
// step() after a result with terminated or truncated throws EpisodeOverError; reset() may be called at
// any time and always starts afresh. Same seed + same action texts => same observations, rewards, flags
// and state keys (checked by checkEnv and the determinism tests).
//
// terminated vs truncated (Gymnasium v0.26): terminated = the MDP reached a terminal state (goal, hole,
// all boxes on targets, final answer given, arm pulled). truncated = a limit cut the episode short
// (maxTurns turns, maxActionsPerEpisode executed actions, Sokoban's maxSteps). We never set both: a turn
// that terminates is reported as terminated only.
//
// STATE KEY CONVENTION (for GiGPO's anchor states, docs/algorithms.md §3 step 4):
//   A result's stateKey is the canonical string of the environment state the result's observation
//   shows, i.e. the state the agent acts FROM next:
//     - reset(seed).stateKey      = the initial state s0;
//     - step(a_t).stateKey        = the state s_{t+1} after the turn's actions were applied.
//   The step event's `stateKey` field is "the state before the action" (schemas/step/v1.avsc), so the
//   producer of step event t uses the stateKey of the PREVIOUS result (reset's for t = 0), together with
//   that previous result's observation. Two results have equal keys iff the environment states are equal
//   for the purpose of acting (turn counters and budgets are not part of the key, as in verl-agent,
//   where the anchor is the raw current observation). Keys are only compared within one group.
//
// Invalid actions: a reply whose <answer> cannot be parsed, or that names an action outside the
// vocabulary, is reported, never thrown: actionValid = false. RAGEN's rule (docs/algorithms.md §4.4) decides
// what runs: the known actions of the turn still execute in order, unknown ones are dropped; when no
// action is known (or no <answer> is found) nothing executes and the state does not change (stateKey
// and render() stay the same). actionValid = false is exactly when RAGEN adds its format penalty; the
// environment does NOT subtract any penalty from `reward` — processors apply the format / invalid-action
// penalty from actionValid. Every invalid turn still uses up one of the maxTurns turns.
//
// Success: the result that ends an episode carries metrics.success = 1 or 0 (processors read it there);
// earlier results carry no `success` metric.

/** Versioned identity, e.g. { name: 'FrozenLake', version: 'v1' } (Gymnasium's CartPole-v1). */
export interface EnvId {
  readonly name: string;
  readonly version: string;
}

export interface ResetResult {
  /** The first observation text (a rendering or a task statement). */
  observation: string;
  /** Canonical key of the initial state s0 (see the convention above). */
  stateKey: string;
  info: Record<string, string>;
}

export interface StepResult {
  /** Observation after the turn: text the environment returned, never covered by the policy loss. */
  observation: string;
  /** Sum of the environment rewards of the actions executed this turn (no format penalty). */
  reward: number;
  terminated: boolean;
  truncated: boolean;
  /** False when the reply could not be parsed or named an unknown action (see above). */
  actionValid: boolean;
  /** Strings such as the executed actions, the parse problem, the tool output. */
  info: Record<string, string>;
  /** Numbers such as actionsExecuted, actionsDropped, actionEffective, and success on the last step. */
  metrics: Record<string, number>;
  /** Canonical key of the state after this turn (see the convention above). */
  stateKey: string;
}

export interface Environment {
  readonly id: EnvId;
  /** The episode is truncated after this many turns (step() calls). */
  readonly maxTurns: number;
  /** At most this many actions of one reply are considered; the rest are ignored (RAGEN). */
  readonly maxActionsPerTurn: number;
  /**
   * The words of the action language, each of which the system prompt mentions: the action names for
   * discrete environments (e.g. Left, Down, Right, Up), the command words for ToolUse (calc, final).
   */
  readonly actionVocabulary: readonly string[];
  /** Starts an episode; seed is a non-negative safe integer. */
  reset(seed: number): ResetResult;
  /** Plays one turn from the policy's raw reply text. */
  step(actionText: string): StepResult;
  /** The current state as text (the same text the observations show for grid environments). */
  render(): string;
  /** Explains the task, the action vocabulary and the answer format (<think>…</think><answer>…</answer>). */
  systemPrompt(): string;
  /**
   * The concrete actions that are valid in the current state (one action each, without tags): the
   * vocabulary for discrete environments; generated tool calls and answers for ToolUse. Used by the
   * random policy and checkEnv.
   */
  validActions(): readonly string[];
}

/** Limits every built-in environment shares (RAGEN's max_turn, max_actions_per_turn, max_actions_per_traj). */
export interface TurnLimits {
  maxTurns: number;
  maxActionsPerTurn: number;
  maxActionsPerEpisode: number;
}
