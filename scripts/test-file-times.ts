import fs from "node:fs";
import path from "node:path";

/**
 * `npm run test:file-times -- <timings.jsonl>…`: folds what TEST_TIMINGS recorded (one JSON line per test file) into
 * test/file-times.json, the seconds each file took, which `hardhat test` reads to start the longest files first (so
 * the two workers finish together instead of one waiting on a long file started last).
 */
const ROOT = path.resolve(__dirname, "..");
const TIMES = path.join(ROOT, "test", "file-times.json");

const times: Record<string, number> = fs.existsSync(TIMES) ? JSON.parse(fs.readFileSync(TIMES, "utf8")) : {};
const inputs = process.argv.slice(2);
if (!inputs.length) throw new Error("usage: npm run test:file-times -- <timings.jsonl>…");
for (const input of inputs)
  for (const line of fs.readFileSync(input, "utf8").split("\n")) {
    if (!line.trim()) continue;
    const { file, ms } = JSON.parse(line) as { file: string; ms: number };
    times[path.relative(ROOT, file).split(path.sep).join("/")] = Math.round(ms / 100) / 10;
  }
const sorted = Object.fromEntries(Object.entries(times).sort(([a], [b]) => a.localeCompare(b)));
fs.writeFileSync(TIMES, JSON.stringify(sorted, null, 2) + "\n");
console.log(`${Object.keys(sorted).length} files in ${path.relative(ROOT, TIMES)}`);
