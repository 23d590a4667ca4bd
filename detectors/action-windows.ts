// (input, action) pairs from trajectories, in windows of policy versions: what the template-collapse and
// repetition detectors score. RolloutStatsEvents carry no action distributions, so these read the
// trajectories (TrajectoryEvent.steps: observation, stateKey, action text and token ids, policy version).
//
// The input of a step is its stateKey when the environment gives one, else a hash of its observation text.
// Window b holds the steps sampled by policy versions [b·versionsPerWindow, (b+1)·versionsPerWindow − 1].
// Trajectories arrive out of version order: actors run asynchronously, and the trajectories topic has
// several partitions, which a consumer catching up reads one batch at a time (a whole partition's backlog
// may come before the next partition's first message). So each source (topic partition) keeps its own
// highest version, and a window closes only once *every* source — each partition of the topic, declared
// up front, plus any other seen — has shown a step of version ≥ the window's last version +
// closeLagVersions (the lowest per-source watermark). Steps of an already closed window are counted as
// late and left out. A source that never carries the run (a run with fewer groups than partitions) would
// hold every window open: at most `maxOpenWindows` stay open, and past that the oldest is closed with
// what it has (counted in `forced`). A finished run's last windows are scored only by flush().
// Window contents therefore depend on arrival only for steps more than closeLagVersions stale, or when
// the partitions are read more than maxOpenWindows windows apart. A finished episode's outcome (total
// reward, success) goes to the window of its newest step's version, which that step keeps open; the surprisal
// of its steps' sampled action tokens goes to each step's window, as a failed or a successful episode's.
import { createHash } from 'node:crypto';
import type { TrajectoryStep } from '../schemas/index.js';
import { Checks, withDefaults } from './config-checks.js';
import type { Surprisal } from './entropy-collapse.js';
import type { EpisodeOutcome } from './reward-success-gap.js';

export interface ActionPair {
  /** stateKey, or 'obs:' + a hash of the observation. */
  readonly input: string;
  /** The action text, trimmed. */
  readonly action: string;
  readonly tokens: readonly number[];
}

export interface ActionWindow {
  /** b: the window of versions [b·versionsPerWindow, (b+1)·versionsPerWindow − 1]. */
  readonly index: number;
  readonly firstVersion: number;
  readonly lastVersion: number;
  readonly pairs: readonly ActionPair[];
  /** The finished episodes whose newest step is in the window. */
  readonly outcomes: readonly EpisodeOutcome[];
  /** −log π of the window's sampled action tokens, from finished failed and successful episodes. */
  readonly surprisal: { readonly failed: Surprisal; readonly succeeded: Surprisal };
  /** Latest step event time in the window. */
  readonly lastEventTimeMs: number;
}

export interface ActionWindowsConfig {
  /** Policy versions per window. */
  readonly versionsPerWindow: number;
  /** A window closes when a step this many versions past its last version arrives. */
  readonly closeLagVersions: number;
  /** Windows with fewer steps are not scored. */
  readonly minPairs: number;
  /** Windows with fewer distinct inputs are not scored (input dependence needs several inputs). */
  readonly minInputs: number;
  /** Most windows held open per run; beyond this the oldest is closed even if a source lags. */
  readonly maxOpenWindows: number;
}

export const actionWindowsDefaults: ActionWindowsConfig = Object.freeze({ versionsPerWindow: 1, closeLagVersions: 2, minPairs: 32, minInputs: 2, maxOpenWindows: 32 });

export function actionWindowsConfig(overrides?: Partial<ActionWindowsConfig>, section = 'detectors.actionWindows'): ActionWindowsConfig {
  const c = withDefaults(section, actionWindowsDefaults, overrides);
  const checks = new Checks(section, actionWindowsDefaults);
  checks.int('versionsPerWindow', c.versionsPerWindow, 1, 'number of policy versions whose steps form one window');
  checks.int('closeLagVersions', c.closeLagVersions, 1, 'number of versions past a window after which it is closed (later steps of it are late)');
  checks.int('minPairs', c.minPairs, 1, 'least number of steps in a window for it to be scored');
  checks.int('minInputs', c.minInputs, 2, 'least number of distinct inputs (states or observations) in a window for it to be scored');
  checks.int('maxOpenWindows', c.maxOpenWindows, 1, 'most windows held open per run while a partition lags (bounds memory and delay)');
  return Object.freeze(c);
}

/** The input key of a step. */
export function inputOf(step: Pick<TrajectoryStep, 'stateKey' | 'observation'>): string {
  if (step.stateKey !== null && step.stateKey !== '') return step.stateKey;
  return `obs:${createHash('sha1').update(step.observation).digest('hex').slice(0, 16)}`;
}

/** Whether a window has enough steps and inputs to be scored. */
export function scorable(window: ActionWindow, config: ActionWindowsConfig): boolean {
  return window.pairs.length >= config.minPairs && new Set(window.pairs.map((p) => p.input)).size >= config.minInputs;
}

interface OpenWindow {
  pairs: ActionPair[];
  outcomes: EpisodeOutcome[];
  surprisal: { failed: { sum: number; tokens: number }; succeeded: { sum: number; tokens: number } };
  lastEventTimeMs: number;
}

export class ActionWindows {
  private readonly open = new Map<number, OpenWindow>();
  /** Highest policy version seen per source. */
  private readonly maxVersion = new Map<string, number>();
  /** Windows below this index are closed. */
  private closedBelow = 0;
  /** Steps that arrived after their window closed. */
  late = 0;
  /** Windows closed because more than maxOpenWindows were open. */
  forced = 0;

  /** sources: every partition the trajectories can come from ('topic/partition'); each must progress before a window closes. */
  constructor(
    readonly config: ActionWindowsConfig = actionWindowsDefaults,
    sources: readonly string[] = [],
  ) {
    for (const source of sources) this.maxVersion.set(source, -1);
  }

  /**
   * Adds a trajectory's steps, read from `source` (e.g. 'topic/partition'), and the outcome of its episode if it
   * finished; returns the windows this closed, oldest first.
   */
  add(steps: readonly TrajectoryStep[], source = '', outcome?: EpisodeOutcome): ActionWindow[] {
    const w = this.config.versionsPerWindow;
    for (const step of steps) {
      const index = Math.floor(step.policyVersion / w);
      if (index < this.closedBelow) {
        this.late++;
        continue;
      }
      let window = this.open.get(index);
      if (!window) {
        window = { pairs: [], outcomes: [], surprisal: { failed: { sum: 0, tokens: 0 }, succeeded: { sum: 0, tokens: 0 } }, lastEventTimeMs: 0 };
        this.open.set(index, window);
      }
      window.pairs.push({ input: inputOf(step), action: step.action.trim(), tokens: step.actionTokenIds });
      if (outcome) {
        const acc = outcome.success ? window.surprisal.succeeded : window.surprisal.failed;
        for (const logProb of step.actionLogProbs) {
          if (!Number.isFinite(logProb)) continue;
          acc.sum -= logProb;
          acc.tokens++;
        }
      }
      window.lastEventTimeMs = Math.max(window.lastEventTimeMs, step.eventTimeMs);
      this.maxVersion.set(source, Math.max(this.maxVersion.get(source) ?? -1, step.policyVersion));
    }
    if (outcome && steps.length > 0) {
      // Its newest step's window is open unless that step came late, and then the outcome is late too.
      const newest = steps.reduce((v, step) => Math.max(v, step.policyVersion), 0);
      this.open.get(Math.floor(newest / w))?.outcomes.push(outcome);
    }
    // Window b is closed once every source's highest version is ≥ (b + 1)·w − 1 + lag.
    const watermark = Math.min(...this.maxVersion.values());
    let closedBelow = Math.max(this.closedBelow, Math.floor((watermark - this.config.closeLagVersions + 1) / w));
    const stillOpen = [...this.open.keys()].filter((index) => index >= closedBelow).sort((a, b) => a - b);
    if (stillOpen.length > this.config.maxOpenWindows) {
      const oldestKept = stillOpen[stillOpen.length - this.config.maxOpenWindows]!;
      this.forced += stillOpen.filter((index) => index < oldestKept).length;
      closedBelow = oldestKept;
    }
    if (closedBelow <= this.closedBelow) return [];
    this.closedBelow = closedBelow;
    return this.take((index) => index < closedBelow);
  }

  /** Closes every open window (end of a finite stream). */
  flush(): ActionWindow[] {
    const windows = this.take(() => true);
    if (windows.length > 0) this.closedBelow = Math.max(this.closedBelow, windows[windows.length - 1]!.index + 1);
    return windows;
  }

  private take(which: (index: number) => boolean): ActionWindow[] {
    const w = this.config.versionsPerWindow;
    const indices = [...this.open.keys()].filter(which).sort((a, b) => a - b);
    return indices.map((index) => {
      const window = this.open.get(index)!;
      this.open.delete(index);
      return {
        index,
        firstVersion: index * w,
        lastVersion: index * w + w - 1,
        pairs: window.pairs,
        outcomes: window.outcomes,
        surprisal: window.surprisal,
        lastEventTimeMs: window.lastEventTimeMs,
      };
    });
  }
}
