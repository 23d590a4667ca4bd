// Wires the event backbone from config: the Kafka client, the schema registry and codec, one batching
// producer, the dead-letter route, and the schemas published to their topic. Processors, actors, the
// learner and the CLI all start from here.
import type { Kafka } from 'kafkajs';
import { topicName, type TrajflowConfig } from '../core/config.js';
import { EventCodec, SchemaRegistry } from '../schemas/index.js';
import { createKafka } from './kafka-client.js';
import { EventProducer, type EventProducerOptions } from './event-producer.js';
import { DeadLetterRoute } from './dead-letter.js';
import { publishSchemas } from './schema-topic.js';
import { StepPublisher } from './step-publisher.js';

export interface Backbone {
  readonly config: TrajflowConfig;
  readonly kafka: Kafka;
  readonly registry: SchemaRegistry;
  readonly codec: EventCodec;
  readonly producer: EventProducer;
  readonly deadLetters: DeadLetterRoute;
  readonly steps: StepPublisher;
  close(): Promise<void>;
}

export interface BackboneOptions {
  readonly clientId?: string;
  readonly producer?: EventProducerOptions;
  readonly maxEventBytes?: number;
}

export async function connectBackbone(config: TrajflowConfig, options: BackboneOptions = {}): Promise<Backbone> {
  const kafka = createKafka(config, options.clientId === undefined ? {} : { clientId: options.clientId });
  const registry = SchemaRegistry.fromSchemasDir();
  const codec = new EventCodec(registry, options.maxEventBytes === undefined ? {} : { maxEventBytes: options.maxEventBytes });
  const producer = new EventProducer(kafka, codec, options.producer);
  await producer.connect();
  await publishSchemas(producer, registry, topicName(config, 'schemas'));
  return {
    config,
    kafka,
    registry,
    codec,
    producer,
    deadLetters: new DeadLetterRoute(producer, topicName(config, 'deadletter')),
    steps: new StepPublisher(producer, topicName(config, 'env.steps')),
    close: () => producer.disconnect(),
  };
}
