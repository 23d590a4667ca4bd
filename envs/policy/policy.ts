// The one interface every policy implements, from the uniform-random baseline to a trained model:
// the prompt and the episode's history go in, the sampled reply comes out with its token ids and the
// behaviour log-prob of each token (what the learner's importance ratio divides by).

/** One earlier message of the episode, oldest first: observation, action, observation, action, … */
export interface HistoryEntry {
  role: 'observation' | 'action';
  text: string;
}

/**
 * What the environment offers besides the prompt. A language model ignores it (the system prompt already
 * names the actions); the random policy needs it to sample uniformly over what is valid right now.
 */
export interface ActionSpace {
  /** The concrete actions valid in the current state (Environment.validActions()). */
  validActions: readonly string[];
  /** At most this many actions of one reply are considered (Environment.maxActionsPerTurn). */
  maxActionsPerTurn: number;
}

export interface PolicyRequest {
  systemPrompt: string;
  /** The episode so far, without the current observation. */
  history: HistoryEntry[];
  /** The observation to act on. */
  observation: string;
  /** Seeds the sampling, so the same request gives the same reply (actors derive it per episode and turn). */
  seed: number;
  /** Optional: the environment's actions (see ActionSpace). */
  actionSpace?: ActionSpace;
}

export interface PolicyReply {
  /** The reply in the RAGEN format, e.g. "<think>…</think><answer>Left || Up</answer>". */
  text: string;
  /** The sampled tokens. */
  tokenIds: number[];
  /** Behaviour log-prob of each sampled token: aligned with tokenIds, every value ≤ 0. */
  logProbs: number[];
  /**
   * The ids this turn added to the policy's context before it generated (e.g. the observation with its
   * markers), when the policy tokenizes itself; the actors send them as the step's observationTokenIds so
   * training samples hold exactly the context the policy sampled in. Absent: processors tokenize the text.
   */
  promptTokenIds?: number[];
}

export interface Policy {
  /** The policy-version number of the weights this policy samples with (0: the initial policy). */
  readonly version: number;
  act(request: PolicyRequest): Promise<PolicyReply>;
}
