// Kafka's retriable errors on admin calls. kafkajs' admin gives up at once on some of them (fetchOffsets on
// NOT_COORDINATOR while a coordinator moves or loads, fetchTopicOffsets on NOT_LEADER_FOR_PARTITION right
// after a broker restart), where its producer and consumer would retry; every admin call whose failure would
// stop a component goes through this. So does the processors' AddOffsetsToTxn, which kafkajs' sendOffsets sends
// without its retrier (processors/exactly-once/transaction-worker.ts).
/**
 * Runs an admin call again on Kafka's retriable errors, up to `attempts` times, pausing `pauseMs(attempt)`
 * after failed attempt n (from 1; default 250 ms · n).
 */
export async function retryRetriable<T>(call: () => Promise<T>, attempts = 8, pauseMs: (attempt: number) => number = (attempt) => 250 * attempt): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (error) {
      const retriable = (error as { retriable?: boolean } | null)?.retriable === true;
      if (!retriable || attempt >= attempts) throw error;
      await new Promise((resolve) => setTimeout(resolve, pauseMs(attempt)));
    }
  }
}
