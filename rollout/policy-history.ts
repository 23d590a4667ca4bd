// The policy versions one actor process holds for lagged sampling (behaviour-version.ts decides which
// version samples which iteration and which versions may go; this keeps the policies). The version follower
// records each version once the provider has loaded it and before the staleness gate hears of it, so the
// version an iteration is allowed to start with is always here when it starts.
import type { Policy } from '../envs/policy/policy.js';
import { chooseVersion, versionsToEvict, type HeldVersion } from './behaviour-version.js';

interface HeldPolicy extends HeldVersion {
  readonly policy: Policy;
}

export class PolicyHistory {
  private held: HeldPolicy[];

  /** `initial`: the policy before any version event, trained on `trainedOn` batches (its version, for a fresh run 0). */
  constructor(initial: Policy, trainedOn = initial.version) {
    this.held = [{ version: initial.version, trainedOn, policy: initial }];
  }

  /** The version numbers held, oldest first. */
  get versions(): number[] {
    return this.held.map((h) => h.version);
  }

  /** Holds a newly loaded policy trained on `trainedOn` batches; one not newer than the newest held (a failed load left the old one current) is ignored. */
  record(policy: Policy, trainedOn: number): void {
    const newest = this.held.at(-1);
    if (newest && policy.version <= newest.version) return;
    this.held.push({ version: policy.version, trainedOn, policy });
  }

  /** The policy that samples an episode whose policy must be trained on `target` batches (null: the newest). */
  policyFor(target: number | null): Policy {
    return chooseVersion(this.held, target).policy;
  }

  /** Lets go of the versions no target from `target` on can choose (running episodes keep their own policy). */
  forget(target: number | null): void {
    const gone = new Set(versionsToEvict(this.held, target).map((h) => h.version));
    if (gone.size > 0) this.held = this.held.filter((h) => !gone.has(h.version));
  }
}
