// Unbiased pass@k and pass^k from n trials of which c succeeded (docs/algorithms.md §6):
//   pass@k = 1 − C(n−c, k)/C(n, k)   at least one of k i.i.d. trials succeeds (Codex/HumanEval)
//   pass^k = C(c, k)/C(n, k)         all k i.i.d. trials succeed (τ-bench)
// Both are computed as running products instead of binomials, which overflow for n in the hundreds:
//   C(n−c, k)/C(n, k) = Π_{i=n−c+1..n} (1 − k/i)        (the HumanEval form)
//   C(c, k)/C(n, k)   = Π_{i=0..k−1} (c − i)/(n − i)
import { TrajflowError } from '../../core/errors.js';

function check(n: number, c: number, k: number): void {
  if (!Number.isInteger(n) || !Number.isInteger(c) || !Number.isInteger(k) || n < 1 || c < 0 || c > n || k < 1 || k > n) {
    throw new TrajflowError('STATS', `pass@k needs integers n ≥ 1, 0 ≤ c ≤ n and 1 ≤ k ≤ n; got n=${n}, c=${c}, k=${k}.`);
  }
}

export function passAtK(n: number, c: number, k: number): number {
  check(n, c, k);
  if (n - c < k) return 1;
  let allFail = 1;
  for (let i = n - c + 1; i <= n; i++) allFail *= 1 - k / i;
  return 1 - allFail;
}

export function passHatK(n: number, c: number, k: number): number {
  check(n, c, k);
  if (c < k) return 0;
  let allPass = 1;
  for (let i = 0; i < k; i++) allPass *= (c - i) / (n - i);
  return allPass;
}
