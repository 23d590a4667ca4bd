// The JSON the dashboard reads from the /v1 API, for the type checker only: no code, and the page never loads this
// file (the modules name these types in JSDoc). The element types copy the read model's views (storage/query/,
// api/token-text.ts) and each response holds what its route answers (api/read-routes.ts, api/lag-route.ts,
// api/dead-letters-route.ts); test/web/dashboard-types.unit.spec.ts fails the type-check when the API's types
// stop fitting these. Copied rather than imported, so the browser's check holds no server code and no Node types.

/** A problem response (RFC 9457) or whatever else a failed request answered. */
export interface Problem {
  readonly title?: string;
  readonly detail?: string;
}

export interface RunView {
  readonly runId: string;
  readonly envName: string | null;
  readonly envVersion: string | null;
  readonly firstEventTimeMs: number;
  readonly lastEventTimeMs: number;
  readonly stepEvents: number;
  readonly episodes: number;
  readonly assembledEpisodes: number;
  readonly successfulEpisodes: number;
  readonly rolloutBatches: number;
  readonly learnerSteps: number;
  readonly latestPolicyVersion: number | null;
}

/** pass@k or pass^k by k (the keys are k as text). */
export type PassMap = Readonly<Record<string, number | null>>;

/** What a rollout batch (or a bucket of batches) reports. */
export interface RolloutFigures {
  readonly groups: number;
  readonly trajectories: number;
  readonly rewardMean: number | null;
  readonly rewardStd: number | null;
  readonly meanInGroupRewardStd: number | null;
  readonly successRate: number | null;
  readonly passAtK: PassMap;
  readonly passHatK: PassMap;
  readonly meanLength: number | null;
  readonly invalidActionRate: number | null;
  readonly incomplete: number;
  readonly droppedGroups: number;
}

/** A rollout-stats row: what the event stream sends for a batch. */
export interface RolloutStatsView extends RolloutFigures {
  readonly runId: string;
  readonly scope: string;
  readonly batchId: string;
  readonly groupId: string | null;
  readonly droppedByReason: Readonly<Record<string, number | null>>;
  /** Groups of the batch by close reason (full, idle, timeout, evicted, …); {} for a batch written before they were counted. */
  readonly closedBy: Readonly<Record<string, number | null>>;
  readonly eventTimeMs: number;
}

/** One point of the learning curve: a batch, or a bucket of batches. */
export interface CurvePoint extends RolloutFigures {
  readonly timeMs: number;
  /** Null for a bucket of several batches. */
  readonly batchId: string | null;
  readonly batches: number;
  readonly lastEventTimeMs: number;
  readonly rewardLow: number | null;
  readonly rewardHigh: number | null;
  readonly envSteps: number | null;
  readonly cumulativeEnvSteps: number | null;
  /** The newest policy version published by the point's newest batch; null before the first. */
  readonly policyVersion: number | null;
  readonly closedFull: number;
  readonly closedIdle: number;
  readonly closedTimeout: number;
  readonly closedEvicted: number;
}

export interface LearnerMetricsView {
  readonly step: number;
  readonly policyVersion: number;
  readonly totalLoss: number | null;
  readonly policyLoss: number | null;
  readonly klLoss: number | null;
  readonly entropyLoss: number | null;
  readonly entropy: number | null;
  readonly kl: number | null;
  readonly clipFraction: number | null;
  readonly clipFractionLow: number | null;
  readonly gradNormPreClip: number | null;
  readonly learningRate: number | null;
  readonly tokens: number;
  readonly samples: number;
  readonly stalenessMean: number | null;
  readonly stalenessMax: number | null;
  readonly durationMs: number | null;
  readonly backend: string | null;
  /** Named metrics of the update (importance weights, dropped samples, template-collapse scores, …). */
  readonly metrics: Readonly<Record<string, number | null>>;
  readonly eventTimeMs: number;
  readonly nonFinite: Readonly<Record<string, string>>;
  /** Env steps of the run's rollout batches by the step; null before the first, and in the event stream. */
  readonly envSteps: number | null;
}

export interface AlertView {
  readonly alertId: string;
  readonly runId: string;
  readonly kind: string;
  /** critical, warning or info. */
  readonly severity: string;
  readonly learnerStep: number;
  readonly policyVersion: number;
  readonly value: number | null;
  readonly threshold: number | null;
  readonly message: string;
  readonly evidence: Readonly<Record<string, number | null>>;
  readonly eventTimeMs: number;
  /** Env steps of the run's rollout batches by the alert; null before the first, and in the event stream. */
  readonly envSteps: number | null;
}

export interface EvaluationView {
  readonly runId: string;
  readonly policyVersion: number;
  readonly trainedIteration: number;
  readonly envSteps: number;
  readonly envName: string;
  readonly envOptions: string;
  readonly tasks: number;
  readonly greedySuccess: number | null;
  readonly meanReward: number | null;
  readonly meanSteps: number | null;
  readonly randomSuccess: number | null;
  readonly durationMs: number | null;
  readonly eventTimeMs: number;
}

export interface TrajectoryView {
  readonly runId: string;
  readonly envName: string;
  readonly envVersion: string;
  readonly groupId: string;
  readonly episodeId: string;
  readonly outcome: string;
  readonly stepCount: number;
  readonly totalReward: number | null;
  readonly success: boolean;
  readonly invalidActions: number;
  readonly gapCount: number;
  readonly minPolicyVersion: number;
  readonly maxPolicyVersion: number;
  readonly firstEventTimeMs: number;
  readonly lastEventTimeMs: number;
  readonly metrics: Readonly<Record<string, number | null>>;
}

/** Where a turn's tokens are in the sample's token arrays. */
export interface TurnSpan {
  readonly observationStart: number;
  readonly actionStart: number;
  readonly end: number;
}

export interface StepView {
  readonly eventId: string;
  readonly stepIndex: number;
  readonly observation: string;
  readonly observationTokenIds: number[] | null;
  readonly action: string;
  readonly actionTokenIds: number[];
  readonly actionLogProbs: Array<number | null>;
  readonly policyVersion: number;
  readonly reward: number | null;
  readonly terminated: boolean;
  readonly truncated: boolean;
  readonly actionValid: boolean;
  readonly stateKey: string | null;
  readonly metrics: Readonly<Record<string, number | null>>;
  readonly info: Readonly<Record<string, string>>;
  readonly eventTimeMs: number;
  readonly advantage: number | null;
  readonly sampleSpan: TurnSpan | null;
}

export interface SampleTokens {
  readonly tokenIds: number[];
  /** 1 where the token is in the loss (the policy generated it), 0 where the environment returned it. */
  readonly lossMask: number[];
  readonly advantages: Array<number | null>;
  readonly behaviourLogProbs: Array<number | null>;
}

export interface SampleView {
  readonly sampleId: string;
  readonly policyVersion: number;
  readonly reward: number | null;
  readonly estimator: string;
  readonly groupSize: number;
  readonly groupRewardMean: number | null;
  readonly groupRewardStd: number | null;
  readonly tokenCount: number;
  readonly lossTokenCount: number;
  readonly eventTimeMs: number;
  /** Null when the sink did not store the token arrays. */
  readonly tokens: SampleTokens | null;
  readonly stepAdvantages: Array<number | null> | null;
}

export type AdvantageSource = 'sample-tokens' | 'step-advantages' | 'trajectory-advantage' | null;

/** The sample's tokens as text, one piece per token id. */
export interface TokenText {
  readonly tokenizer: string;
  readonly pieces: string[];
}

/** GET /v1/runs/:runId/trajectories/:episodeId: one episode turn by turn, with its sample. */
export interface EpisodeView {
  readonly runId: string;
  readonly episodeId: string;
  /** Null when the episode has steps but was never assembled. */
  readonly trajectory: TrajectoryView | null;
  readonly steps: StepView[];
  readonly stepsTruncated: boolean;
  readonly sample: SampleView | null;
  readonly sampleIds: string[];
  readonly tokensStored: boolean;
  readonly advantageSource: AdvantageSource;
  /** Whether the steps were located in the sample's tokens (sampleSpan). */
  readonly aligned: boolean;
  /** Null when trajflow's tokenizer did not make the tokens. */
  readonly tokenText: TokenText | null;
}

/** GET /v1/runs/:runId/episode-outcomes. */
export interface EpisodeOutcomes {
  readonly trajectories: { readonly terminated: number; readonly truncated: number; readonly incomplete: number };
  readonly gateway: { readonly finished: number; readonly timedOut: number };
}

/** GET /v1/runs. */
export interface RunsResponse {
  readonly count: number;
  readonly truncated: boolean;
  readonly runs: RunView[];
}

/** GET /v1/runs/:runId/curve. */
export interface CurveResponse {
  readonly runId: string;
  readonly count: number;
  readonly truncated: boolean;
  /** The bucket width; null: one point per batch. */
  readonly bucketMs: number | null;
  readonly autoBucketed: boolean;
  readonly points: CurvePoint[];
}

/** GET /v1/runs/:runId/pass-at-k. */
export interface PassAtKResponse {
  readonly runId: string;
  readonly ks: number[];
  readonly latest: { readonly batchId: string; readonly eventTimeMs: number; readonly groups: number; readonly passAtK: PassMap; readonly passHatK: PassMap } | null;
  readonly overall: { readonly batches: number; readonly passAtK: PassMap; readonly passHatK: PassMap };
  readonly byK: ReadonlyArray<{
    readonly k: number;
    readonly latestPassAtK: number | null;
    readonly latestPassHatK: number | null;
    readonly overallPassAtK: number | null;
    readonly overallPassHatK: number | null;
  }>;
}

/** GET /v1/runs/:runId/learner-metrics. */
export interface LearnerMetricsResponse {
  readonly runId: string;
  readonly count: number;
  readonly truncated: boolean;
  readonly learnerSteps: LearnerMetricsView[];
}

/** GET /v1/runs/:runId/alerts. */
export interface AlertsResponse {
  readonly runId: string;
  readonly count: number;
  readonly truncated: boolean;
  readonly alerts: AlertView[];
}

/** GET /v1/runs/:runId/evaluations. */
export interface EvaluationsResponse {
  readonly runId: string;
  readonly count: number;
  readonly truncated: boolean;
  readonly evaluations: EvaluationView[];
}

/** GET /v1/runs/:runId/episode-outcomes. */
export interface EpisodeOutcomesResponse extends EpisodeOutcomes {
  readonly runId: string;
}

/** GET /v1/runs/:runId/trajectories. */
export interface TrajectoriesResponse {
  readonly runId: string;
  readonly count: number;
  readonly truncated: boolean;
  readonly trajectories: TrajectoryView[];
}

export interface PartitionLag {
  readonly partition: number;
  readonly committedOffset: number | null;
  readonly lowWatermark: number | null;
  readonly highWatermark: number | null;
  readonly lag: number | null;
}

export interface TopicLag {
  readonly topic: string;
  readonly lag: number | null;
  readonly partitions: PartitionLag[];
}

export interface GroupLag {
  readonly groupId: string;
  readonly state: string;
  readonly members: number;
  /** Null when some partition's offsets could not be read. */
  readonly lag: number | null;
  readonly topics: TopicLag[];
}

export interface LagReport {
  readonly prefix: string;
  readonly groups: GroupLag[];
  readonly truncated: boolean;
}

/** GET /v1/lag. */
export interface LagResponse extends LagReport {
  /** Sum over the groups; null when some partition's offsets could not be read. */
  readonly totalLag: number | null;
}

export interface DeadLetterView {
  readonly reason: string;
  readonly detail: string;
  readonly sourceTopic: string;
  readonly sourcePartition: number;
  readonly sourceOffset: number;
  readonly keyBase64: string | null;
  readonly payloadBytes: number;
  readonly payloadBase64: string;
  readonly payloadTruncated: boolean;
  readonly eventTimeMs: number;
  readonly deadLetterTopic: string;
  readonly deadLetterPartition: number;
  readonly deadLetterOffset: number;
}

/** GET /v1/dead-letters. */
export interface DeadLettersResponse {
  readonly count: number;
  readonly deadLetters: DeadLetterView[];
}

/**
 * The JSON each GET path the pages call answers, by the path's pattern (a query string after `?`); a path no
 * pattern matches is `never`, so a mistyped path fails the check where its answer is used.
 */
export type ResponseOf<P extends string> = P extends `/v1/runs?${string}`
  ? RunsResponse
  : P extends `/v1/runs/${string}/trajectories/${string}`
    ? EpisodeView
    : P extends `/v1/runs/${string}/trajectories?${string}`
      ? TrajectoriesResponse
      : P extends `/v1/runs/${string}/curve?${string}`
        ? CurveResponse
        : P extends `/v1/runs/${string}/pass-at-k?${string}`
          ? PassAtKResponse
          : P extends `/v1/runs/${string}/learner-metrics?${string}`
            ? LearnerMetricsResponse
            : P extends `/v1/runs/${string}/alerts?${string}`
              ? AlertsResponse
              : P extends `/v1/runs/${string}/evaluations?${string}`
                ? EvaluationsResponse
                : P extends `/v1/runs/${string}/episode-outcomes${string}`
                  ? EpisodeOutcomesResponse
                  : P extends `/v1/lag${'' | `?${string}`}`
                    ? LagResponse
                    : P extends `/v1/dead-letters${'' | `?${string}`}`
                      ? DeadLettersResponse
                      : never;

/** The events GET /v1/events sends for a run, by type: each carries the view its REST endpoint lists. */
export interface LiveEvents {
  readonly 'rollout-stats': RolloutStatsView;
  readonly 'learner-step': LearnerMetricsView;
  readonly alert: AlertView;
  readonly evaluation: EvaluationView;
}

export type LiveEventType = keyof LiveEvents;

/** A live event's type and data as one pair, so that checking the type narrows the data. */
export type LiveEvent = { [T in LiveEventType]: [type: T, data: LiveEvents[T]] }[LiveEventType];

export type OnLiveEvent = (...event: LiveEvent) => void;
