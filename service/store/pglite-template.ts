import fs from "node:fs";
import path from "node:path";
import type { PGlite } from "@electric-sql/pglite";

/** int8 and numeric come back as strings: amounts never pass through JS numbers. */
const PARSERS = { 20: (v: string) => v };

/**
 * Opens the embedded database in `dataDir` (in memory without one). A new one starts from the migrated template when
 * there is one, else from the cached bare cluster, else from initdb (and then fills the cache); an existing one opens
 * as it is.
 */
export async function openPglite(dataDir?: string): Promise<PGlite> {
  // Loaded only for the embedded database: a service on PostgreSQL never pays for PGlite's code.
  const { PGlite } = await import("@electric-sql/pglite");
  if (dataDir) copyPgliteTemplate(dataDir);
  const isNew = !dataDir || !fs.existsSync(path.join(dataDir, "PG_VERSION"));
  const bare = isNew ? readBareCluster() : undefined;
  // One options object: PGlite's constructor ignores its second argument when the first (the directory) is absent.
  const options = { dataDir, parsers: PARSERS };
  if (bare) {
    const pg = new PGlite({ ...options, loadDataDir: bare });
    const loaded = await pg.waitReady.then(
      () => true,
      () => false,
    );
    if (loaded) return pg;
    dropBareCluster(); // damaged: this database is created by initdb, which fills the cache again
    if (dataDir)
      for (const entry of fs.readdirSync(dataDir))
        fs.rmSync(path.join(dataDir, entry), { recursive: true, force: true });
  }
  const pg = new PGlite(options);
  await pg.waitReady;
  if (isNew) await cacheBareCluster(pg);
  return pg;
}

/**
 * A new embedded database on disk starts as a copy of a template: the files of a PGlite cluster that was created
 * (what initdb does) and migrated, then closed cleanly. Creating and migrating a cluster costs ~4 s of CPU; copying
 * ~40 MiB of files and opening them costs well under one. `npm run build` writes the template beside the compiled
 * module (dist/service/store/pglite-template-<PGlite version>/); the files of one PGlite version only ever open with that
 * version. The template holds the schema and nothing else: no key, no row of an operator's. Without a template (a
 * source run), a new database is created and migrated as before; migrations missing from a template are applied at
 * start as on any database.
 */
export function pgliteTemplateDir(): string {
  return path.join(__dirname, `pglite-template-${pgliteVersion()}`);
}

/**
 * Creates `dataDir` as a copy of the template when there is one and `dataDir` is missing or empty; answers whether it
 * did. The copy is made beside it and renamed into place, so a start stopped halfway leaves no half database behind.
 */
export function copyPgliteTemplate(dataDir: string, template = pgliteTemplateDir()): boolean {
  if (!fs.existsSync(path.join(template, "PG_VERSION"))) return false;
  if (fs.existsSync(dataDir) && fs.readdirSync(dataDir).length > 0) return false;
  const partial = `${dataDir}.${process.pid}.partial`;
  try {
    fs.rmSync(partial, { recursive: true, force: true });
    fs.mkdirSync(partial, { recursive: true, mode: 0o700 });
    copyTree(template, partial);
    fs.rmSync(dataDir, { recursive: true, force: true });
    fs.renameSync(partial, dataDir);
    return true;
  } catch {
    // A template that cannot be read or copied: this database is created the slow way instead.
    fs.rmSync(partial, { recursive: true, force: true });
    fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    return false;
  }
}

/**
 * Copies a cluster's directory: directories, regular files and symbolic links, anything else (a FIFO, a socket) refused
 * with an error. Not fs.cpSync: on Node 24 it copies FIFOs, and a failure inside its native copy (a path too long for
 * the copy) aborts the process instead of throwing.
 */
function copyTree(from: string, to: string): void {
  fs.mkdirSync(to, { recursive: true, mode: 0o700 });
  for (const entry of fs.readdirSync(from, { withFileTypes: true })) {
    const [source, target] = [path.join(from, entry.name), path.join(to, entry.name)];
    if (entry.isDirectory()) copyTree(source, target);
    else if (entry.isFile()) fs.copyFileSync(source, target);
    else if (entry.isSymbolicLink()) fs.symlinkSync(fs.readlinkSync(source), target);
    else
      throw new Error(`${source} is neither a file, a directory nor a link: a cluster's template holds none of those`);
  }
}

let version: string | undefined;
function pgliteVersion(): string {
  // The package's exports do not include its package.json: read it from beside its entry point (dist/index.cjs).
  version ??= (
    JSON.parse(
      fs.readFileSync(path.join(path.dirname(require.resolve("@electric-sql/pglite")), "..", "package.json"), "utf8"),
    ) as { version: string }
  ).version;
  return version;
}

/**
 * Without a migrated template (source runs: the sandbox, the tests, which open many in-memory databases), a new
 * database still skips initdb after the first: the files of a cluster just created, before any migration, are kept as
 * a gzipped tarball in node_modules/.cache/tokenized-asset-api/ and loaded into each new one (~0.7–1.2 s instead of
 * ~2.5–3.5 s). It holds what initdb writes and nothing of ours; the migrations run on each database as always.
 */
export function readBareCluster(): Blob | undefined {
  const file = bareClusterFile();
  if (!file || !fs.existsSync(file)) return undefined;
  try {
    return new Blob([fs.readFileSync(file)]);
  } catch {
    return undefined;
  }
}

/** Keeps the files of `pg`, a cluster just created by initdb, as the cache's tarball (written atomically; best effort). */
async function cacheBareCluster(pg: PGlite): Promise<void> {
  const file = bareClusterFile();
  if (!file) return;
  const partial = `${file}.${process.pid}.partial`;
  try {
    const tarball = Buffer.from(await (await pg.dumpDataDir("gzip")).arrayBuffer());
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(partial, tarball);
    fs.renameSync(partial, file);
  } catch {
    fs.rmSync(partial, { force: true }); // a read-only node_modules: the next new database runs initdb too
  }
}

/** A cached tarball that did not load (damaged): dropped, so the next new database makes a fresh one. */
function dropBareCluster(): void {
  const file = bareClusterFile();
  if (file) fs.rmSync(file, { force: true });
}

/** node_modules/.cache/tokenized-asset-api/pglite-bare-<version>.tar.gz of the node_modules PGlite is installed in. */
export function bareClusterFile(): string | undefined {
  const entry = require.resolve("@electric-sql/pglite");
  const marker = `${path.sep}node_modules${path.sep}`;
  const at = entry.lastIndexOf(marker);
  if (at < 0) return undefined;
  return path.join(
    entry.slice(0, at + marker.length),
    ".cache",
    "tokenized-asset-api",
    `pglite-bare-${pgliteVersion()}.tar.gz`,
  );
}
