// The uniform-random policy: the untrained baseline, and what the actors and their benchmark run before a
// learner exists. One choice in two forms, so the baseline measured and the actors' rollouts are the same
// policy: createRandomPolicy answers an environment with text (envs/baseline.ts plays it), UniformRandomPolicy
// answers a request behind the Policy interface (the actors play it).
//
// Choice: the number of actions k uniformly in 1..maxActionsPerTurn, then each action uniformly from the
// valid actions, written as "<answer>a1 || … || ak</answer>". Seeded by the seed alone (request.seed), so the
// same (episode, turn) seed gives the same reply.
//
// Log-probs: the reply text's probability under that choice is
//     P(text) = 1/maxActionsPerTurn · Π_i m(a_i)/|V|
// (m(a) = how often a appears in the valid actions, normally 1; the text determines k and the actions
// because no action contains the separator "||"). The policy has no per-token distribution, so log P is
// spread evenly over the reply's tokens: every token gets log P / n, the n values sum to log P and are
// ≤ 0. A learner's importance ratio over the whole reply is then exact; per-token ratios are not
// meaningful for this policy (it is only a baseline).
import { Rng, RngStream } from '../../core/rng.js';
import { extractAnswer, formatReply, splitActions } from '../actions.js';
import type { Environment } from '../contract.js';
import { byteTokenizer, type Tokenizer } from '../../tokenizer/contract.js';
import { ActionSpaceRequiredError, NoValidActionError } from './errors.js';
import type { ActionSpace, Policy, PolicyReply, PolicyRequest } from './policy.js';

const NAME = 'UniformRandomPolicy';

export interface TextPolicy {
  /** The reply text for the environment's current state. */
  act(env: Environment): string;
}

/** The choice as a text policy: each turn k actions, each uniformly from the environment's valid actions. */
export function createRandomPolicy(seed: number): TextPolicy {
  const rng = new Rng(seed, RngStream.policy);
  return {
    act(env) {
      const valid = env.validActions();
      const count = 1 + rng.int(env.maxActionsPerTurn);
      return formatReply(Array.from({ length: count }, () => rng.pick(valid)));
    },
  };
}

/** log P(reply) of a reply that names `actions`, under the uniform choice over `space`. */
export function uniformReplyLogProb(actions: readonly string[], space: ActionSpace): number {
  let logProb = -Math.log(space.maxActionsPerTurn);
  for (const action of actions) {
    const multiplicity = space.validActions.filter((valid) => valid === action).length;
    logProb += Math.log(multiplicity / space.validActions.length);
  }
  return logProb;
}

/** Spreads a sequence log-prob evenly over n tokens (n ≥ 1): the values sum to logProb. */
export function spreadLogProb(logProb: number, n: number): number[] {
  return new Array<number>(n).fill(logProb / n);
}

export class UniformRandomPolicy implements Policy {
  constructor(
    readonly version = 0,
    /** Stand-in tokenizer (byte-level) until the policy has its own vocabulary. */
    private readonly tokenizer: Tokenizer = byteTokenizer,
  ) {}

  async act(request: PolicyRequest): Promise<PolicyReply> {
    const space = request.actionSpace;
    if (space === undefined) throw new ActionSpaceRequiredError(NAME);
    if (space.validActions.length === 0) throw new NoValidActionError(NAME);
    // createRandomPolicy reads only these two members of the environment.
    const view: Pick<Environment, 'validActions' | 'maxActionsPerTurn'> = {
      validActions: () => space.validActions,
      maxActionsPerTurn: space.maxActionsPerTurn,
    };
    const text = createRandomPolicy(request.seed).act(view as Environment);
    const tokenIds = this.tokenizer.tokenize(text);
    return { text, tokenIds, logProbs: spreadLogProb(uniformReplyLogProb(actionsOf(text), space), tokenIds.length) };
  }
}

/** The actions a reply of this policy names (it always writes a well-formed answer). */
function actionsOf(text: string): string[] {
  const extraction = extractAnswer(text);
  if (!extraction.ok) throw new Error(`${NAME} wrote a reply without an answer: ${text}`);
  return splitActions(extraction.value.answer, Number.MAX_SAFE_INTEGER).considered;
}
