import type { Request, Response } from "express";
import type { EventSink } from "../events/stream";

/**
 * An event stream's sink on an HTTP answer: Server-Sent Events (text/event-stream, never cached or transformed, not
 * buffered by a proxy), written as the stream gives them; the client leaving closes the request or the answer.
 */
export function eventStreamSink(req: Request, res: Response): EventSink {
  return {
    start() {
      res.status(200);
      res.setHeader("Content-Type", "text/event-stream; charset=utf-8");
      res.setHeader("Cache-Control", "no-cache, no-transform");
      res.setHeader("Connection", "keep-alive");
      res.setHeader("X-Accel-Buffering", "no");
      res.flushHeaders();
    },
    get started() {
      return res.headersSent;
    },
    write: (text) => res.write(text),
    drained: () =>
      new Promise((resolve) => {
        const done = () => {
          res.off("drain", done);
          res.off("close", done);
          resolve();
        };
        res.on("drain", done);
        res.on("close", done);
      }),
    onClose(listener) {
      req.on("close", listener);
      res.on("close", listener);
      return () => {
        req.off("close", listener);
        res.off("close", listener);
      };
    },
    end() {
      if (res.headersSent && !res.writableEnded) res.end();
    },
  };
}
