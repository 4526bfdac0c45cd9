import { expect } from "chai";
import { eventFrames, type StreamedFrame } from "../../client/event-stream";

/** A body that delivers `chunks` one read at a time, as a network does, and records whether the reader cancelled it. */
function body(chunks: string[]): { stream: ReadableStream<Uint8Array>; cancelled: () => boolean } {
  const encoder = new TextEncoder();
  let cancelled = false;
  let index = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (index < chunks.length) controller.enqueue(encoder.encode(chunks[index++]));
      else controller.close();
    },
    cancel() {
      cancelled = true;
    },
  });
  return { stream, cancelled: () => cancelled };
}

async function groups(chunks: string[]): Promise<StreamedFrame[][]> {
  const found: StreamedFrame[][] = [];
  for await (const group of eventFrames(body(chunks).stream)) found.push(group);
  return found;
}

describe("client: the event stream reader (client/event-stream.ts)", () => {
  it("yields each read's complete frames together, skips comments and heartbeats, and keeps a frame split across reads", async () => {
    const found = await groups([
      'retry: 2000\n\n: heartbeat\n\nid: 7\nevent: transaction.broadcast\ndata: {"a":1}\n\nid: 8\nevent: batch.',
      'completed\ndata: {"b":2}\n',
      "\n",
    ]);
    expect(found).to.deep.equal([
      [{ id: "7", event: "transaction.broadcast", data: '{"a":1}' }],
      [{ id: "8", event: "batch.completed", data: '{"b":2}' }],
    ]);
  });

  it("reads CRLF and CR line ends, joins repeated data lines, and takes a field without a space after its colon", async () => {
    const found = await groups([
      "id:1\r\ndata: first\r\ndata: second\r\n\r\n",
      "data:x\r\r",
      "data: a\r\n\r",
      "\ndata: b\n\n",
    ]);
    expect(found.flat()).to.deep.equal([
      { id: "1", event: undefined, data: "first\nsecond" },
      { id: undefined, event: undefined, data: "x" },
      { id: undefined, event: undefined, data: "a" },
      { id: undefined, event: undefined, data: "b" },
    ]);
  });

  it("cancels the body when the reader stops early", async () => {
    const source = body(["data: 1\n\n", "data: 2\n\n", "data: 3\n\n"]);
    for await (const group of eventFrames(source.stream)) {
      expect(group).to.deep.equal([{ id: undefined, event: undefined, data: "1" }]);
      break;
    }
    expect(source.cancelled()).to.equal(true);
  });
});
