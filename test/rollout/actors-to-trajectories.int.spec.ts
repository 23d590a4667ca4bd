// Integration (real Kafka): for every built-in environment, actors → Kafka → processors → trajectories
// and samples: every episode the actors played comes out as one complete trajectory with its steps.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { lastValueFrom, toArray } from 'rxjs';
import { loadConfig, topicName } from '../../core/config.js';
import { ensureTopics } from '../../infra/topics.js';
import { actorsConfig, startActors } from '../../rollout/index.js';
import { envNames } from '../../envs/index.js';
import { OpenEnvEnvironment } from '../../envs/openenv/index.js';
import { startFakeOpenEnvServer } from '../envs/openenv/fake-openenv-server.js';
import { startProcessors, type ProcessorsHandle } from '../../processors/pipeline/processor.js';
import type { TrajectoryEvent } from '../../schemas/index.js';
import { classifyDecodeError, connectBackbone, createReplay, eventDecoder, type Backbone } from '../../streams/index.js';
import { uniqueName, waitFor } from '../helpers/kafka.js';
import { testProcessing } from '../processors/helpers/processing.js';

const config = { ...loadConfig(), topicPrefix: uniqueName('actors-e2e') };
const GROUPS = 2;
const GROUP_SIZE = 4;
let backbone: Backbone;
let processors: ProcessorsHandle;

before(async () => {
  await ensureTopics(config);
  backbone = await connectBackbone(config, { clientId: 'test-actors-e2e' });
  processors = await startProcessors(backbone, { consumerGroupId: uniqueName('processors'), processing: testProcessing, groupSize: GROUP_SIZE, flushIntervalMs: 50 });
});

after(async () => {
  await processors.close();
  await backbone.close();
});

async function trajectoriesOf(runId: string): Promise<TrajectoryEvent[]> {
  const replay = await createReplay(backbone.kafka, {
    topic: topicName(config, 'trajectories'),
    decode: eventDecoder(backbone.codec, 'trajectory'),
    classify: classifyDecodeError,
  });
  return (await lastValueFrom(replay.events$.pipe(toArray()))).map((e) => e.value).filter((t) => t.runId === runId);
}

for (const envName of envNames) {
  test(`${envName}: actors → Kafka → processors → one complete trajectory per episode`, { timeout: 90_000 }, async () => {
    const runId = `e2e-${envName.toLowerCase()}`;
    const run = await startActors(backbone, actorsConfig({ runId, envName, groups: GROUPS, groupSize: GROUP_SIZE, iterations: 1, progressEveryMs: 0 }), {
      write: () => undefined,
    });
    const summary = await run.done;
    await waitFor(async () => (await trajectoriesOf(runId)).length >= GROUPS * GROUP_SIZE, `${GROUPS * GROUP_SIZE} ${envName} trajectories`, 60_000, 200);

    const trajectories = await trajectoriesOf(runId);
    assert.equal(trajectories.length, GROUPS * GROUP_SIZE);
    assert.equal(new Set(trajectories.map((t) => t.episodeId)).size, GROUPS * GROUP_SIZE);
    assert.equal(new Set(trajectories.map((t) => t.groupId)).size, GROUPS);
    assert.equal(
      trajectories.reduce((n, t) => n + t.stepCount, 0),
      summary.steps,
      'every published step is in a trajectory',
    );
    for (const trajectory of trajectories) {
      assert.ok(trajectory.outcome === 'terminated' || trajectory.outcome === 'truncated', `${trajectory.episodeId} ended (${trajectory.outcome})`);
      assert.equal(trajectory.gapCount, 0);
      assert.deepEqual(
        trajectory.steps.map((s) => s.stepIndex),
        trajectory.steps.map((_, i) => i),
      );
      assert.equal(trajectory.envName, envName);
    }
  });
}

test('an environment served by an OpenEnv server is driven by the actors like a built-in one', { timeout: 90_000 }, async () => {
  const server = await startFakeOpenEnvServer({});
  try {
    const runId = 'e2e-openenv';
    const guesses = Array.from({ length: 10 }, (_, i) => String(i + 1));
    const run = await startActors(backbone, actorsConfig({ runId, envName: 'Bandit', groups: GROUPS, groupSize: GROUP_SIZE, iterations: 1, progressEveryMs: 0 }), {
      write: () => undefined,
      createEnv: () => OpenEnvEnvironment.connect({ url: server.url, actionField: 'guess', actionVocabulary: guesses, maxTurns: 4 }),
    });
    const summary = await run.done;
    await waitFor(async () => (await trajectoriesOf(runId)).length >= GROUPS * GROUP_SIZE, 'the OpenEnv trajectories', 60_000, 200);
    const trajectories = await trajectoriesOf(runId);
    assert.equal(trajectories.length, GROUPS * GROUP_SIZE);
    assert.ok(
      trajectories.every((t) => t.envName === 'GuessNumber'),
      'the env id comes from the server',
    );
    assert.equal(
      trajectories.reduce((n, t) => n + t.stepCount, 0),
      summary.steps,
    );
    assert.ok(trajectories.every((t) => t.outcome === 'terminated' || t.outcome === 'truncated'));
  } finally {
    await server.stop();
  }
});
