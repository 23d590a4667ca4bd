// Fault suite (issue 8, item 2): garbage in the middle of a training run — on the steps topic (random
// bytes, truncated Avro, an unknown schema fingerprint, schema-invalid values, another event's bytes),
// some of it keyed like the run's own groups so it lands between their steps, and through the HTTP API
// (bad JSON, wrong types, missing and unknown fields, broken rules, non-Avro bytes). Each bad message must
// become a dead letter with its reason — once per consumer group that read it (processors and sink both
// read the steps topic) — with the bytes kept; the run must go on untouched, and the counts add up: steps
// topic = actors' steps + HTTP steps + garbage; dead letters = 2 × garbage + rejected HTTP bodies, the
// same in ClickHouse.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { topicName } from '../../core/config.js';
import { HTTP_SOURCE_TOPIC } from '../../api/steps-route.js';
import type { StepEvent } from '../../schemas/index.js';
import { sampleEvents } from '../../bench/load/events.js';
import { waitFor } from '../helpers/kafka.js';
import { actorsDone, countFinal, createFaultRun, messageCount, readTopic, startPoster, startTraining, type Poster } from './harness.js';
import { describe, learnerDrops, waitDrained } from './ledger.js';

const ITERATIONS = 6;
const MIN_SAMPLES = 4;
/** startPoster sends one group of 4 episodes × 3 steps per request. */
const HTTP_STEPS_PER_REQUEST = 12;

test('garbage on the steps topic and through HTTP mid-run: dead letters with reasons, the run goes on, the counts add up', { timeout: 240_000 }, async () => {
  const run = await createFaultRun('garbage');
  const { runId, backbone } = run;
  const httpRunId = `${runId}-http`;
  const context = () => run.tails();
  const stepsTopic = topicName(run.config, 'env.steps');
  let poster: Poster | undefined;
  let garbageDone = false;
  let sending: Promise<void> = Promise.resolve();
  try {
    const training = await startTraining(run, { iterations: ITERATIONS });
    poster = startPoster(() => training.dashboardUrl, httpRunId, 500);

    // Garbage on the steps topic, one message every 100 ms while the actors run, kinds in turn.
    const good = (i: number): StepEvent => ({ ...sampleEvents.step, runId: `garbage-${i}`, eventId: `garbage-${i}`, stepIndex: i });
    const kinds: Array<[string, (i: number) => Buffer]> = [
      ['bad-marker', (i) => Buffer.concat([Buffer.from([0x00]), Buffer.from(`random ${i} `), randomBytes(40)])],
      [
        'truncated',
        (i) => {
          const bytes = backbone.codec.encode('step', good(i));
          return bytes.subarray(0, Math.floor(bytes.length / 2));
        },
      ],
      [
        'unknown-fingerprint',
        (i) => {
          const bytes = Buffer.from(backbone.codec.encode('step', good(i)));
          bytes.fill(0x5a, 2, 10);
          return bytes;
        },
      ],
      ['invalid-value', (i) => backbone.codec.encode('step', { ...good(i), actionLogProbs: good(i).actionLogProbs.map(() => 0.5) })],
      ['wrong-event', (i) => backbone.codec.encode('sample', { ...sampleEvents.sample, sampleId: `garbage-${i}` })],
    ];
    const garbage = new Map<string, string>(); // payload hex → the reason it must get
    await training.learner!.waitLine(/learner: update \d+ → v1\b/, 'the first update', 150_000);
    sending = (async () => {
      for (let i = 0; !garbageDone; i++) {
        const [reason, make] = kinds[i % kinds.length]!;
        const payload = make(i);
        garbage.set(payload.toString('hex'), reason);
        // Half of it keyed like the run's groups: it lands in their partitions, between their steps.
        await backbone.producer.sendRaw(stepsTopic, { key: i % 2 === 0 ? `${runId}/g${i % 6}` : `garbage-${i}`, value: payload });
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    })();

    // Bad HTTP bodies, mid-run: each a 400 with its reason, dead-lettered.
    const [step] = (await readTopic(run, 'env.steps', 'step')).filter((s) => s.runId === runId);
    const { reward: _r, ...missingReward } = step!;
    const badBodies: Array<[string, string | Buffer, string]> = [
      ['not JSON', '{"eventId": ', 'bad-json'],
      ['wrong type', JSON.stringify({ ...step, policyVersion: 'v3' }), 'invalid-value'],
      ['missing field', JSON.stringify(missingReward), 'invalid-value'],
      ['unknown field', JSON.stringify({ ...step, stateKye: 'pos=3' }), 'unknown-field'],
      ['broken rule', JSON.stringify({ ...step, actionLogProbs: step!.actionLogProbs.map(() => 0.5) }), 'invalid-value'],
      ['not Avro', Buffer.from('plainly not avro'), 'bad-marker'],
    ];
    for (const [what, body, reason] of badBodies) {
      const response = await fetch(`${training.dashboardUrl}/v1/steps`, {
        method: 'POST',
        headers: { 'content-type': Buffer.isBuffer(body) ? 'application/vnd.trajflow.avro' : 'application/json' },
        body: Buffer.isBuffer(body) ? new Uint8Array(body) : body,
      });
      const answer = (await response.json()) as { reason?: string; deadLettered?: boolean };
      assert.equal(response.status, 400, what);
      assert.equal(answer.reason, reason, what);
      assert.equal(answer.deadLettered, true, what);
    }

    const summary = await actorsDone(training.actors, 180_000);
    garbageDone = true;
    await sending;
    await poster.stop();
    const main = await waitDrained(run, runId, { learnerMinSamples: MIN_SAMPLES, learnerDropped: () => learnerDrops(training.learner!.lines), timeoutMs: 120_000, context });
    const http = await waitDrained(run, httpRunId, { timeoutMs: 60_000, context });
    const f = main.figures;

    // Dead letters: every garbage payload twice (processors and sink), each HTTP body once, nothing else.
    const expectedLetters = 2 * garbage.size + badBodies.length;
    let letters = await readTopic(run, 'deadletter', 'dead_letter');
    await waitFor(async () => (letters = await readTopic(run, 'deadletter', 'dead_letter')).length >= expectedLetters, `${expectedLetters} dead letters`, 60_000, 500);
    await waitFor(async () => (await countFinal(run, 'dead_letters')) >= letters.length, 'the dead letters in ClickHouse', 60_000, 500);
    const fromTopic = letters.filter((l) => l.sourceTopic === stepsTopic);
    const fromHttp = letters.filter((l) => l.sourceTopic === HTTP_SOURCE_TOPIC);
    const perPayload = new Map<string, number>();
    for (const letter of fromTopic) {
      const hex = letter.payload.toString('hex');
      assert.equal(letter.reason, garbage.get(hex), `the reason of a dead letter at ${letter.sourceTopic}[${letter.sourcePartition}]@${letter.sourceOffset}`);
      assert.ok(letter.detail.length > 0);
      perPayload.set(hex, (perPayload.get(hex) ?? 0) + 1);
    }
    const byReason = (list: readonly { reason: string }[]) => list.reduce<Record<string, number>>((acc, l) => ({ ...acc, [l.reason]: (acc[l.reason] ?? 0) + 1 }), {});
    const stepsOnTopic = await messageCount(run, 'env.steps');
    const chLetters = await countFinal(run, 'dead_letters');
    const chReasons = Object.fromEntries(
      (await run.ch.queryJson<{ reason: string; n: string }>('SELECT reason, count() AS n FROM dead_letters FINAL GROUP BY reason')).map((r) => [r.reason, Number(r.n)]),
    );
    const dashboardList = (await (await fetch(`${training.dashboardUrl}/v1/dead-letters?limit=1000&sinceMs=${Date.now() - 3_600_000}`)).json()) as { count: number };
    console.log(describe('garbage, actors run', f, main.clickhouse));
    console.log(describe('garbage, HTTP run', http.figures, http.clickhouse));
    console.log(
      `fault[garbage]: steps topic ${stepsOnTopic} messages = ${summary.steps} actor steps + ${poster.acknowledged.size} HTTP steps + ${garbage.size} garbage (${JSON.stringify(byReason([...garbage.values()].map((reason) => ({ reason }))))}); ` +
        `dead letters ${letters.length} = 2 × ${garbage.size} from the topic + ${fromHttp.length} of ${badBodies.length} HTTP bodies (${JSON.stringify(byReason(fromHttp))}); ClickHouse ${chLetters}, GET /v1/dead-letters ${dashboardList.count}`,
    );

    // The HTTP run's steps on the topic: every acknowledged one, plus those of a request answered 503 after
    // Kafka took longer than the API's ack timeout (10 s) yet stored them — the API says "some may have been
    // written", and consumers drop repeats by event id. That happened once in CI with three learning runs on
    // the 2-core machine; nothing else may be there, and nothing acknowledged may be missing.
    const httpOnTopic = http.figures.stepsSent;
    const httpIds = new Set(http.ledger.steps.map((step) => step.eventId));
    const acknowledgedOnTopic = [...poster.acknowledged].filter((id) => httpIds.has(id)).length;
    assert.equal(stepsOnTopic, summary.steps + httpOnTopic + garbage.size, 'steps topic = actors + HTTP + garbage');
    assert.equal(acknowledgedOnTopic, poster.acknowledged.size, 'every HTTP step answered 202 is on the topic');
    const unanswered = Object.entries(poster.state.statuses).filter(([status]) => status !== '202');
    assert.ok(
      unanswered.every(([status]) => status === '503' || status === 'no answer'),
      `only retryable answers besides 202: ${JSON.stringify(poster.state.statuses)}`,
    );
    assert.ok(
      httpOnTopic - poster.acknowledged.size <= HTTP_STEPS_PER_REQUEST * poster.state.failed,
      `HTTP steps on the topic beyond the acknowledged ones come from unacknowledged requests (${JSON.stringify(poster.state.statuses)})`,
    );
    assert.ok(poster.state.accepted >= 0.9 * poster.state.sent, `nearly every good HTTP request acknowledged: ${JSON.stringify(poster.state.statuses)}`);
    assert.equal(fromTopic.length, 2 * garbage.size, 'each garbage message dead-lettered by processors and by sink');
    assert.ok(
      [...garbage.keys()].every((hex) => perPayload.get(hex) === 2),
      'each garbage payload kept byte for byte, twice',
    );
    assert.deepEqual(
      fromHttp.map((l) => l.reason),
      badBodies.map(([, , reason]) => reason),
      'each bad HTTP body dead-lettered with its reason',
    );
    assert.equal(letters.length, expectedLetters, 'no other dead letter (no good event was rejected)');
    assert.equal(chLetters, letters.length, 'ClickHouse holds every dead letter once');
    assert.deepEqual(chReasons, byReason(letters));
    assert.equal(dashboardList.count, letters.length, 'GET /v1/dead-letters lists them');
    // The run went on untouched.
    assert.equal(f.stepsSent, summary.steps);
    for (const [label, figures, ch] of [
      ['actors run', f, main.clickhouse],
      ['HTTP run', http.figures, http.clickhouse],
    ] as const) {
      assert.equal(figures.stepDuplicates + figures.trajectoryDuplicates + figures.sampleDuplicates, 0, `${label}: nothing twice`);
      assert.equal(figures.stepsLost + figures.stepsForeign + figures.stepsAltered, 0, `${label}: every step in its trajectory`);
      assert.equal(figures.incompleteTrajectories, 0, `${label}: no episode broken by the garbage`);
      assert.equal(figures.samplesDistinct, figures.samplesExpected, `${label}: a sample per episode`);
      assert.equal(ch.steps, figures.stepsDistinct, `${label}: ClickHouse steps`);
      assert.equal(ch.trajectories, figures.episodes, `${label}: ClickHouse trajectories`);
      assert.equal(ch.samples, figures.samplesDistinct, `${label}: ClickHouse samples`);
    }
    assert.deepEqual(f.versionGaps, []);
    assert.equal(f.versionEvents, f.versions.length);
    assert.equal(f.episodes, ITERATIONS * 8);
  } finally {
    garbageDone = true;
    await sending.catch(() => undefined);
    await poster?.stop();
    await run.cleanup();
  }
});
