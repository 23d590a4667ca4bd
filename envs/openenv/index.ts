// The OpenEnv adapter: environments served by an OpenEnv server, driven like built-in ones (asynchronously).
export { OpenEnvEnvironment, webSocketUrl } from './openenv-env.js';
export { isAsyncEnvironment, toAsyncEnvironment, type AsyncEnvironment } from './async-environment.js';
export { OPENENV_DEFAULTS, defaultClassifyDone, defaultSuccessOf, type DoneContext, type DoneKind, type OpenEnvOptions, type SuccessContext } from './options.js';
export { answerIntoField, canonicalJson, observationText, DEFAULT_OBSERVATION_FIELDS, type ActionFromText } from './mapping.js';
export { probeServer, type OpenEnvServerInfo } from './server-info.js';
export type { ClientMessage, ServerMessage, ObservationData, StateData, ErrorData, JsonObject } from './protocol.js';
export * from './errors.js';
export * from './websocket/index.js';
