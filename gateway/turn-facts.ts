// What a gateway step says about its episode beyond its fields, read back from its `info` (record.ts writes
// it): the request's hash (a retry repeats it), the earlier turns it names as orphans, the answer's id, the
// agent whose trajectory it is, and whether its prompt ids extend the episode's token context. Pure; values that do not parse are
// ignored, as a step written by another tool would carry none of them.
import type { StepEvent } from '../schemas/index.js';

/** The step's `info` keys the gateway writes and reads back. */
export const INFO = {
  requestHash: 'requestHash',
  orphans: 'orphans',
  callId: 'callId',
  promptScope: 'promptScope',
  promptDrift: 'promptDrift',
  outcome: 'gatewayOutcome',
  agent: 'agent',
  stepRewards: 'stepRewards',
} as const;

/** The agent and episode of an agent's trajectory read from the log: `info.agent`, the episode id `<episode>/<agent>`. */
export function agentOf(step: StepEvent): { name: string; episodeId: string } | undefined {
  const name = step.info[INFO.agent];
  const suffix = `/${name}`;
  if (name === undefined || name === '' || !step.episodeId.endsWith(suffix) || step.episodeId.length === suffix.length) return undefined;
  return { name, episodeId: step.episodeId.slice(0, -suffix.length) };
}

/** The step indices in `info.orphans` (a JSON array of non-negative integers), or none. */
export function orphansOf(info: Readonly<Record<string, string>>): number[] {
  const raw = info[INFO.orphans];
  if (raw === undefined) return [];
  try {
    const parsed: unknown = JSON.parse(raw);
    return Array.isArray(parsed) ? parsed.filter((i): i is number => Number.isSafeInteger(i) && i >= 0) : [];
  } catch {
    return [];
  }
}

/** The token context after a turn read from the log: its prompt ids extend `before` unless it drifted. */
export function contextAfter(step: StepEvent, before: readonly number[] | null): readonly number[] | null {
  if (step.info[INFO.promptScope] !== 'conversation') return null;
  const base = before === null || step.info[INFO.promptDrift] === '1' ? [] : before;
  return [...base, ...(step.observationTokenIds ?? []), ...step.actionTokenIds];
}

/** The end a logged outcome step records: finished by the agent, or timed out. */
export function endOf(step: StepEvent): 'finished' | 'timed-out' {
  return step.info[INFO.outcome] === 'timeout' ? 'timed-out' : 'finished';
}

/** Sorted union of step indices. */
export function unionOf(a: readonly number[], b: readonly number[]): number[] {
  return [...new Set([...a, ...b])].sort((x, y) => x - y);
}
