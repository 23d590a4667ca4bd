// Trajectory and group assembly operators.
export * from './assemble-trajectories.js';
export * from './assemble-groups.js';
export { trajectoryFromSteps, type TrajectoryOutcome, type EpisodeCloseReason } from './open-episode.js';
export * from './group-open-episodes.js';
export { GroupSizes, type GroupSizeVerdict } from './group-sizes.js';
