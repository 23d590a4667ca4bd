// DAPO soft overlong punishment (docs/algorithms.md §2.2, verl `reward_manager/dapo.py`):
//   reward += min(−(len − (L_max − L_buf)) / L_buf · factor, 0)
// 0 up to L_max − L_buf tokens, then linear down to −factor at L_max.

export interface OverlongOptions {
  /** L_max, tokens. */
  maxLength: number;
  /** L_buf, tokens (> 0). */
  cacheLength: number;
  /** Penalty at L_max (verl's penalty_factor, default 1.0). */
  factor?: number;
}

/**
 * The penalty (≤ 0) for a response of `length` tokens. Exactly verl's formula, so it is not clamped at
 * −factor: verl never sees len > L_max because generation stops there; a longer response here (e.g. a
 * trajectory-level length over many turns) keeps the same slope.
 */
export function dapoOverlongPenalty(length: number, { maxLength, cacheLength, factor = 1.0 }: OverlongOptions): number {
  const expectedLength = maxLength - cacheLength;
  const exceedLength = length - expectedLength;
  return Math.min((-exceedLength / cacheLength) * factor, 0) + 0; // + 0 turns −0 into 0
}
