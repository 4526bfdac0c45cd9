import { emitEvents as writeEvents } from "../store/outbox";
import type { Queryable } from "../store/db";
import type { EventType, NewEvent } from "./types";

/**
 * Writes events of the catalogue, in the transaction of the change they report: the methods' events (token.*,
 * offering.*, agent.*, mandate.*), which the store does not list. Each event's data is typed by its type's schema.
 */
export async function emitEvents(q: Queryable, events: NewEvent[]): Promise<void> {
  await writeEvents<EventType>(q, events);
}

export async function emitEvent(q: Queryable, event: NewEvent): Promise<void> {
  await emitEvents(q, [event]);
}
