// Unit: the types the dashboard's browser code is checked against (web/static/types.d.ts, written out there so the
// browser's check holds no server code) fit what the API sends. The type checker does the comparing, in
// `npm run typecheck`: each response as its route builds it from the read model's types must be assignable to the
// type the dashboard declares for it, so a field the pages read that the API drops or retypes fails the check. The
// test itself makes sure every type the dashboard declares is compared here.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import type { ProblemDetails } from '../../core/problem.js';
import type { AlertView, AlertsQuery, AlertsResult } from '../../storage/query/alerts.js';
import type { CurvePoint, CurveResult, SeriesQuery } from '../../storage/query/curve.js';
import type { DeadLetterQuery, DeadLetterView } from '../../storage/query/dead-letters.js';
import type { EpisodeOutcomes, EpisodeOutcomesQuery } from '../../storage/query/episode-outcomes.js';
import type { EvaluationView, EvaluationsQuery, EvaluationsResult } from '../../storage/query/evaluations.js';
import type { EventType } from '../../storage/query/events.js';
import type { GroupLag, LagQuery, LagReport, PartitionLag, TopicLag } from '../../storage/query/lag.js';
import type { LearnerMetricsQuery, LearnerMetricsResult, LearnerMetricsView } from '../../storage/query/learner-metrics.js';
import type { PassAtKResult } from '../../storage/query/pass-at-k.js';
import type { RolloutFigures, RolloutStatsView } from '../../storage/query/rollout-stats.js';
import type { RunView, RunsQuery, RunsResult } from '../../storage/query/runs.js';
import type {
  AdvantageSource,
  EpisodeView,
  SampleTokens,
  SampleView,
  StepView,
  TrajectoriesQuery,
  TrajectoriesResult,
  TrajectoryView,
  TurnSpan,
} from '../../storage/query/trajectories.js';
import type { TokenText, withTokenText } from '../../api/token-text.js';
import type * as Web from '../../web/static/types.js';

/** Type-checks only when the first type (the API's) is assignable to the second (the dashboard's); true at run time. */
const fits = <_Api extends Dashboard, Dashboard>(): true => true;

/** Each route's answer, built as api/read-handlers.ts, api/lag-route.ts and api/dead-letters-route.ts build it. */
type Listed<Query, Result> = { readonly runId: string; readonly query: Query; readonly count: number } & Result;
/** The views GET /v1/events sends, by event type (storage/query/events.ts eventView). */
type LiveEvents = { readonly 'rollout-stats': RolloutStatsView; readonly 'learner-step': LearnerMetricsView; readonly alert: AlertView; readonly evaluation: EvaluationView };

/** Every type of web/static/types.d.ts that describes the API's JSON, compared with what the API sends. */
const compared = {
  Problem: fits<ProblemDetails, Web.Problem>(),
  RunView: fits<RunView, Web.RunView>(),
  PassMap: fits<PassAtKResult['overall']['passAtK'], Web.PassMap>(),
  RolloutFigures: fits<RolloutFigures, Web.RolloutFigures>(),
  RolloutStatsView: fits<RolloutStatsView, Web.RolloutStatsView>(),
  CurvePoint: fits<CurvePoint, Web.CurvePoint>(),
  LearnerMetricsView: fits<LearnerMetricsView, Web.LearnerMetricsView>(),
  AlertView: fits<AlertView, Web.AlertView>(),
  EvaluationView: fits<EvaluationView, Web.EvaluationView>(),
  TrajectoryView: fits<TrajectoryView, Web.TrajectoryView>(),
  TurnSpan: fits<TurnSpan, Web.TurnSpan>(),
  StepView: fits<StepView, Web.StepView>(),
  SampleTokens: fits<SampleTokens, Web.SampleTokens>(),
  SampleView: fits<SampleView, Web.SampleView>(),
  AdvantageSource: fits<AdvantageSource, Web.AdvantageSource>(),
  TokenText: fits<TokenText, Web.TokenText>(),
  EpisodeView: fits<ReturnType<typeof withTokenText<EpisodeView>>, Web.EpisodeView>(),
  EpisodeOutcomes: fits<EpisodeOutcomes, Web.EpisodeOutcomes>(),
  RunsResponse: fits<{ readonly query: RunsQuery; readonly count: number } & RunsResult, Web.RunsResponse>(),
  CurveResponse: fits<Listed<SeriesQuery, CurveResult>, Web.CurveResponse>(),
  PassAtKResponse: fits<{ readonly runId: string; readonly query: SeriesQuery } & PassAtKResult, Web.PassAtKResponse>(),
  LearnerMetricsResponse: fits<Listed<LearnerMetricsQuery, LearnerMetricsResult>, Web.LearnerMetricsResponse>(),
  AlertsResponse: fits<Listed<AlertsQuery, AlertsResult>, Web.AlertsResponse>(),
  EvaluationsResponse: fits<Listed<EvaluationsQuery, EvaluationsResult>, Web.EvaluationsResponse>(),
  EpisodeOutcomesResponse: fits<{ readonly runId: string; readonly query: EpisodeOutcomesQuery } & EpisodeOutcomes, Web.EpisodeOutcomesResponse>(),
  TrajectoriesResponse: fits<Listed<TrajectoriesQuery, TrajectoriesResult>, Web.TrajectoriesResponse>(),
  PartitionLag: fits<PartitionLag, Web.PartitionLag>(),
  TopicLag: fits<TopicLag, Web.TopicLag>(),
  GroupLag: fits<GroupLag, Web.GroupLag>(),
  LagReport: fits<LagReport, Web.LagReport>(),
  LagResponse: fits<{ readonly query: LagQuery; readonly totalLag: number | null } & LagReport, Web.LagResponse>(),
  DeadLetterView: fits<DeadLetterView, Web.DeadLetterView>(),
  DeadLettersResponse: fits<{ readonly query: DeadLetterQuery; readonly count: number; readonly deadLetters: DeadLetterView[] }, Web.DeadLettersResponse>(),
  LiveEvents: fits<LiveEvents, Web.LiveEvents>(),
  // Both ways: the page listens to every type the stream sends, and to no other.
  LiveEventType: fits<EventType, Web.LiveEventType>() && fits<Web.LiveEventType, EventType>(),
};

/** Types built from the ones above, not JSON of their own. */
const DERIVED = ['ResponseOf', 'LiveEvent', 'OnLiveEvent'];

/** The names web/static/types.d.ts exports. */
function declaredTypes(): string[] {
  const file = fileURLToPath(new URL('../../web/static/types.d.ts', import.meta.url));
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest);
  return source.statements
    .filter((s): s is ts.InterfaceDeclaration | ts.TypeAliasDeclaration => ts.isInterfaceDeclaration(s) || ts.isTypeAliasDeclaration(s))
    .filter((s) => s.modifiers?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword))
    .map((s) => s.name.text);
}

test('every type the dashboard declares for the API is compared with the API’s own', () => {
  const declared = declaredTypes();
  assert.ok(declared.length > 20, `${declared.length} types`);
  assert.deepEqual([...declared].sort(), [...Object.keys(compared), ...DERIVED].sort());
  assert.ok(Object.values(compared).every((ok) => ok));
});
