// RAGEN-2's template-collapse estimates (docs/algorithms.md §5) from a cross-scoring matrix: every sampled reply
// z_i scored under every distinct prompt x_j of the batch, ℓ_j(z_i) = Σ_t log π(z_t | x_j, z_<t).
//   matched  = ℓ_own(z)                       marginal = logsumexp_j ℓ_j(z) − log N
//   Ĥ(Z|X) = −mean(matched)   Ĥ(Z) = −mean(marginal)   Î(X;Z) = mean(matched − marginal) ≤ log N
//   retrieval accuracy: the share of replies whose own prompt scores highest (top-k for k = 2, 4, 8)
//   MI z-score: mean((matched − marginal) / (std(marginal) + 1e-3)), std the population std over replies.
// A policy whose replies depend on the input retrieves its prompts well above chance (1/N) and has Î
// near log N; a template — the same replies whatever the input — has Î ≈ 0 and chance-level retrieval,
// however high its entropy.
//
// Our choices: ties count against retrieval (a reply scored equally under its own and another prompt is
// not retrieved, so an input-blind policy sits at 0, not at 1); per-token versions divide each reply's
// scores by its token count.

export interface CrossScores {
  /** Replies (rows) × distinct prompts (columns), row-major: ℓ_j(z_i), summed over the reply's tokens. */
  readonly scores: Float64Array;
  readonly rows: number;
  readonly columns: number;
  /** Column of each row's own prompt. */
  readonly own: readonly number[];
  /** Tokens in each reply (for the per-token estimates). */
  readonly replyTokens: readonly number[];
}

export interface InformationEstimates {
  readonly conditionalEntropy: number;
  readonly marginalEntropy: number;
  readonly mutualInformation: number;
}

export interface TemplateCollapseMetrics extends InformationEstimates {
  /** Replies scored (rows) and distinct prompts (columns, N). */
  readonly pairs: number;
  readonly prompts: number;
  /** log N: the most Î can be. */
  readonly miUpperBound: number;
  readonly miZScore: number;
  readonly retrievalAccuracy: number;
  readonly retrievalTop2: number;
  readonly retrievalTop4: number;
  readonly retrievalTop8: number;
  /** 1/N, and accuracy − 1/N. */
  readonly chance: number;
  readonly aboveChance: number;
  /** The same estimates with each reply's scores divided by its token count. */
  readonly perToken: InformationEstimates;
}

function logSumExp(values: ArrayLike<number>): number {
  let max = -Infinity;
  for (let i = 0; i < values.length; i++) max = Math.max(max, values[i]!);
  if (max === -Infinity) return -Infinity;
  let sum = 0;
  for (let i = 0; i < values.length; i++) sum += Math.exp(values[i]! - max);
  return max + Math.log(sum);
}

const meanOf = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

function estimates(matched: readonly number[], marginal: readonly number[]): InformationEstimates {
  return {
    conditionalEntropy: -meanOf(matched),
    marginalEntropy: -meanOf(marginal),
    mutualInformation: meanOf(matched.map((m, i) => m - marginal[i]!)),
  };
}

/** The estimates of the header; throws on a malformed matrix (it is built by cross-score.ts, not by users). */
export function templateCollapseMetrics(m: CrossScores): TemplateCollapseMetrics {
  const { rows, columns, scores } = m;
  if (rows < 1 || columns < 1 || scores.length !== rows * columns || m.own.length !== rows || m.replyTokens.length !== rows) {
    throw new RangeError(`cross scores: ${rows}×${columns} matrix with ${scores.length} values, ${m.own.length} own columns, ${m.replyTokens.length} reply lengths`);
  }
  const logN = Math.log(columns);
  const matched: number[] = [];
  const marginal: number[] = [];
  const matchedPerToken: number[] = [];
  const marginalPerToken: number[] = [];
  const ranks: number[] = [];
  for (let i = 0; i < rows; i++) {
    const row = scores.subarray(i * columns, (i + 1) * columns);
    const own = m.own[i]!;
    if (!Number.isInteger(own) || own < 0 || own >= columns) throw new RangeError(`cross scores: row ${i} names column ${own} of ${columns}`);
    const length = Math.max(1, m.replyTokens[i]!);
    matched.push(row[own]!);
    marginal.push(logSumExp(row) - logN);
    matchedPerToken.push(row[own]! / length);
    marginalPerToken.push(logSumExp(row.map((x) => x / length)) - logN);
    // 1 + the prompts scoring at least as high as the own one (ties against retrieval).
    let rank = 1;
    for (let j = 0; j < columns; j++) if (j !== own && row[j]! >= row[own]!) rank++;
    ranks.push(rank);
  }
  const gaps = matched.map((x, i) => x - marginal[i]!);
  const marginalMean = meanOf(marginal);
  const marginalStd = Math.sqrt(meanOf(marginal.map((x) => (x - marginalMean) ** 2)));
  const topK = (k: number) => ranks.filter((r) => r <= k).length / rows;
  const accuracy = topK(1);
  return {
    ...estimates(matched, marginal),
    pairs: rows,
    prompts: columns,
    miUpperBound: logN,
    miZScore: meanOf(gaps.map((g) => g / (marginalStd + 1e-3))),
    retrievalAccuracy: accuracy,
    retrievalTop2: topK(2),
    retrievalTop4: topK(4),
    retrievalTop8: topK(8),
    chance: 1 / columns,
    aboveChance: accuracy - 1 / columns,
    perToken: estimates(matchedPerToken, marginalPerToken),
  };
}

/** The metrics as learner_step `metrics` entries (prefix 'template.'; see docs/concepts/learner.md). */
export function templateMetricsEntries(t: TemplateCollapseMetrics): Record<string, number> {
  return {
    'template.mi': t.mutualInformation,
    'template.miUpperBound': t.miUpperBound,
    'template.miZScore': t.miZScore,
    'template.conditionalEntropy': t.conditionalEntropy,
    'template.marginalEntropy': t.marginalEntropy,
    'template.miPerToken': t.perToken.mutualInformation,
    'template.retrievalAccuracy': t.retrievalAccuracy,
    'template.retrievalTop2': t.retrievalTop2,
    'template.retrievalTop4': t.retrievalTop4,
    'template.retrievalTop8': t.retrievalTop8,
    'template.chance': t.chance,
    'template.aboveChance': t.aboveChance,
    'template.pairs': t.pairs,
    'template.prompts': t.prompts,
  };
}
