/**
 * Reads service/'s shape from its source: the import graph (with type-only imports marked), its circles, the
 * imports that break the layer order, and the functions longer than a limit. `npm run architecture` prints it;
 * test/service/architecture.test.ts holds the code to it, to docs/ARCHITECTURE.md and to the folders' READMEs.
 */
import fs from "node:fs";
import path from "node:path";
import ts from "typescript";

export interface ImportEdge {
  from: string; // path relative to the repository root, e.g. service/engine/runner.ts
  to: string;
  typeOnly: boolean;
}

export interface LongFunction {
  file: string;
  name: string;
  line: number;
  lines: number;
}

/**
 * The layers of service/, lowest first. A module may import from its own layer and from layers below it; an import
 * that runs back up is a break (type-only ones included: the rule is about what a reader has to know).
 * Each entry names directories (`dir/`) or files (`main.ts`, `auth/gate.ts`); a file named on its own is in that layer,
 * not its directory's (the gate reads payments, so it sits above the rest of auth/; the operator's two programs start
 * the app, so they sit with the composition files).
 */
export const LAYERS: { name: string; members: string[] }[] = [
  {
    name: "foundation",
    members: [
      "config.ts",
      "configuration/",
      "errors.ts",
      "error-codes.ts",
      "logger.ts",
      "runtime-files.ts",
      "lazy-module.ts",
    ],
  },
  { name: "primitives", members: ["crypto/", "signers/", "model/", "wire/", "cache/"] },
  { name: "chains", members: ["chains/"] },
  { name: "store", members: ["store/"] },
  { name: "auth", members: ["auth/"] },
  { name: "domains", members: ["domains/"] },
  { name: "engine and payments", members: ["engine/", "payments/"] },
  {
    name: "features",
    members: [
      "methods/",
      "onboarding/",
      "auth/gate.ts",
      "reads/",
      "events/",
      "operator/",
      "lifecycle/",
      "metrics.ts",
      "metrics-readings.ts",
      "wallet-balances.ts",
    ],
  },
  { name: "http", members: ["http/"] },
  { name: "use cases", members: ["usecases/", "console/"] },
  { name: "mcp", members: ["mcp/"] },
  { name: "routes", members: ["routes/"] },
  {
    name: "composition",
    members: [
      "app.ts",
      "composition.ts",
      "server.ts",
      "process.ts",
      "main.ts",
      "operator/admin.ts",
      "operator/migrate.ts",
    ],
  },
];

const ROOT = path.resolve(__dirname, "..", "..");
const SERVICE = path.join(ROOT, "service");

export function serviceFiles(): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts")) out.push(path.relative(ROOT, full));
    }
  };
  walk(SERVICE);
  return out.sort();
}

/** The directories under service/ (relative to service/, with a trailing slash), migrations included. */
export function serviceDirectories(): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      if (!entry.isDirectory()) continue;
      const full = path.join(dir, entry.name);
      out.push(path.relative(SERVICE, full) + "/");
      walk(full);
    }
  };
  walk(SERVICE);
  return out.sort();
}

function parse(file: string): ts.SourceFile {
  return ts.createSourceFile(file, fs.readFileSync(path.join(ROOT, file), "utf8"), ts.ScriptTarget.Latest, true);
}

function resolveImport(from: string, specifier: string): string | undefined {
  if (!specifier.startsWith(".")) return undefined;
  const base = path.join(path.dirname(path.join(ROOT, from)), specifier);
  for (const candidate of [base + ".ts", path.join(base, "index.ts"), base]) {
    if (fs.existsSync(candidate) && fs.statSync(candidate).isFile()) return path.relative(ROOT, candidate);
  }
  return undefined;
}

function isTypeOnlyImport(node: ts.ImportDeclaration | ts.ExportDeclaration): boolean {
  if (ts.isExportDeclaration(node)) return node.isTypeOnly;
  const clause = node.importClause;
  if (!clause) return false; // a side-effect import runs the module
  if (clause.isTypeOnly) return true;
  if (clause.name) return false;
  const bindings = clause.namedBindings;
  return (
    !!bindings &&
    ts.isNamedImports(bindings) &&
    bindings.elements.length > 0 &&
    bindings.elements.every((e) => e.isTypeOnly)
  );
}

/** Every import (static, re-export, dynamic `import()` and `require`) from one service file to another. */
export function importEdges(files = serviceFiles()): ImportEdge[] {
  const edges: ImportEdge[] = [];
  for (const file of files) {
    const source = parse(file);
    const add = (specifier: string, typeOnly: boolean) => {
      const to = resolveImport(file, specifier);
      if (to && to.startsWith("service" + path.sep)) edges.push({ from: file, to, typeOnly });
    };
    const visit = (node: ts.Node) => {
      if (
        (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) &&
        node.moduleSpecifier &&
        ts.isStringLiteral(node.moduleSpecifier)
      ) {
        add(node.moduleSpecifier.text, isTypeOnlyImport(node));
      } else if (ts.isCallExpression(node) && node.arguments.length === 1 && ts.isStringLiteral(node.arguments[0])) {
        const callee = node.expression;
        if (callee.kind === ts.SyntaxKind.ImportKeyword || (ts.isIdentifier(callee) && callee.text === "require"))
          add(node.arguments[0].text, false);
      } else if (
        ts.isImportTypeNode(node) &&
        ts.isLiteralTypeNode(node.argument) &&
        ts.isStringLiteral(node.argument.literal)
      ) {
        add(node.argument.literal.text, true);
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return edges;
}

/** Every service file that imports the package `name` (by its bare name or a path inside it; type-only imports too). */
export function packageImporters(name: string, files = serviceFiles()): string[] {
  const isIt = (specifier: string) => specifier === name || specifier.startsWith(`${name}/`);
  return files.filter((file) => {
    let found = false;
    const visit = (node: ts.Node) => {
      if (
        (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) &&
        node.moduleSpecifier &&
        ts.isStringLiteral(node.moduleSpecifier)
      ) {
        if (isIt(node.moduleSpecifier.text)) found = true;
      } else if (ts.isCallExpression(node) && node.arguments.length === 1 && ts.isStringLiteral(node.arguments[0])) {
        const callee = node.expression;
        if (
          (callee.kind === ts.SyntaxKind.ImportKeyword || (ts.isIdentifier(callee) && callee.text === "require")) &&
          isIt(node.arguments[0].text)
        )
          found = true;
      } else if (
        ts.isImportTypeNode(node) &&
        ts.isLiteralTypeNode(node.argument) &&
        ts.isStringLiteral(node.argument.literal) &&
        isIt(node.argument.literal.text)
      ) {
        found = true;
      }
      if (!found) ts.forEachChild(node, visit);
    };
    visit(parse(file));
    return found;
  });
}

/**
 * Where HTTP lives: the only places (under service/) that may import `express` — the http layer, the routes and the
 * composition files. Everything below them takes plain values (wire/request.ts).
 */
export const HTTP_EDGE = ["http/", "routes/", "app.ts", "server.ts", "composition.ts", "main.ts"];

/** The files of `importers` that are not at the HTTP edge. */
export function outsideHttpEdge(importers: string[]): string[] {
  return importers.filter((file) => {
    const inside = path.relative("service", file).split(path.sep).join("/");
    return !HTTP_EDGE.some((m) => (m.endsWith("/") ? inside.startsWith(m) : inside === m));
  });
}

/** The modules of the error catalogue's HTTP side: ApiError and its helpers, and the codes with their statuses. */
export const HTTP_ERRORS = ["service/errors.ts", "service/error-codes.ts"];

/** Imports by the engine of the HTTP errors: the engine throws its own (engine/errors.ts), the http layer maps them. */
export function engineHttpErrorImports(edges: ImportEdge[]): ImportEdge[] {
  return edges.filter((e) => e.from.startsWith("service/engine/") && HTTP_ERRORS.includes(e.to));
}

/** Strongly connected groups of more than one file (Tarjan): each is an import circle. */
export function circles(edges: ImportEdge[]): string[][] {
  const next = new Map<string, string[]>();
  for (const e of edges) next.set(e.from, [...(next.get(e.from) ?? []), e.to]);
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  let counter = 0;
  const connect = (v: string) => {
    index.set(v, counter);
    low.set(v, counter++);
    stack.push(v);
    onStack.add(v);
    for (const w of next.get(v) ?? []) {
      if (!index.has(w)) {
        connect(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const group: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        group.push(w);
      } while (w !== v);
      if (group.length > 1 || (next.get(v) ?? []).includes(v)) found.push(group.sort());
    }
  };
  for (const v of new Set(edges.flatMap((e) => [e.from, e.to]))) if (!index.has(v)) connect(v);
  return found;
}

/** The layer a service file belongs to (its index in LAYERS, by the longest member that holds it), or undefined. */
export function layerOf(file: string): number | undefined {
  const inside = path.relative("service", file).split(path.sep).join("/");
  let best: { index: number; length: number } | undefined;
  for (const [index, layer] of LAYERS.entries())
    for (const m of layer.members)
      if ((m.endsWith("/") ? inside.startsWith(m) : inside === m) && m.length > (best?.length ?? -1))
        best = { index, length: m.length };
  return best?.index;
}

/** Imports from a lower layer to a higher one. */
export function layerBreaks(edges: ImportEdge[]): ImportEdge[] {
  return edges.filter((e) => {
    const from = layerOf(e.from);
    const to = layerOf(e.to);
    return from !== undefined && to !== undefined && to > from;
  });
}

function functionName(node: ts.Node): string {
  if ((ts.isFunctionDeclaration(node) || ts.isMethodDeclaration(node)) && node.name) return node.name.getText();
  if (ts.isConstructorDeclaration(node)) return "constructor";
  const parent = node.parent;
  if (parent && ts.isVariableDeclaration(parent)) return parent.name.getText();
  if (parent && ts.isPropertyAssignment(parent)) return parent.name.getText();
  if (parent && ts.isPropertyDeclaration(parent)) return parent.name.getText();
  return "(anonymous)";
}

/** Functions (declarations, methods, arrows, expressions) whose body spans more than `limit` lines. */
/** No file of service/ is longer than this: a room a reader can hold (issue 42), counted on the formatted code. */
export const MAX_FILE_LINES = 450;

/** The files of service/ over MAX_FILE_LINES lines, longest first, with their line counts. */
export function longFiles(files = serviceFiles()): { file: string; lines: number }[] {
  return files
    .map((file) => ({ file, lines: fs.readFileSync(path.join(ROOT, file), "utf8").split("\n").length - 1 }))
    .filter((f) => f.lines > MAX_FILE_LINES)
    .sort((a, b) => b.lines - a.lines);
}

/**
 * The length past which a function of service/ must be named, with its reason, in its folder's README.md. Counted on the
 * formatted code (Prettier at 120 columns lays out one argument or property per line where a call does not fit).
 */
export const LONG_FUNCTION_LINES = 80;

export function longFunctions(limit: number, files = serviceFiles()): LongFunction[] {
  const out: LongFunction[] = [];
  for (const file of files) {
    const source = parse(file);
    const visit = (node: ts.Node) => {
      if (
        ts.isFunctionDeclaration(node) ||
        ts.isMethodDeclaration(node) ||
        ts.isConstructorDeclaration(node) ||
        ts.isArrowFunction(node) ||
        ts.isFunctionExpression(node)
      ) {
        const start = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
        const end = source.getLineAndCharacterOfPosition(node.getEnd()).line;
        const lines = end - start + 1;
        if (lines > limit) out.push({ file, name: functionName(node), line: start + 1, lines });
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return out.sort((a, b) => b.lines - a.lines);
}

/**
 * The map and the folder READMEs are read on a page: the map at most 12 KiB, a folder's README at most 4 KiB, and no
 * line of either over 200 characters (tables of 1,000-character rows were what made the old map unreadable).
 */
export const MAP_MAX_BYTES = 12_288;
export const README_MAX_BYTES = 4_096;
export const DOC_MAX_LINE = 200;

/** The folders at the top of service/ (`engine`, `store`, …): each keeps a README.md the map links to. */
export function serviceFolders(): string[] {
  return fs
    .readdirSync(SERVICE, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();
}

/** The README that describes a service file: its top folder's, or service/README.md for the files at the top. */
export function readmeOf(file: string): string {
  const parts = path.relative("service", file).split(path.sep);
  return parts.length > 1 ? `service/${parts[0]}/README.md` : "service/README.md";
}

/** service/README.md and every folder's README.md, from the repository root (whether or not each exists yet). */
export function readmePaths(): string[] {
  return ["service/README.md", ...serviceFolders().map((dir) => `service/${dir}/README.md`)];
}

/**
 * `file:name` entries a README lists under its long-functions heading, with the reason given, as paths from the
 * repository root (a README names its files from its own folder: `command-table.ts:commandTable`).
 */
export function documentedLongFunctions(readme: string, text: string): Set<string> {
  const heading = `## Functions longer than ${LONG_FUNCTION_LINES} lines`;
  const start = text.indexOf(heading);
  if (start < 0) return new Set();
  const next = text.indexOf("\n## ", start + heading.length);
  const section = text.slice(start, next < 0 ? undefined : next);
  const folder = path.posix.dirname(readme);
  return new Set(
    [...section.matchAll(/`([^`:\s]+\.ts):([A-Za-z0-9_$]+)`/g)].map((m) => `${path.posix.join(folder, m[1])}:${m[2]}`),
  );
}

/** Paths a document names (`runner.ts`, `engine/send.ts`, `store/migrations/`), not globs, placeholders or URLs. */
export function pathsNamedInDocument(text: string): string[] {
  const withoutUrls = text.replace(/https?:\/\/\S+/g, "");
  const file =
    /(?<![\w/.:@<>*$-])((?:\.{1,2}\/)*[\w@-][\w.@-]*(?:\/[\w.@-]+)*\.(?:ts|js|sql|sol|md|css|html))(?![\w/*<>-])/g;
  return [...new Set([...withoutUrls.matchAll(file)].map((m) => m[1]))];
}

/**
 * The paths of `paths`, named in the document at `document`, that are not in the tree: each is looked for from the
 * document's folder, from service/ and from the repository root.
 */
export function missingPaths(document: string, paths: string[]): string[] {
  const bases = [path.join(ROOT, path.dirname(document)), SERVICE, ROOT];
  return paths.filter((p) => !bases.some((base) => fs.existsSync(path.join(base, p))));
}

/** Lines of `text` longer than `max` characters, as `line N (length)`. */
export function longLines(text: string, max = DOC_MAX_LINE): string[] {
  return text
    .split("\n")
    .map((line, i) => ({ line: i + 1, length: line.length }))
    .filter((l) => l.length > max)
    .map((l) => `line ${l.line} (${l.length})`);
}
