import hre from "hardhat";
import { measureReads, printReadRows, writeBenchResult, type BenchDatabase, type ReadRow } from "./reads";

/** `npx hardhat run bench/run-reads.ts`: read throughput on the embedded database and on PostgreSQL (BENCH_DATABASES=embedded to skip the server). */
async function main() {
  const databases = (process.env.BENCH_DATABASES ?? "embedded,postgres").split(",") as BenchDatabase[];
  const rows: ReadRow[] = [];
  for (const database of databases) {
    console.log(`\nReads, 50 connections (${database} database)`);
    rows.push(...(await measureReads(hre, { database })));
  }
  console.log("");
  printReadRows(rows);
  writeBenchResult("reads.json", { measuredAt: new Date().toISOString(), cpus: require("node:os").cpus().length, rows });
  if (rows.some((r) => r.pass === false)) process.exitCode = 1;
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
