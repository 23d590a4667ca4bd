// The group size a step announces: `info.groupSize`, a decimal integer from 1 to MAX_GROUP_SIZE, the number of
// episodes its producer started for the group (docs/design/group-completion.md). HTTP ingest and the SDK's
// publisher refuse a malformed one (validateIngestStep); the processors dead-letter a step whose size is
// malformed or differs from its group's (processors/assembly/group-sizes.ts).

/** The largest group size a step may announce. */
export const MAX_GROUP_SIZE = 4096;
/** The info key of the announced group size. */
export const GROUP_SIZE_INFO_KEY = 'groupSize';

/** The announced size of a step's info, undefined when it announces none, or why the announcement is malformed. */
export function announcedGroupSize(info: Readonly<Record<string, string>>): number | undefined | { readonly error: string } {
  const raw = info[GROUP_SIZE_INFO_KEY];
  if (raw === undefined) return undefined;
  const value = /^\d{1,9}$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(value >= 1 && value <= MAX_GROUP_SIZE)) {
    return { error: `must be a decimal integer from 1 to ${MAX_GROUP_SIZE} (the number of episodes started for the group), got ${JSON.stringify(raw.slice(0, 40))}` };
  }
  return value;
}
