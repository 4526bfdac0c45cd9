import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { openDb } from "../service/store/db";
import { migrate } from "../service/store/migrate";
import { pgliteTemplateDir } from "../service/store/pglite-template";
import { setTreeModes } from "../service/store/private-files";

/**
 * `npm run build` (after `hardhat compile`, which generates the contract bindings in typechain-types/): type-checks and
 * compiles the service with tsconfig.build.json into dist/ (dist/service/main.js, and the bindings it imports under
 * dist/typechain-types/), copies what the compiled code reads at run time (the SQL migrations, the operator console's
 * script and styles) and writes the embedded database's template. `npm run serve` runs the result with only the production dependencies installed.
 */
const ROOT = path.resolve(__dirname, "..");
const DIST = path.join(ROOT, "dist");

fs.rmSync(DIST, { recursive: true, force: true });
execFileSync(process.execPath, [require.resolve("typescript/bin/tsc"), "-p", path.join(ROOT, "tsconfig.build.json")], {
  cwd: ROOT,
  stdio: "inherit",
});
const migrations = path.join("service", "store", "migrations");
fs.cpSync(path.join(ROOT, migrations), path.join(DIST, migrations), {
  recursive: true,
  filter: (file) => fs.statSync(file).isDirectory() || file.endsWith(".sql"),
});
// The operator console's script and styles, served from dist/service/console/assets/ (routes/console-pages.ts).
const consoleAssets = path.join("service", "console", "assets");
fs.cpSync(path.join(ROOT, consoleAssets), path.join(DIST, consoleAssets), {
  recursive: true,
  filter: (file) => fs.statSync(file).isDirectory() || /\.(js|css)$/.test(file),
});

/**
 * The embedded database's template (service/store/pglite-template.ts): a cluster created and migrated here, closed,
 * readable by whichever user runs the service (each database copied from it is made private to that user).
 */
async function writePgliteTemplate(): Promise<string> {
  const template = path.join(DIST, "service", "store", path.basename(pgliteTemplateDir()));
  const db = await openDb({ dataDir: template });
  await migrate(db);
  await db.close();
  setTreeModes(template, 0o755, 0o644);
  fs.chmodSync(path.dirname(template), 0o755); // opening the database made its parent private
  return template;
}

void writePgliteTemplate().then((template) => {
  console.log(`wrote ${path.relative(ROOT, template)}`);
  const files = fs
    .readdirSync(DIST, { recursive: true, encoding: "utf8" })
    .filter((f) => !fs.statSync(path.join(DIST, f)).isDirectory());
  console.log(`built dist/ (${files.length} files): node dist/service/main.js`);
});
