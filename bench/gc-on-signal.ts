/**
 * Preloaded into a benchmarked service (`node --expose-gc -r ./bench/gc-on-signal.ts`): SIGUSR2 runs a full garbage
 * collection and prints a marker, so the memory bench compares heaps holding only what is still referenced rather
 * than whatever the collector had not reached yet. Only the bench loads it; the service's own code knows nothing of it.
 */
import { GC_DONE_MARKER } from "./service-process";

const collect = (globalThis as { gc?: () => void }).gc;
if (!collect) throw new Error("bench/gc-on-signal.ts needs node --expose-gc");
let rounds = 0;

process.on("SIGUSR2", () => {
  collect();
  collect(); // a second pass frees what the first one's finalizers released
  process.stderr.write(`${GC_DONE_MARKER} ${++rounds}\n`);
});
