// The installable SDK: what `import … from 'trajflow'` gives another project (package.json "exports").
// It is the public surface of the layers below — configuration, the Avro schemas and codec, Kafka as RxJS
// streams (the backbone, the step publisher, consumers, replay, dead letters) and the environment contract —
// built to JavaScript and declarations by scripts/build-sdk.mjs. Nothing in trajflow imports this file: code
// inside the repository imports the module it needs, so the SDK stays an entry (.dependency-cruiser.cjs).
// It pulls in no learner, tfjs, ClickHouse or express: a producer or consumer of events needs none of them.
export { loadConfig, topicName, type TrajflowConfig, type KafkaConfig, type ClickHouseConfig } from '../core/config.js';
export { TrajflowError, ConfigError } from '../core/errors.js';
export * from '../schemas/index.js';
export * from '../streams/index.js';
export type { EnvId, Environment, ResetResult, StepResult, TurnLimits } from '../envs/contract.js';
export { EnvCheckError, EpisodeOverError, InvalidSeedError, ResetNeededError } from '../envs/errors.js';
export { checkEnv, type CheckEnvOptions } from '../envs/check-env.js';
export { extractAnswer, formatReply, parseTurn, splitActions, ACTION_SEPARATOR, type ParsedTurn } from '../envs/actions.js';
