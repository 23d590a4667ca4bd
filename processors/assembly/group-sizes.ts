// The group size a producer announces on its steps (`info.groupSize`, the contract: docs/reference/event-schemas.md),
// checked before assembly: a decimal integer in [1, MAX_GROUP_SIZE] (schemas/group-size.ts), the same on every step of a group.
// The first step of a group that carries one decides; a later step with another size, or a malformed one,
// is refused here (the processors dead-letter it, naming the field) rather than assembled: otherwise one
// member would make its group wait for a size the others never meant, or close it early.
// Groups are remembered up to `capacity` (the oldest forgotten first), like closed episodes and groups.
import { announcedGroupSize, GROUP_SIZE_INFO_KEY } from '../../schemas/group-size.js';
import { scopedKey } from './recently-closed.js';

export type GroupSizeVerdict = { readonly ok: true } | { readonly ok: false; readonly field: string; readonly detail: string };

const OK: GroupSizeVerdict = Object.freeze({ ok: true });
const FIELD = `info.${GROUP_SIZE_INFO_KEY}`;

export class GroupSizes {
  private readonly sizes = new Map<string, number>();

  constructor(private readonly capacity = 100_000) {}

  /** Checks a step's announced size against its group's, remembering the first one of the group. */
  check(step: { readonly runId: string; readonly groupId: string; readonly info: Readonly<Record<string, string>> }): GroupSizeVerdict {
    const announced = announcedGroupSize(step.info);
    if (announced === undefined) return OK;
    if (typeof announced === 'object') return { ok: false, field: FIELD, detail: `${FIELD} ${announced.error}` };
    const key = scopedKey(step.runId, step.groupId);
    const known = this.sizes.get(key);
    if (known === undefined) {
      if (this.sizes.size >= this.capacity) this.sizes.delete(this.sizes.keys().next().value as string);
      this.sizes.set(key, announced);
      return OK;
    }
    if (known === announced) return OK;
    return {
      ok: false,
      field: FIELD,
      detail: `${FIELD} is ${announced} but earlier steps of group ${JSON.stringify(step.groupId)} (run ${JSON.stringify(step.runId)}) announced ${known}: every step of a group must announce the same size`,
    };
  }
}
