// Fault suite (issue 8, item 2): a training run made of the parts `trajflow train` starts — sink,
// processors, learner, dashboard, actors — each its own process, SIGKILLed one after the other mid-run
// and started again the way a supervisor would. Training must go on, and at the end every step event
// that was written (every one the actors or the HTTP API acknowledged among them) must be in exactly
// one trajectory, every trajectory once, every expected sample once, trained at most once, and each
// event once in ClickHouse (FINAL); the learner's versions 0..N without a gap, a repeat only as the
// identical re-announcement of a restarted learner.
//
// Restart rules used here (what `trajflow train` does on resume): the actors continue after the last
// iteration they started (read from the steps topic), so the groups cut short by the kill stay partial;
// the processors close those episodes as 'incomplete' after --idle-timeout-ms and emit the partial
// groups after --group-timeout-ms. The learner resumes from its newest checkpoint.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { latestCheckpoint } from '../../learner/checkpoint/checkpoint.js';
import type { StepEvent } from '../../schemas/index.js';
import { waitFor } from '../helpers/kafka.js';
import { actorArgs, actorsDone, createFaultRun, groupIndexOf, startPoster, startTraining, type Part, type Poster } from './harness.js';
import { describe, learnerDrops, readLedger, waitDrained } from './ledger.js';

const ITERATIONS = 14;
const GROUPS = 2;
const MIN_SAMPLES = 4;

const updatesIn = (part: Part) => part.currentLines().filter((l) => /learner: update \d+ → v\d+/.test(l)).length;
const lastVersionIn = (part: Part) => Math.max(-1, ...part.lines.map((l) => Number(/learner: update \d+ → v(\d+)/.exec(l)?.[1] ?? -1)));

test('SIGKILL each part in turn mid-run (actors, learner, processors, sink, dashboard): training goes on, every acknowledged step once everywhere, versions without gaps', {
  timeout: 360_000,
}, async () => {
  const run = await createFaultRun('kill');
  const { runId } = run;
  const httpRunId = `${runId}-http`;
  const context = () => run.tails();
  let poster: Poster | undefined;
  try {
    const {
      sink,
      processors,
      learner: maybeLearner,
      dashboard,
      actors,
      dashboardUrl,
    } = await startTraining(run, {
      iterations: ITERATIONS,
      processors: ['--idle-timeout-ms', '6000', '--group-timeout-ms', '10000'],
    });
    const learner = maybeLearner!;
    poster = startPoster(() => dashboardUrl, httpRunId);

    // 1. Actors: killed once the learner trains, in the middle of an iteration.
    await learner.waitLine(/learner: update \d+ → v1\b/, 'the first update', 150_000);
    await actors.kill();
    const before = (await readLedger(run)).steps;
    const killedIn = Math.max(...before.map((s) => Math.floor(groupIndexOf(s.groupId) / GROUPS)));
    const lastOf = new Map<string, StepEvent>();
    for (const s of before) if ((lastOf.get(s.episodeId)?.stepIndex ?? -1) < s.stepIndex) lastOf.set(s.episodeId, s);
    const cut = [...lastOf.values()].filter((s) => !s.terminated && !s.truncated).length;
    const resumeAt = killedIn + 1;
    actors.start(actorArgs(runId, resumeAt, ITERATIONS - resumeAt, ['--max-staleness', '2']));
    console.log(
      `fault[actors SIGKILL]: killed in iteration ${killedIn} after ${before.length} steps (${lastOf.size} episodes started, ${cut} cut mid-episode); restarted at iteration ${resumeAt}`,
    );

    // 2. Learner: killed right after an update made from the restarted actors' steps.
    await waitFor(async () => (await readLedger(run)).steps.some((s) => groupIndexOf(s.groupId) >= resumeAt * GROUPS), 'steps from the restarted actors', 90_000, 500);
    const updatesBefore = updatesIn(learner);
    await learner.waitLine(new RegExp(`learner: update \\d+ → v${lastVersionIn(learner) + 1}\\b`), 'an update after the actors restarted', 90_000);
    assert.ok(updatesIn(learner) > updatesBefore);
    await learner.kill();
    const learnerKilledAt = lastVersionIn(learner);
    learner.start();
    const resumed = await learner.waitLine(/learner: resumed run \S+ at version (\d+)/, 'the learner to resume', 90_000);
    console.log(`fault[learner SIGKILL]: killed at v${learnerKilledAt}, resumed at v${resumed[1]}`);
    assert.ok(Number(resumed[1]) >= learnerKilledAt, 'resumed from its newest checkpoint');

    // 3. Processors, 4. sink, 5. dashboard: each killed once the previous one is back.
    await processors.kill();
    const atProcessorsKill = await readLedger(run);
    processors.start();
    await processors.waitLine(/processors: consumer group/, 'the processors to start again', 90_000);
    console.log(
      `fault[processors SIGKILL]: killed with ${atProcessorsKill.steps.length} actor steps on the topic, ${atProcessorsKill.trajectories.length} trajectories and ${atProcessorsKill.samples.length} samples written; restarted`,
    );
    const sinkRowsAtKill = (await run.ch.queryJson<{ n: string }>(`SELECT count() AS n FROM steps`))[0]!.n;
    await sink.kill();
    sink.start();
    await sink.waitLine(/sink: consumer group/, 'the sink to start again', 90_000);
    console.log(`fault[sink SIGKILL]: killed with ${sinkRowsAtKill} step rows inserted; restarted`);
    await waitFor(() => poster!.state.accepted >= 3, 'three HTTP groups acknowledged before the dashboard is killed', 60_000, 100);
    await dashboard.kill();
    const dashboardKilledAt = Date.now();
    dashboard.start();
    await dashboard.waitLine(/dashboard: API on/, 'the dashboard to listen again', 90_000);
    await waitFor(() => poster!.acceptedAfter(dashboardKilledAt) >= 3, 'three HTTP groups acknowledged by the restarted dashboard', 60_000, 100);
    await poster.stop();
    console.log(
      `fault[dashboard SIGKILL]: HTTP groups sent ${poster.state.sent}, acknowledged ${poster.state.accepted}, not acknowledged ${poster.state.failed} (${JSON.stringify(poster.state.statuses)})`,
    );

    // Training goes on: the actors finish, the learner trains past its resume point.
    const summary = await actorsDone(actors, 180_000);
    // Episodes the actors' SIGKILL cut leave groups that close late (after the processors' group timeouts): their
    // samples come long after their batch and are dropped as past the staleness bound, counted, never trained.
    const dropped = () => learnerDrops(learner.lines);
    const main = await waitDrained(run, runId, { learnerMinSamples: MIN_SAMPLES, learnerDropped: dropped, timeoutMs: 120_000, context });
    const http = await waitDrained(run, httpRunId, { timeoutMs: 60_000, context });
    const f = main.figures;
    console.log(describe('parts SIGKILLed, actors run', f, main.clickhouse));
    console.log(describe('parts SIGKILLed, HTTP run', http.figures, http.clickhouse));

    // Actors: life 2 acknowledged exactly what the topic holds for its iterations.
    const secondLife = main.ledger.steps.filter((s) => groupIndexOf(s.groupId) >= resumeAt * GROUPS);
    assert.equal(secondLife.length, summary.steps, `the restarted actors acknowledged ${summary.steps} steps; the topic holds ${secondLife.length} of their iterations`);
    assert.equal(new Set(secondLife.map((s) => s.episodeId)).size, summary.episodes);
    console.log(
      `fault[actors SIGKILL]: life 1 wrote ${f.stepsSent - secondLife.length} steps, life 2 acknowledged ${summary.steps} (${summary.episodes} episodes), topic holds ${f.stepsSent}: ${f.stepsSent - f.stepsDistinct} duplicates, ${f.stepsLost} lost`,
    );

    for (const [label, figures] of [
      ['actors run', f],
      ['HTTP run', http.figures],
    ] as const) {
      assert.equal(figures.stepDuplicates, 0, `${label}: no step event twice on the steps topic`);
      assert.equal(figures.stepsLost, 0, `${label}: every step in a trajectory`);
      assert.equal(figures.stepsForeign + figures.stepsAltered, 0, `${label}: trajectories hold the steps as sent`);
      assert.equal(figures.stepsInTrajectories, figures.stepsDistinct);
      assert.equal(figures.trajectoryDuplicates, 0, `${label}: no trajectory twice`);
      assert.equal(figures.sampleDuplicates, 0, `${label}: no sample twice`);
      assert.equal(figures.samplesOrphan, 0, `${label}: samples only of complete trajectories`);
      assert.equal(figures.samplesDistinct, figures.samplesExpected, `${label}: one sample per complete trajectory of every group of two or more`);
    }
    // Every HTTP step that got a 202 is there (the others may or may not be: the dashboard died before answering).
    const httpKeys = new Set(http.ledger.steps.map((s) => s.eventId));
    const lostHttp = [...poster.acknowledged].filter((id) => !httpKeys.has(id));
    assert.deepEqual(lostHttp, [], 'no acknowledged HTTP step lost');
    console.log(
      `fault[dashboard SIGKILL]: ${poster.acknowledged.size} steps acknowledged over HTTP, ${http.figures.stepsSent} on the topic, ${http.figures.stepsInTrajectories} in trajectories, ${lostHttp.length} lost, ${http.figures.stepDuplicates} duplicates`,
    );

    // The learner: versions 0..N, repeats only identical re-announcements; steps 0..N-1; each sample trained once.
    assert.deepEqual(f.versionGaps, [], 'no version missing');
    assert.equal(f.versionConflicts, 0, 'a repeated version is the same checkpoint');
    assert.deepEqual(f.learnerStepGaps, []);
    assert.equal(f.learnerSteps, f.versions.at(-1), 'one learner step per version after v0');
    assert.ok(f.versions.at(-1)! > learnerKilledAt + 1, `training went on after the learner's restart (v${learnerKilledAt} → v${f.versions.at(-1)})`);
    const checkpoint = await latestCheckpoint(join(run.config.home, 'checkpoints', run.prefix, runId));
    const trainedIds = new Set(checkpoint!.manifest.recentSampleIds);
    const sampleIds = new Set(main.ledger.samples.map((s) => s.sampleId));
    assert.equal(f.samplesTrained, trainedIds.size, `learner steps count ${f.samplesTrained} samples trained, the checkpoint ${trainedIds.size} distinct ones: none twice`);
    assert.ok(
      [...trainedIds].every((id) => sampleIds.has(id)),
      'only samples of this run trained',
    );
    assert.ok(f.samplesDistinct - f.samplesTrained - dropped() < MIN_SAMPLES, `all but the last partial batch trained or dropped as stale (${dropped()} dropped)`);
    // The staleness bound held on every update, across the learner's and the actors' restarts (the actors' gate
    // and the learner's drop both at 2, as harness.ts starts them).
    for (const step of main.ledger.learnerSteps) assert.ok(step.stalenessMax <= 2, `learner step ${step.step}: staleness ${step.stalenessMax} ≤ 2`);

    // ClickHouse: one row per event, every step event id.
    for (const [label, figures, ch] of [
      ['actors run', f, main.clickhouse],
      ['HTTP run', http.figures, http.clickhouse],
    ] as const) {
      assert.equal(ch.steps, figures.stepsDistinct, `${label}: ClickHouse steps FINAL`);
      assert.equal(ch.stepEventIds, figures.stepsDistinct, `${label}: ClickHouse step event ids`);
      assert.equal(ch.trajectories, figures.episodes, `${label}: ClickHouse trajectories FINAL`);
      assert.equal(ch.samples, figures.samplesDistinct, `${label}: ClickHouse samples FINAL`);
    }
    assert.equal(main.clickhouse.learnerSteps, f.learnerSteps);
    assert.equal(main.clickhouse.versions, f.versions.length);
    const [raw] = await run.ch.queryJson<{ n: string }>(`SELECT count() AS n FROM steps WHERE run_id IN ('${runId}', '${httpRunId}')`);
    console.log(
      `fault[sink SIGKILL]: ${Number(raw!.n)} raw step rows for ${f.stepsDistinct + http.figures.stepsDistinct} step events (re-inserted copies after the kill collapse under FINAL: ${main.clickhouse.steps + http.clickhouse.steps} rows)`,
    );
  } finally {
    await poster?.stop();
    await run.cleanup();
  }
});
