// Agents for the gateway's fault tests: each plays one episode of chat turns against a gateway address (or
// several, one per call in turn), retrying a call on a connection error or a 503 with the same request, as an
// OpenAI client does, and finishing with its reward. What each got back is kept: the answer ids it saw and the
// conversation, so a test can check the log against them. Not a spec file.
export interface AgentRecord {
  readonly episodeId: string;
  readonly groupId: string;
  /** The ids of the answers the agent received, in order. */
  readonly answered: string[];
  /** The conversation as sent on its last call, and the last answer. */
  messages: Array<{ role: string; content: string }>;
  lastAnswer: string;
  retries: number;
  finished: boolean;
  readonly reward: number;
}

export interface AgentPlan {
  readonly runId: string;
  readonly turns: number;
  readonly groupSize: number;
  /** The gateway base URL for call number i of the episode (the finish is call number `turns`). */
  readonly urlFor: (call: number) => string;
  /** Counts every answered call across agents. */
  readonly onAnswer?: () => void;
  readonly stop: () => boolean;
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** POSTs until it gets an answer that is not a 503; connection errors (a killed gateway) are retried. */
async function postRetrying(
  url: () => string,
  body: unknown,
  headers: Record<string, string>,
  record: AgentRecord,
  stop: () => boolean,
): Promise<{ status: number; json: unknown }> {
  for (;;) {
    if (stop()) throw new Error(`${record.episodeId}: stopped`);
    try {
      const response = await fetch(url(), { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
      const json: unknown = await response.json();
      if (response.status !== 503) return { status: response.status, json };
    } catch {
      // the gateway went away mid-call: the same request again, as a client's retry sends it
    }
    record.retries++;
    await pause(50 + Math.random() * 100);
  }
}

/** One agent's episode: `turns` chat calls, then the finish. */
export async function playEpisode(plan: AgentPlan, groupId: string, episodeId: string, reward: number): Promise<AgentRecord> {
  const record: AgentRecord = {
    episodeId,
    groupId,
    answered: [],
    messages: [{ role: 'user', content: `start ${episodeId}` }],
    lastAnswer: '',
    retries: 0,
    finished: false,
    reward,
  };
  const headers = { 'x-trajflow-run': plan.runId, 'x-trajflow-group': groupId, 'x-trajflow-episode': episodeId, 'x-trajflow-group-size': String(plan.groupSize) };
  for (let turn = 0; turn < plan.turns; turn++) {
    if (turn > 0) record.messages = [...record.messages, { role: 'assistant', content: record.lastAnswer }, { role: 'user', content: `turn ${turn}` }];
    const body = { model: 'fixture-model', messages: record.messages, max_tokens: 4 };
    const { status, json } = await postRetrying(() => `${plan.urlFor(turn)}/v1/chat/completions`, body, headers, record, plan.stop);
    if (status !== 200) throw new Error(`${episodeId} turn ${turn}: ${status} ${JSON.stringify(json)}`);
    const answer = json as { id: string; choices: Array<{ message: { content: string } }> };
    record.answered.push(answer.id);
    record.lastAnswer = answer.choices[0]!.message.content;
    plan.onAnswer?.();
  }
  const finish = await postRetrying(
    () => `${plan.urlFor(plan.turns)}/v1/episodes/${encodeURIComponent(episodeId)}/finish`,
    { reward, success: reward > 0 },
    headers,
    record,
    plan.stop,
  );
  // A finish retried after its first try was recorded (the answer lost with the gateway) is refused as ended.
  const ended = finish.status === 409 && (finish.json as { error?: { code?: string } }).error?.code === 'episode_ended';
  if (finish.status !== 200 && !ended) throw new Error(`${episodeId} finish: ${finish.status} ${JSON.stringify(finish.json)}`);
  record.finished = true;
  return record;
}

/** The token ids the vLLM-shaped fixture renders a conversation to (its template, one id per UTF-16 unit). */
export function fixturePromptIds(messages: ReadonlyArray<{ role: string; content: string }>): number[] {
  const text = `${messages.map((m) => `<|${m.role}|>${m.content}`).join('')}<|assistant|>`;
  return Array.from({ length: text.length }, (_, i) => text.charCodeAt(i));
}
