import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";

/**
 * `npm run build` (after `hardhat compile`, which generates the contract bindings in typechain-types/): type-checks and
 * compiles the service with tsconfig.build.json into dist/ (dist/service/main.js, and the bindings it imports under
 * dist/typechain-types/), then copies what the compiled code reads at run time: the SQL migrations. `npm run serve`
 * runs the result with only the production dependencies installed.
 */
const ROOT = path.resolve(__dirname, "..");
const DIST = path.join(ROOT, "dist");

fs.rmSync(DIST, { recursive: true, force: true });
execFileSync(process.execPath, [require.resolve("typescript/bin/tsc"), "-p", path.join(ROOT, "tsconfig.build.json")], { cwd: ROOT, stdio: "inherit" });
const migrations = path.join("service", "store", "migrations");
fs.cpSync(path.join(ROOT, migrations), path.join(DIST, migrations), { recursive: true, filter: (file) => fs.statSync(file).isDirectory() || file.endsWith(".sql") });
const files = fs.readdirSync(DIST, { recursive: true, encoding: "utf8" }).filter((f) => !fs.statSync(path.join(DIST, f)).isDirectory());
console.log(`built dist/ (${files.length} files): node dist/service/main.js`);
