import fs from "node:fs";
import path from "node:path";
import ts from "typescript";

/**
 * Paths that comments name, and whether each is still there. Comments say "see service/engine/send.ts" or
 * "(./architecture.ts)"; when a file moves, such a comment points nowhere. test/service/comment-paths.test.ts holds the
 * comments of service/, scripts/, test/ and bench/ to the tree.
 */

const ROOT = path.resolve(__dirname, "..", "..");

export interface NamedPath {
  /** The file whose comment names the path, from the repository root. */
  file: string;
  line: number;
  /** The path as the comment writes it. */
  path: string;
  /** The comment's line, trimmed: what the failure shows. */
  text: string;
}

const SOURCE = /\.(ts|mts|js|mjs|cjs|sql)$/;

export function sourceFiles(dirs: string[]): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      if (entry.name === "node_modules" || entry.name.startsWith(".")) continue;
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (SOURCE.test(entry.name) && !entry.name.endsWith(".d.ts")) out.push(path.relative(ROOT, full));
    }
  };
  for (const dir of dirs) walk(path.join(ROOT, dir));
  return out.sort();
}

/** The comments of a source file, each with the offset it starts at. */
export function commentsOf(file: string, text: string): { pos: number; text: string }[] {
  if (file.endsWith(".sql")) return [...text.matchAll(/--[^\n]*/g)].map((m) => ({ pos: m.index, text: m[0] }));
  const kind = file.endsWith("x") ? ts.ScriptKind.TSX : ts.ScriptKind.TS;
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false, kind);
  const seen = new Map<number, string>();
  const collect = (ranges: ts.CommentRange[] | undefined) => {
    for (const r of ranges ?? []) seen.set(r.pos, text.slice(r.pos, r.end));
  };
  const visit = (node: ts.Node) => {
    collect(ts.getLeadingCommentRanges(text, node.getFullStart()));
    collect(ts.getTrailingCommentRanges(text, node.getEnd()));
    node.forEachChild(visit);
  };
  visit(source);
  collect(ts.getLeadingCommentRanges(text, source.endOfFileToken.getFullStart()));
  return [...seen.entries()].sort(([a], [b]) => a - b).map(([pos, comment]) => ({ pos, text: comment }));
}

/**
 * A path in prose: at least one directory and a file name with an extension we keep in the repository. URLs, globs,
 * placeholders (`<chainId>.json`) and routes (`/docs/assets/x.js`, which start with a slash) are not paths here.
 */
const EXTENSION = String.raw`\.(?:ts|js|mjs|cjs|sql|sol|md|json|html|css)`;
const RELATIVE = String.raw`(?:\.{1,2}/)+[\w@-][\w.@-]*(?:/[\w.@-]+)*${EXTENSION}`;
const FROM_A_DIRECTORY = String.raw`[\w@-][\w.@-]*(?:/[\w.@-]+)+${EXTENSION}`;
const PATH = new RegExp(String.raw`(?<![\w/.:@<>*$-])(${RELATIVE}|${FROM_A_DIRECTORY})(?![\w/*<>-])`, "g");

export function pathsNamedIn(file: string, text: string): NamedPath[] {
  const lineStarts = [0, ...[...text.matchAll(/\n/g)].map((m) => m.index + 1)];
  const lineOf = (pos: number) => {
    let low = 0;
    while (low + 1 < lineStarts.length && lineStarts[low + 1] <= pos) low++;
    return low;
  };
  const lines = text.split("\n");
  const out: NamedPath[] = [];
  for (const comment of commentsOf(file, text)) {
    for (const match of comment.text.matchAll(PATH)) {
      const line = lineOf(comment.pos + match.index);
      out.push({ file, line: line + 1, path: match[1], text: lines[line].trim() });
    }
  }
  return out;
}

/** Directories .gitignore keeps out of the repository (build output, reports): a comment may name what goes there. */
function ignoredDirectories(): string[] {
  const lines = fs.readFileSync(path.join(ROOT, ".gitignore"), "utf8").split("\n");
  return lines.filter((l) => /^\/?[\w.-]+\/$/.test(l.trim())).map((l) => l.trim().replace(/^\//, ""));
}

/**
 * Where a named path may be: from the repository root, from service/ (the service's comments name its modules as
 * `engine/tracker.ts`), from the naming file's top directory (a test names its helpers from test/) or its own
 * directory (`./architecture.ts` here). A path into a directory the repository ignores (dist/, test-artifacts/) is
 * output, not checked.
 */
export function resolves(named: NamedPath, ignored = ignoredDirectories()): boolean {
  const relative = named.path.replace(/^(\.\/)+/, "");
  if (ignored.some((dir) => relative.startsWith(dir))) return true;
  const topDirectory = path.join(ROOT, named.file.split("/")[0]);
  const bases = [ROOT, path.join(ROOT, "service"), topDirectory, path.join(ROOT, path.dirname(named.file))];
  return bases.some((base) => fs.existsSync(path.join(base, named.path)));
}

/** Every path the comments of `dirs` name that is not in the tree. */
export function stalePaths(dirs: string[]): NamedPath[] {
  const ignored = ignoredDirectories();
  return sourceFiles(dirs).flatMap((file) => {
    const named = pathsNamedIn(file, fs.readFileSync(path.join(ROOT, file), "utf8"));
    return named.filter((n) => !resolves(n, ignored));
  });
}
