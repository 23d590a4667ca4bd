// How a replayed sample is marked, in a module without TensorFlow.js so the replay command (and an HTTP
// route) can use it without loading the learner. Must equal learner/loop/learner.ts's
// REPLAY_ESTIMATOR_PREFIX (a test checks): the learner trains samples whose estimator starts with it with
// the decoupled objective (importance weights against the behaviour log-probs, truncated at the cap).
export const REPLAY_ESTIMATOR_PREFIX = 'replay:';

/** The sampleIdScope of a replay's samples: their ids never equal the live samples' nor another replay's. */
export function replaySampleScope(replayId: string): string {
  return `replay-${replayId}`;
}
