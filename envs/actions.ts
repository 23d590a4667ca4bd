// Parsing the policy's reply in the RAGEN format (docs/algorithms.md §4.4):
//   [<think>…</think>] <answer>Action1 || Action2 || …</answer>
// - <think> is optional; a reply may also start mid-think (RAGEN forces "<think>" into the generation
//   prompt), so text before a lone "</think>" is the think part.
// - <answer>…</answer> is required; the first one after the think part counts. Tags match in any case.
// - The answer splits on "||"; only the first maxActionsPerTurn parts are considered, the rest are
//   ignored (RAGEN truncates silently).
// - Each part is trimmed and matched to the vocabulary case-insensitively; unknown parts are dropped.
// - The turn is valid when an answer was found, at least one action is known and none was dropped —
//   exactly the turns on which RAGEN adds no format penalty.
// Nothing here throws on any input.

export const ACTION_SEPARATOR = '||';

export interface ExtractedAnswer {
  think: string | null;
  answer: string;
}

export type AnswerExtraction = { ok: true; value: ExtractedAnswer } | { ok: false; problem: string; think: string | null };

const THINK_CLOSE = /<\/think>/gi;
const THINK_OPEN = /<think>/i;
const ANSWER = /<answer>([\s\S]*?)<\/answer>/i;

/** Finds the think part and the answer text of a reply. */
export function extractAnswer(text: string): AnswerExtraction {
  let think: string | null = null;
  let rest = text;
  const closes = [...text.matchAll(THINK_CLOSE)];
  const lastClose = closes.at(-1);
  if (lastClose?.index !== undefined) {
    const before = text.slice(0, lastClose.index);
    const open = THINK_OPEN.exec(before);
    think = (open ? before.slice(open.index + open[0].length) : before).trim();
    rest = text.slice(lastClose.index + lastClose[0].length);
  }
  const match = ANSWER.exec(rest);
  if (!match) {
    const problem = /<answer>/i.test(rest) ? 'the <answer> tag is not closed' : 'no <answer>…</answer> found';
    return { ok: false, problem, think };
  }
  return { ok: true, value: { think, answer: (match[1] ?? '').trim() } };
}

export interface SplitAnswer {
  /** The first maxActionsPerTurn parts, trimmed. */
  considered: string[];
  /** Parts beyond the limit (not executed, not counted as invalid). */
  ignored: string[];
}

export function splitActions(answer: string, maxActionsPerTurn: number): SplitAnswer {
  const parts = answer.split(ACTION_SEPARATOR).map((part) => part.trim());
  return { considered: parts.slice(0, maxActionsPerTurn), ignored: parts.slice(maxActionsPerTurn) };
}

export interface ParsedTurn<A extends string> {
  think: string | null;
  /** The answer text, or null when none was found. */
  answer: string | null;
  /** Known actions in reply order, spelled as in the vocabulary. */
  actions: A[];
  /** Considered parts that are not in the vocabulary (including empty parts). */
  dropped: string[];
  /** Parts beyond maxActionsPerTurn. */
  ignored: string[];
  valid: boolean;
  /** Why the turn is invalid, when it is. */
  problem: string | null;
}

/** Parses a reply against a fixed action vocabulary. */
export function parseTurn<A extends string>(text: string, vocabulary: readonly A[], maxActionsPerTurn: number): ParsedTurn<A> {
  const extraction = extractAnswer(text);
  if (!extraction.ok) {
    return { think: extraction.think, answer: null, actions: [], dropped: [], ignored: [], valid: false, problem: extraction.problem };
  }
  const { think, answer } = extraction.value;
  const byLowerName = new Map(vocabulary.map((name) => [name.toLowerCase(), name] as const));
  const { considered, ignored } = splitActions(answer, maxActionsPerTurn);
  const actions: A[] = [];
  const dropped: string[] = [];
  for (const part of considered) {
    const known = byLowerName.get(part.toLowerCase());
    if (known === undefined) dropped.push(part);
    else actions.push(known);
  }
  let problem: string | null = null;
  if (answer === '') problem = 'the answer is empty';
  else if (dropped.length > 0) problem = `unknown action(s) ${dropped.map((d) => JSON.stringify(d)).join(', ')}; valid actions are ${vocabulary.join(', ')}`;
  return { think, answer, actions, dropped, ignored, valid: problem === null, problem };
}

/** Formats actions as a RAGEN reply, e.g. "<think>…</think><answer>Left || Up</answer>". */
export function formatReply(actions: readonly string[], think?: string): string {
  const answer = `<answer>${actions.join(` ${ACTION_SEPARATOR} `)}</answer>`;
  return think === undefined ? answer : `<think>${think}</think>${answer}`;
}
