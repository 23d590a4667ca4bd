// The kafkajs consumer a TopicConsumer starts (one per start, and again after kafkajs gave up): its group,
// session and retry settings.
import type { ConsumerConfig } from 'kafkajs';

/** Settings of a consumer in group `groupId` whose session times out after `sessionTimeoutMs`. */
export function consumerConfig(groupId: string, sessionTimeoutMs: number): ConsumerConfig {
  return {
    groupId,
    sessionTimeout: sessionTimeoutMs,
    heartbeatInterval: Math.min(3000, Math.floor(sessionTimeoutMs / 3)),
    rebalanceTimeout: sessionTimeoutMs * 2,
    allowAutoTopicCreation: false,
    maxWaitTimeInMs: 200,
    retry: { retries: 10, initialRetryTime: 200, maxRetryTime: 3000 },
  };
}
