// The in-process loop's side of max staleness K ≥ 1: iteration i is played with the weights after update
// max(0, i − K), as the actors through Kafka play it with policy version i − K (rollout/behaviour-version.ts
// decides for both). Before each iteration the live weights are copied; the copies no later iteration can be
// played with are freed, so at most K + 1 weight sets are held besides the live one.
import { ConfigError } from '../../core/errors.js';
import { chooseVersion, samplingTarget, versionsToEvict, type HeldVersion } from '../../rollout/behaviour-version.js';
import { createPolicyBundle, disposeBundle, type PolicyBundle } from '../policy/bundle.js';

/** The weights an iteration is played with and their policy version (the updates they have had). */
export interface SamplingWeights {
  readonly bundle: PolicyBundle;
  readonly version: number;
}

interface HeldWeights extends HeldVersion {
  readonly bundle: PolicyBundle;
}

/** LocalRunConfig.maxStaleness checked: an integer ≥ 0 (default 0). */
export function checkMaxStaleness(value: unknown): number {
  if (value === undefined) return 0;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0)
    throw new ConfigError(`runLocal: maxStaleness=${String(value)} must be an integer ≥ 0 (iteration i is played with the weights after update i − maxStaleness).`);
  return value;
}

export class LaggedWeights {
  private held: HeldWeights[] = [];

  constructor(
    readonly maxStaleness: number,
    private readonly actionWords: readonly string[],
  ) {}

  /**
   * The weights iteration `iteration` is played with, `live` being the weights trained on the `iteration`
   * batches before it (after `version` updates): they are copied first, and copies no iteration from this
   * one on can use are freed (the previous iteration is over).
   */
  async forIteration(iteration: number, live: PolicyBundle, version: number): Promise<SamplingWeights> {
    await this.remember(live, version, iteration);
    const target = samplingTarget(iteration, this.maxStaleness);
    this.forget(target);
    const chosen = chooseVersion(this.held, target);
    return { bundle: chosen.bundle, version: chosen.version };
  }

  /** Frees every copy. */
  dispose(): void {
    for (const h of this.held) disposeBundle(h.bundle);
    this.held = [];
  }

  /** Copies the live weights, unless the newest copy has their version already (an iteration without an update). */
  private async remember(live: PolicyBundle, version: number, trainedOn: number): Promise<void> {
    if (this.held.at(-1)?.version === version) return;
    const { vocabSize: _, ...shape } = live.model.config;
    this.held.push({ version, trainedOn, bundle: createPolicyBundle(this.actionWords, shape, await live.model.values()) });
  }

  /** Frees the copies no target from `target` on can choose. */
  private forget(target: number | null): void {
    const gone = new Set(versionsToEvict(this.held, target));
    for (const h of gone) disposeBundle(h.bundle);
    this.held = this.held.filter((h) => !gone.has(h));
  }
}
