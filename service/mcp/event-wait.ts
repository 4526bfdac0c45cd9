import type { Readable } from "node:stream";

/** How waiting on an event stream ended: the event came, the time ran out, or the stream ended first (a stop). */
export type WaitOutcome = "event" | "timeout" | "ended";

/**
 * Reads server-sent events from `body` until one of type `type` arrives, `timeoutMs` passes or the stream ends. Only
 * the `event:` line of each event is read: what happened is then asked of the API (the event says that, not what).
 */
export function waitForEvent(body: Readable, type: string, timeoutMs: number): Promise<WaitOutcome> {
  return new Promise((resolve) => {
    let buffered = "";
    let done = false;
    const finish = (outcome: WaitOutcome) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      body.off("data", onData);
      body.off("end", onEnd);
      body.off("error", onEnd);
      body.off("close", onEnd);
      resolve(outcome);
    };
    const onData = (chunk: Buffer | string) => {
      buffered += chunk.toString();
      const frames = buffered.split(/\r?\n\r?\n/);
      buffered = frames.pop() ?? "";
      for (const frame of frames) {
        const event = /^event: ?(.*)$/m.exec(frame)?.[1]?.trim();
        if (event === type) return finish("event");
      }
    };
    const onEnd = () => finish("ended");
    const timer = setTimeout(() => finish("timeout"), timeoutMs);
    body.on("data", onData);
    body.on("end", onEnd);
    body.on("error", onEnd);
    body.on("close", onEnd);
  });
}
