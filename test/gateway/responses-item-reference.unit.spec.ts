// Unit: an `item_reference` input item (what a client sends for its earlier answers while it expects them stored,
// as the Vercel AI SDK does unless told `store: false`) is a 400 naming the item and saying what to send instead;
// the same history with the items themselves and `store: false` is read as the chat it describes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { OpenAIError } from '../../gateway/openai-error.js';
import { parseResponsesRequest } from '../../gateway/responses-request.js';

const user = (text: string) => ({ role: 'user', content: [{ type: 'input_text', text }] });

test('an item_reference is refused with its index and the advice to send the item itself, store: false', () => {
  const body = { model: 'm', input: [user('map'), { type: 'item_reference', id: 'msg_1' }, user('next')] };
  assert.throws(
    () => parseResponsesRequest(body),
    (error) =>
      error instanceof OpenAIError && error.status === 400 && error.param === 'input[1].type' && /stores no items/.test(error.message) && /store: false/.test(error.message),
  );
});

test('the same history with the referenced item sent as a message, and store: false, is the chat it describes', () => {
  const body = { model: 'm', store: false, input: [user('map'), { role: 'assistant', content: '<answer>Left</answer>' }, user('next')] };
  const request = parseResponsesRequest(body);
  assert.equal(request.upstream.prompt.kind, 'chat');
  assert.deepEqual(request.upstream.prompt.kind === 'chat' && request.upstream.prompt.messages.map((m) => [m.role, m.content]), [
    ['user', 'map'],
    ['assistant', '<answer>Left</answer>'],
    ['user', 'next'],
  ]);
  assert.equal(request.echo?.store, false);
});
