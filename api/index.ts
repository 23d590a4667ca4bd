// The HTTP API: config, the express app, the server, and the services wired from a backbone.
export { createApp, type ApiApp, type ApiDeps } from './app.js';
export {
  checkExposure,
  defaultApiConfig,
  isLoopback,
  loadApiConfig,
  DEFAULT_API_PORT,
  type ApiConfig,
  type ApiConfigOverrides,
  type RateLimitConfig,
} from './config.js';
export { startHttpServer, type HttpServerHandle } from './server.js';
export { createApiServices, type ApiServices, type ApiServicesOptions } from './services.js';
export { HttpProblem, problem, problemTypes, PROBLEM_CONTENT_TYPE, type ProblemDetails, type ProblemType } from '../core/problem.js';
export { sendProblem } from './error-handler.js';
export { HTTP_SOURCE_TOPIC, type IngestStats } from './steps-route.js';
export { AVRO_TYPE, JSON_TYPE } from './step-body.js';
export type { HealthProbes, ProbeResult } from './health-route.js';
export type { Logger } from './error-handler.js';
