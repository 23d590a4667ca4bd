// Which run, group and episode a call belongs to. Headers first — `x-trajflow-run`, `x-trajflow-group`,
// `x-trajflow-episode`, `x-trajflow-env`, `x-trajflow-group-size`, `x-trajflow-agent` — because every HTTP
// client can set them once for a whole agent (openai-node's defaultHeaders, Python's requests.Session.headers);
// then the OpenAI `metadata` keys `trajflow_run`, `trajflow_group`, `trajflow_episode`, `trajflow_env`,
// `trajflow_group_size`, `trajflow_agent` for clients that can only change the body. When both are given they
// must agree (400 otherwise): one of the two is then a bug in the agent.
//
// Without an episode the call is an episode of its own, named by the completion's id (the answer's `id`),
// so `POST /v1/episodes/{id}/finish` can still end it. Without a group, the group is the episode; without
// a run, the gateway's --run-id. A call naming an agent belongs to that agent's own trajectory of the episode:
// episode `<episode>/<agent>` in group `<group>/<agent>`, so each agent's turns are indexed, compared within
// their group and trained on as one trajectory (docs/design/gateway-recording.md). Every id must fit
// trajflow's id grammar (schemas/ids.ts). Pure.
import { MAX_GROUP_SIZE } from '../schemas/group-size.js';
import { ID_DESCRIPTION, ID_PATTERN } from '../schemas/ids.js';
import { invalidParam } from './openai-error.js';

export interface CallIdentity {
  readonly runId: string;
  readonly groupId: string;
  readonly episodeId: string;
  readonly envName: string;
  /** info.groupSize for the processors (G episodes close the group), when the agent says it. */
  readonly groupSize: number | null;
  /** The agent whose trajectory this is, and the episode it is part of; absent for a call naming no agent. */
  readonly agent?: AgentOf;
}

export interface AgentOf {
  readonly name: string;
  /** The episode as the agent named it (the trajectory's episodeId is `<episode>/<name>`). */
  readonly episodeId: string;
}

/** An agent's name: letters, digits, `.`, `_`, `-`, at most 64, so `<episode>/<agent>` parses back unambiguously. */
export const AGENT_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** The trajectory id of an agent's part of an episode (or group). */
export const agentTrajectoryId = (id: string, agent: string): string => `${id}/${agent}`;

export interface IdentityDefaults {
  readonly runId: string;
  readonly envName: string;
}

const FIELDS = [
  { key: 'run', header: 'x-trajflow-run', meta: 'trajflow_run' },
  { key: 'group', header: 'x-trajflow-group', meta: 'trajflow_group' },
  { key: 'episode', header: 'x-trajflow-episode', meta: 'trajflow_episode' },
  { key: 'env', header: 'x-trajflow-env', meta: 'trajflow_env' },
  { key: 'groupSize', header: 'x-trajflow-group-size', meta: 'trajflow_group_size' },
  { key: 'agent', header: 'x-trajflow-agent', meta: 'trajflow_agent' },
] as const;

type Key = (typeof FIELDS)[number]['key'];

function pick(headers: (name: string) => string | undefined, metadata: Readonly<Record<string, string>>): Partial<Record<Key, { value: string; param: string }>> {
  const out: Partial<Record<Key, { value: string; param: string }>> = {};
  for (const field of FIELDS) {
    const fromHeader = headers(field.header);
    const fromMeta = metadata[field.meta];
    if (fromHeader !== undefined && fromMeta !== undefined && fromHeader !== fromMeta) {
      throw invalidParam(`metadata.${field.meta}`, `disagrees with the ${field.header} header (${JSON.stringify(fromHeader).slice(0, 60)}); send one, or the same value`);
    }
    if (fromHeader !== undefined) out[field.key] = { value: fromHeader, param: field.header };
    else if (fromMeta !== undefined) out[field.key] = { value: fromMeta, param: `metadata.${field.meta}` };
  }
  return out;
}

function checkId(value: string, param: string): string {
  if (!ID_PATTERN.test(value)) throw invalidParam(param, `must be ${ID_DESCRIPTION}, got ${JSON.stringify(value).slice(0, 60)}`);
  return value;
}

function groupSizeOf(given: { value: string; param: string } | undefined): number | null {
  if (!given) return null;
  if (!/^[1-9]\d{0,3}$/.test(given.value) || Number(given.value) > MAX_GROUP_SIZE) {
    throw invalidParam(given.param, `must be an integer from 1 to ${MAX_GROUP_SIZE} (the episodes of the group), got ${JSON.stringify(given.value).slice(0, 40)}`);
  }
  return Number(given.value);
}

/** The agent's own trajectory of the episode: ids suffixed `/<agent>`, which must still be ids. */
function asAgent(identity: CallIdentity, given: { value: string; param: string }): CallIdentity {
  if (!AGENT_PATTERN.test(given.value)) {
    throw invalidParam(given.param, `must be 1 to 64 characters from A-Z a-z 0-9 . _ - starting with a letter or digit, got ${JSON.stringify(given.value).slice(0, 60)}`);
  }
  const episodeId = agentTrajectoryId(identity.episodeId, given.value);
  const groupId = agentTrajectoryId(identity.groupId, given.value);
  for (const id of [episodeId, groupId]) if (!ID_PATTERN.test(id)) throw invalidParam(given.param, `makes the id ${id.slice(0, 60)}… longer than 256 characters`);
  return { ...identity, episodeId, groupId, agent: { name: given.value, episodeId: identity.episodeId } };
}

/** The call's identity; `callId` names the episode when the agent gives none. */
export function callIdentity(headers: (name: string) => string | undefined, metadata: Readonly<Record<string, string>>, defaults: IdentityDefaults, callId: string): CallIdentity {
  const given = pick(headers, metadata);
  const episodeId = given.episode ? checkId(given.episode.value, given.episode.param) : callId;
  const envName = given.env?.value ?? defaults.envName;
  if (envName === '' || envName.length > 256) throw invalidParam(given.env?.param ?? 'x-trajflow-env', 'must be 1 to 256 characters');
  const identity: CallIdentity = {
    runId: given.run ? checkId(given.run.value, given.run.param) : defaults.runId,
    groupId: given.group ? checkId(given.group.value, given.group.param) : episodeId,
    episodeId,
    envName,
    groupSize: groupSizeOf(given.groupSize),
  };
  return given.agent ? asAgent(identity, given.agent) : identity;
}
