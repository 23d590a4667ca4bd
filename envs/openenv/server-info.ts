// What the adapter checks before it opens an episode: /health says "healthy", /schema has the three
// JSON schemas (action, observation, state), /metadata names the environment. Catching a wrong URL
// or a wrong action field here gives one clear error instead of a failure at the first step.
import { OpenEnvSchemaError, OpenEnvUnhealthyError } from './errors.js';
import { getJson } from './http.js';
import type { JsonObject } from './protocol.js';

export interface OpenEnvServerInfo {
  /** Name, description, version … from /metadata (EnvironmentMetadata). */
  readonly metadata: { readonly name: string; readonly description: string; readonly version: string | null } & JsonObject;
  /** JSON schemas from /schema. */
  readonly schema: { readonly action: JsonObject; readonly observation: JsonObject; readonly state: JsonObject };
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export async function probeServer(baseUrl: string, timeoutMs: number): Promise<OpenEnvServerInfo> {
  const health = await getJson(baseUrl, '/health', timeoutMs);
  const status = isObject(health) ? health.status : undefined;
  if (status !== 'healthy') throw new OpenEnvUnhealthyError(baseUrl, typeof status === 'string' ? status : JSON.stringify(health));

  const [schema, metadata] = await Promise.all([getJson(baseUrl, '/schema', timeoutMs), getJson(baseUrl, '/metadata', timeoutMs)]);
  if (!isObject(schema) || !isObject(schema.action) || !isObject(schema.observation) || !isObject(schema.state)) {
    throw new OpenEnvSchemaError(`${baseUrl}/schema does not have the action, observation and state schemas: is this an OpenEnv server?`);
  }
  if (!isObject(metadata) || typeof metadata.name !== 'string' || metadata.name === '') {
    throw new OpenEnvSchemaError(`${baseUrl}/metadata has no environment name: is this an OpenEnv server?`);
  }
  return {
    metadata: {
      ...metadata,
      name: metadata.name,
      description: typeof metadata.description === 'string' ? metadata.description : '',
      version: typeof metadata.version === 'string' && metadata.version !== '' ? metadata.version : null,
    },
    schema: { action: schema.action, observation: schema.observation, state: schema.state },
  };
}

/** The action schema's property names (pydantic writes them under `properties`). */
export function actionFields(info: OpenEnvServerInfo): string[] {
  const properties = info.schema.action.properties;
  return isObject(properties) ? Object.keys(properties) : [];
}

/** Required action fields other than the ones given (a mapping that leaves one out will always be refused). */
export function missingRequiredFields(info: OpenEnvServerInfo, given: readonly string[]): string[] {
  const required = info.schema.action.required;
  return Array.isArray(required) ? required.filter((name): name is string => typeof name === 'string' && !given.includes(name)) : [];
}
