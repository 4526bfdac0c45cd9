// bench/gc-on-signal.ts for the compiled service (plain node, no ts-node): preloaded with `node --expose-gc -r
// ./bench/gc-on-signal.js dist/service/main.js`, SIGUSR2 runs a full garbage collection and prints the marker the bench
// waits for. Only the memory bench loads it.
"use strict";
const collect = globalThis.gc;
if (!collect) throw new Error("bench/gc-on-signal.js needs node --expose-gc");
let rounds = 0;
process.on("SIGUSR2", () => {
  collect();
  collect();
  process.stderr.write(`bench-gc-done ${++rounds}\n`);
});
