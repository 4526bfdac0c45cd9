/**
 * Preloaded into a benchmarked service (`node --expose-gc -r ./bench/gc-on-signal.ts`): SIGUSR2 runs a full garbage
 * collection and prints a marker, so the memory bench compares heaps holding only what is still referenced rather
 * than whatever the collector had not reached yet. With BENCH_HEAP_SNAPSHOTS=<dir> it also writes a heap snapshot there
 * after each collection (heap-<n>.heapsnapshot: compare two in Chrome DevTools' Memory tab to see what grew). Only
 * the bench loads this file; the service's own code knows nothing of it.
 */
import path from "node:path";
import v8 from "node:v8";
import { GC_DONE_MARKER } from "./service-process";

const collect = (globalThis as { gc?: () => void }).gc;
if (!collect) throw new Error("bench/gc-on-signal.ts needs node --expose-gc");
let rounds = 0;

process.on("SIGUSR2", () => {
  collect();
  collect(); // a second pass frees what the first one's finalizers released
  const snapshots = process.env.BENCH_HEAP_SNAPSHOTS;
  if (snapshots) v8.writeHeapSnapshot(path.join(snapshots, `heap-${rounds + 1}.heapsnapshot`));
  process.stderr.write(`${GC_DONE_MARKER} ${++rounds}\n`);
});
