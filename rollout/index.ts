// The rollout workers' public API: the actors that play episodes and publish their steps, and the following of
// the policy versions they sample with.
export { actorsConfig, ACTORS_DEFAULTS, MAX_CONCURRENT_EPISODES, type ActorsConfig, type ActorsConfigInput } from './config.js';
export { RolloutActors, type ActorsDeps, type ActorStats, type ActorsSummary } from './actors.js';
export { runEpisode, type EpisodeRun, type EpisodeOutcome, type PublishStep } from './episode.js';
export { buildStepEvent, type EpisodeContext, type StateBefore, type TurnRecord } from './step-event.js';
export * from './ids.js';
export { mayStartIteration, versionNeededFor, StalenessGate } from './staleness-gate.js';
export { chooseVersion, samplesBehind, samplingTarget, versionsToEvict, type HeldVersion } from './behaviour-version.js';
export { PolicyHistory } from './policy-history.js';
export { followPolicyVersions, type PolicyVersionFollower, type FollowOptions } from './follow-policy-versions.js';
export { formatProgress, startProgress } from './progress.js';
export { rolloutEnvOptions, createRolloutEnv } from './rollout-env.js';
export { startActors, type ActorsRun, type StartActorsOptions } from './start-actors.js';
