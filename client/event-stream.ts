/** One Server-Sent Events frame that carried data (comments such as `: heartbeat` carry none and are skipped). */
export interface StreamedFrame {
  id?: string;
  event?: string;
  data: string;
}

/** A blank line ends a frame; lines end with CRLF, LF or CR. */
const FRAME_END = /\r\n\r\n|\n\n|\r\r/;

/**
 * The frames of a text/event-stream body, yielded in groups: each group is what one read of the body completed, so a
 * caller that reacts to "something happened" reacts once per burst rather than once per event. Ends when the body does.
 */
export async function* eventFrames(body: ReadableStream<Uint8Array>): AsyncGenerator<StreamedFrame[]> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      const frames: StreamedFrame[] = [];
      for (let end = FRAME_END.exec(buffer); end; end = FRAME_END.exec(buffer)) {
        const frame = parseFrame(buffer.slice(0, end.index));
        buffer = buffer.slice(end.index + end[0].length);
        if (frame) frames.push(frame);
      }
      if (frames.length) yield frames;
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}

/** The fields of one frame (`name: value` lines; a repeated `data` joined by newlines), or undefined without data. */
function parseFrame(text: string): StreamedFrame | undefined {
  const fields: Record<string, string> = {};
  for (const line of text.split(/\r\n|\r|\n/)) {
    if (line === "" || line.startsWith(":")) continue;
    const colon = line.indexOf(":");
    const name = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
    fields[name] = name === "data" && fields.data !== undefined ? `${fields.data}\n${value}` : value;
  }
  return fields.data === undefined ? undefined : { id: fields.id, event: fields.event, data: fields.data };
}
