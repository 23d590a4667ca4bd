// Unit: the SDK's entry (sdk/index.ts, what `import … from 'trajflow'` gives) exports the public API the guide
// promises — configuration, backbone, step publisher, consumers, replay, schemas and codec, environment contract —
// and that its schemas load from the folder beside the schemas module, as they do from dist/ in the package.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as sdk from '../../sdk/index.js';

test('the entry exports the public API', () => {
  const promised = [
    'loadConfig',
    'topicName',
    'ConfigError',
    'connectBackbone',
    'StepPublisher',
    'EventProducer',
    'createEventConsumer',
    'createReplay',
    'eventDecoder',
    'classifyDecodeError',
    'DeadLetterRoute',
    'shutdownOnSignals',
    'SchemaRegistry',
    'EventCodec',
    'validateEvent',
    'validateIngestStep',
    'InvalidEventError',
    'DecodeError',
    'checkEnv',
    'parseTurn',
    'formatReply',
    'ResetNeededError',
  ];
  const missing = promised.filter((name) => typeof (sdk as Record<string, unknown>)[name] !== 'function');
  assert.deepEqual(missing, []);
});

test("the entry's registry finds every event's schema", () => {
  const registry = sdk.SchemaRegistry.fromSchemasDir();
  assert.ok(sdk.eventNames.length >= 9, sdk.eventNames.join(', '));
  assert.deepEqual(
    sdk.eventNames.filter((event) => !registry.has(event)),
    [],
  );
});
