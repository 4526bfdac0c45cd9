import fs from "node:fs";
import path from "node:path";
import hre from "hardhat";
import { measureGas, OPS, type GasRow } from "./gas";
import { measureLatency } from "./http";

/** Hard targets: the whitelisted transfers against the plain transfer of the same kind, and the factory call. */
const TARGETS: Record<string, (row: GasRow) => boolean> = {
  [OPS.wlExisting]: (row) => row.ratio <= 1.25,
  [OPS.wlNew]: (row) => row.ratio <= 1.25,
  [OPS.newTokenization]: (row) => row.gas <= 350_000n,
};

async function main(): Promise<void> {
  const rows = await measureGas(hre);

  const width = Math.max(...rows.map((r) => r.operation.length));
  const gasWidth = Math.max(...rows.map((r) => r.gas.toString().length), 3);
  console.log(`${"operation".padEnd(width)}  ${"gas".padStart(gasWidth)}  ${"ratio".padStart(6)}  target`);
  let failed = false;
  for (const row of rows) {
    const check = TARGETS[row.operation];
    const pass = check ? check(row) : undefined;
    if (pass === false) failed = true;
    const mark = pass === undefined ? "" : pass ? "PASS" : "FAIL";
    console.log(
      `${row.operation.padEnd(width)}  ${row.gas.toString().padStart(gasWidth)}  ${row.ratio.toFixed(3).padStart(6)}  ${mark}`,
    );
  }

  const out = path.join(__dirname, "results", "gas.json");
  fs.mkdirSync(path.dirname(out), { recursive: true });
  const json = rows.map((r) => ({ operation: r.operation, gas: Number(r.gas), ratio: r.ratio }));
  fs.writeFileSync(out, JSON.stringify(json, null, 2) + "\n");
  console.log(`\nwritten ${path.relative(process.cwd(), out)}`);

  console.log("\nHTTP latency (real service, embedded database, in-process chain mining instantly)");
  const latency = await measureLatency(hre);
  const opWidth = Math.max(...latency.map((r) => r.operation.length));
  console.log(`${"operation".padEnd(opWidth)}  calls    p50 ms    p95 ms   mean ms`);
  for (const r of latency) {
    console.log(`${r.operation.padEnd(opWidth)}  ${String(r.calls).padStart(5)}  ${r.p50Ms.toFixed(1).padStart(8)}  ${r.p95Ms.toFixed(1).padStart(8)}  ${r.meanMs.toFixed(1).padStart(8)}`);
  }
  const latencyOut = path.join(__dirname, "results", "http.json");
  fs.writeFileSync(latencyOut, JSON.stringify(latency, null, 2) + "\n");
  console.log(`\nwritten ${path.relative(process.cwd(), latencyOut)}`);

  if (failed) {
    console.error("gas target FAILED");
    process.exitCode = 1;
  }
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
