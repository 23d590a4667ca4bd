// Unit: the server-sent events framing the gateway writes, read back by a parser that follows the spec
// (https://html.spec.whatwg.org/multipage/server-sent-events.html): named and unnamed events, data with line
// breaks, and the chat chunks' `data: [DONE]` end.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { dataEvents, sseText, typedEvents } from '../../gateway/sse.js';

/** A minimal spec reader: blank lines end events, `event:` names one, `data:` lines join with a line feed. */
function parse(text: string): Array<{ event: string | undefined; data: string }> {
  return text
    .split('\n\n')
    .filter((block) => block !== '')
    .map((block) => {
      const lines = block.split('\n');
      const event = lines.find((line) => line.startsWith('event: '))?.slice(7);
      const data = lines.filter((line) => line.startsWith('data: ')).map((line) => line.slice(6));
      return { event, data: data.join('\n') };
    });
}

test('chat chunks are data-only events; the stream ends with data: [DONE]', () => {
  const text = sseText(dataEvents(['{"a":1}', '[DONE]']));
  assert.equal(text, 'data: {"a":1}\n\ndata: [DONE]\n\n');
});

test('Responses and Messages events are named by their type, their data the JSON of the object', () => {
  const objects = [{ type: 'message_start', message: { id: 'msg_1' } }, { type: 'message_stop' }];
  const text = sseText(typedEvents(objects));
  assert.equal(text, 'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1"}}\n\nevent: message_stop\ndata: {"type":"message_stop"}\n\n');
  assert.deepEqual(
    parse(text).map((e) => [e.event, JSON.parse(e.data)]),
    objects.map((o) => [o.type, o]),
  );
});

test('data with line breaks takes one data line per line, and reads back whole', () => {
  const text = sseText([{ event: 'x', data: 'one\ntwo\r\nthree' }]);
  assert.equal(text, 'event: x\ndata: one\ndata: two\ndata: three\n\n');
  assert.deepEqual(parse(text), [{ event: 'x', data: 'one\ntwo\nthree' }]);
});
