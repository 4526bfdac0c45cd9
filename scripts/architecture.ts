/**
 * `npm run architecture`: the shape of service/ as the code has it — files, imports, circles, imports that break the
 * layer order, and functions longer than LONG_FUNCTION_LINES (80) lines (those their folder's README.md explains are marked).
 */
import fs from "node:fs";
import path from "node:path";
import {
  circles,
  documentedLongFunctions,
  engineHttpErrorImports,
  importEdges,
  LONG_FUNCTION_LINES,
  longFiles,
  MAX_FILE_LINES,
  layerBreaks,
  LAYERS,
  layerOf,
  longFunctions,
  outsideHttpEdge,
  packageImporters,
  readmePaths,
  serviceFiles,
} from "./lib/architecture";

const files = serviceFiles();
const edges = importEdges(files);
const root = path.join(__dirname, "..");
const explained = new Set(
  readmePaths().flatMap((readme) => {
    const file = path.join(root, readme);
    return fs.existsSync(file) ? [...documentedLongFunctions(readme, fs.readFileSync(file, "utf8"))] : [];
  }),
);

console.log(
  `service/: ${files.length} files, ${edges.length} imports (${edges.filter((e) => e.typeOnly).length} type-only)`,
);
for (const [index, layer] of LAYERS.entries()) {
  console.log(
    `  layer ${index} ${layer.name}: ${files.filter((f) => layerOf(f) === index).length} files (${layer.members.join(" ")})`,
  );
}
const unlayered = files.filter((f) => layerOf(f) === undefined);
console.log(`files in no layer: ${unlayered.length}${unlayered.length ? ": " + unlayered.join(", ") : ""}`);
const found = circles(edges);
console.log(`import circles: ${found.length}`);
for (const group of found) console.log(`  ${group.join(" <-> ")}`);
const breaks = layerBreaks(edges);
console.log(`imports from a lower layer to a higher one: ${breaks.length}`);
for (const e of breaks) console.log(`  ${e.from} -> ${e.to}${e.typeOnly ? " (type-only)" : ""}`);
const outside = outsideHttpEdge(packageImporters("express", files));
console.log(
  `files importing express outside the HTTP edge: ${outside.length}${outside.length ? ": " + outside.join(", ") : ""}`,
);
const engineErrors = engineHttpErrorImports(edges);
console.log(`engine imports of the HTTP errors: ${engineErrors.length}`);
for (const e of engineErrors) console.log(`  ${e.from} -> ${e.to}`);
const largest = files
  .map((file) => ({ file, lines: fs.readFileSync(file, "utf8").split("\n").length - 1 }))
  .sort((a, b) => b.lines - a.lines)[0];
console.log(
  `largest file: ${largest.file} (${largest.lines} lines); over ${MAX_FILE_LINES} lines: ${longFiles(files).length}`,
);
const long = longFunctions(LONG_FUNCTION_LINES, files);
console.log(
  `functions over ${LONG_FUNCTION_LINES} lines: ${long.length} (${long.filter((f) => explained.has(`${f.file}:${f.name}`)).length} explained in their folders' READMEs)`,
);
for (const f of long)
  console.log(
    `  ${String(f.lines).padStart(4)}  ${f.file}:${f.name} (line ${f.line})${explained.has(`${f.file}:${f.name}`) ? "  explained" : ""}`,
  );
