// Named policy errors, rooted at TrajflowError; none is retriable (they are the caller's mistakes).
import { TrajflowError } from '../../core/errors.js';

/** A policy that samples over the environment's actions was asked to act without them. */
export class ActionSpaceRequiredError extends TrajflowError {
  constructor(policy: string) {
    super('POLICY_ACTION_SPACE_REQUIRED', `${policy} needs request.actionSpace (validActions and maxActionsPerTurn from the environment); pass it with every act() call.`);
  }
}

/** The environment offers no valid action to choose from. */
export class NoValidActionError extends TrajflowError {
  constructor(policy: string) {
    super('POLICY_NO_VALID_ACTION', `${policy}: actionSpace.validActions is empty, so there is nothing to sample; the environment must offer at least one action.`);
  }
}
