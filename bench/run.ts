import fs from "node:fs";
import path from "node:path";
import hre from "hardhat";
import { measureGas, OPS, type GasRow } from "./gas";
import { measureAgentGas } from "./gas-agents";
import { measureRamsGas, ramsExecuteOverhead, RAMS_EXECUTE_OVERHEAD_TARGET } from "./gas-rams";
import { measureLatency } from "./http";

/** Hard targets: the whitelisted transfers against the plain transfer of the same kind, and the factory call. */
const TARGETS: Record<string, (row: GasRow) => boolean> = {
  [OPS.wlExisting]: (row) => row.ratio <= 1.25,
  [OPS.wlNew]: (row) => row.ratio <= 1.25,
  [OPS.newTokenization]: (row) => row.gas <= 350_000n,
};

function printGasTable(title: string, rows: GasRow[]): boolean {
  console.log(`\n${title}`);
  const width = Math.max(...rows.map((r) => r.operation.length));
  const gasWidth = Math.max(...rows.map((r) => r.gas.toString().length), 3);
  console.log(`${"operation".padEnd(width)}  ${"gas".padStart(gasWidth)}  ${"ratio".padStart(6)}  target`);
  let failed = false;
  for (const row of rows) {
    const check = TARGETS[row.operation];
    const pass = check ? check(row) : undefined;
    if (pass === false) failed = true;
    const mark = pass === undefined ? "" : pass ? "PASS" : "FAIL";
    console.log(`${row.operation.padEnd(width)}  ${row.gas.toString().padStart(gasWidth)}  ${row.ratio.toFixed(3).padStart(6)}  ${mark}`);
  }
  return failed;
}

function writeResults(name: string, rows: GasRow[]): void {
  const out = path.join(__dirname, "results", name);
  fs.mkdirSync(path.dirname(out), { recursive: true });
  fs.writeFileSync(out, JSON.stringify(rows.map((r) => ({ operation: r.operation, gas: Number(r.gas), ratio: r.ratio })), null, 2) + "\n");
  console.log(`written ${path.relative(process.cwd(), out)}`);
}

async function main(): Promise<void> {
  const tokenRows = await measureGas(hre);
  let failed = printGasTable("Gas: security tokens and offerings (ratio against a plain ERC-20 transfer)", tokenRows);
  writeResults("gas.json", tokenRows);
  const agentRows = await measureAgentGas(hre);
  failed = printGasTable("Gas: ERC-8004 registries and agent tokens (ratio against a plain ERC-20 transfer)", agentRows) || failed;
  writeResults("gas-agents.json", agentRows);
  const ramsRows = await measureRamsGas(hre);
  failed = printGasTable("Gas: ERC-8226 RAMS (ratio against a direct ERC-20 transferFrom)", ramsRows) || failed;
  const overhead = ramsExecuteOverhead(ramsRows);
  const overheadOk = overhead <= RAMS_EXECUTE_OVERHEAD_TARGET;
  console.log(`executor execute − direct transferFrom = ${overhead} gas (target ≤ ${RAMS_EXECUTE_OVERHEAD_TARGET}) ${overheadOk ? "PASS" : "FAIL"}`);
  failed = failed || !overheadOk;
  writeResults("gas-rams.json", ramsRows);

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
