import type { EventSink } from "../events/stream";
import type { Services } from "../usecases/services";

/**
 * The console's live view: the service's own event stream (the shared feed every SSE stream reads)
 * with every tenant's events, from now on, for a signed-in operator's page. A page that shows live state (the
 * overview, a batch) listens and reads itself again when something happened (console.js); the stream ends with the
 * service or when the page goes, and counts against EVENT_STREAMS_PER_CLIENT like any stream of its client address.
 */
export async function serveConsoleEvents(services: Services, sink: EventSink, client: string): Promise<void> {
  const release = services.eventStreams.admit(null, client);
  // Unnamed messages: a page's EventSource hears them all with one listener (onmessage); the data names the type.
  const unnamed: EventSink = {
    start: () => sink.start(),
    get started() {
      return sink.started;
    },
    write: (text) => sink.write(text.replace(/^event: [^\n]*\n/m, "")),
    drained: () => sink.drained(),
    onClose: (listener) => sink.onClose(listener),
    end: () => sink.end(),
  };
  try {
    const after = await services.eventStreams.latestPosition();
    await services.eventStreams.serve(unnamed, { operators: true }, { after });
  } finally {
    release();
  }
}
