// The processors' chain refuses a step whose announced group size (info.groupSize) disagrees with its group's:
// it goes to the dead-letter sink naming the field, and the rest of the group is assembled without it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Subject } from 'rxjs';
import { groupSteps } from '../../../bench/load/episodes.js';
import type { OutputUnit } from '../../../processors/exactly-once/transactional-emitter.js';
import type { StepEnvelope } from '../../../processors/pipeline/output-units.js';
import { batchProcessor } from '../../../processors/pipeline/process-batch.js';
import { buildProcessorsConfig } from '../../../processors/pipeline/config.js';
import { createPipelineStats, stepPipeline } from '../../../processors/pipeline/step-pipeline.js';
import type { DeadLetterInput } from '../../../streams/dead-letter.js';

const config = buildProcessorsConfig({ topicPrefix: 'tf' }, { groupSize: 8, maxBatchGroups: 1, batchWindowMs: 10_000 });
const processBatch = batchProcessor({ reward: { terms: [{ kind: 'env_return' }] }, estimator: { name: 'grpo' }, filters: [] });

test('a step announcing another size than its group is dead-lettered naming info.groupSize; the group closes at its announced size', () => {
  // One group of 3 episodes of 2 steps, announced size 3 (groupSteps announces it); a 4th episode says 5.
  const steps = groupSteps('r', 1, 3, 2);
  const intruder = groupSteps('r', 1, 4, 2).filter((s) => s.episodeId === steps[0]!.episodeId.replace(/\d+$/, '3'));
  assert.ok(intruder.length > 0);
  const all = [...steps, ...intruder.map((s) => ({ ...s, eventId: `${s.eventId}-x`, info: { ...s.info, groupSize: '5' } }))];
  const units: OutputUnit[] = [];
  const letters: DeadLetterInput[] = [];
  const stats = createPipelineStats();
  const input = new Subject<StepEnvelope>();
  const subscription = input
    .pipe(
      stepPipeline({
        config,
        processBatch,
        marks: { has: () => false },
        emit: (unit) => units.push(unit),
        deadLetter: (letter) => letters.push(letter),
        stats,
      }),
    )
    .subscribe();
  all.forEach((value, i) => input.next({ topic: 'steps', partition: 0, offset: String(i), key: null, timestamp: 0, value, generation: 1, ack: () => undefined }));
  subscription.unsubscribe();
  assert.equal(letters.length, intruder.length);
  for (const letter of letters) {
    assert.equal(letter.reason, 'invalid-value');
    assert.match(letter.detail, /^info\.groupSize is 5 but earlier steps of group .* announced 3/);
  }
  const samples = units.flatMap((u) => u.samples);
  assert.equal(samples.length, 3);
  assert.equal(stats.groups.closedBy.full, 1);
});
