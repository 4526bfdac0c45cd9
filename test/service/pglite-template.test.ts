import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect } from "chai";
import { openDb } from "../../service/store/db";
import { migrate } from "../../service/store/migrate";
import {
  bareClusterFile,
  copyPgliteTemplate,
  pgliteTemplateDir,
  readBareCluster,
} from "../../service/store/pglite-template";

/** Every file and directory under `dir` with its permission bits. */
function modes(dir: string): number[] {
  return fs
    .readdirSync(dir, { recursive: true, encoding: "utf8" })
    .map((f) => fs.statSync(path.join(dir, f)).mode & 0o777);
}

describe("the embedded database's template (a new database copied from a migrated cluster)", function () {
  this.timeout(120_000);
  let work: string;
  let template: string;

  before(async () => {
    work = fs.mkdtempSync(path.join(os.tmpdir(), "tak-template-"));
    template = path.join(work, "template");
    const db = await openDb({ dataDir: template });
    await migrate(db);
    await db.close();
  });
  after(() => fs.rmSync(work, { recursive: true, force: true }));

  it("is looked for beside the compiled store, named for the PGlite version it opens with", () => {
    expect(path.dirname(pgliteTemplateDir())).to.equal(path.resolve(__dirname, "../../service/store"));
    expect(path.basename(pgliteTemplateDir())).to.match(/^pglite-template-\d+\.\d+\.\d+/);
  });

  it("a new data directory becomes a copy: it opens migrated, holds no row, and its files are private", async () => {
    const dataDir = path.join(work, "fresh", "pglite");
    expect(copyPgliteTemplate(dataDir, template)).to.equal(true);
    const db = await openDb({ dataDir });
    try {
      expect(await migrate(db)).to.deep.equal([]);
      expect(await db.query("SELECT count(*)::int AS n FROM api_keys")).to.deep.equal([{ n: 0 }]);
    } finally {
      await db.close();
    }
    expect(modes(dataDir).every((m) => m === 0o600 || m === 0o700)).to.equal(true);
    expect(fs.readdirSync(path.dirname(dataDir))).to.deep.equal(["pglite"]); // no partial copy left beside it
  });

  it("an existing or non-empty directory is never overwritten", async () => {
    const dataDir = path.join(work, "existing");
    fs.mkdirSync(dataDir);
    fs.writeFileSync(path.join(dataDir, "keep.txt"), "mine");
    expect(copyPgliteTemplate(dataDir, template)).to.equal(false);
    expect(fs.readdirSync(dataDir)).to.deep.equal(["keep.txt"]);
  });

  it("without a template, or with one that cannot be copied, the directory is left to be created as before", () => {
    expect(copyPgliteTemplate(path.join(work, "none"), path.join(work, "no-template"))).to.equal(false);
    expect(fs.existsSync(path.join(work, "none"))).to.equal(false);
    // A template whose copy fails halfway (Node's copy refuses a FIFO): nothing half-copied is left behind.
    const broken = path.join(work, "broken");
    fs.mkdirSync(broken);
    fs.writeFileSync(path.join(broken, "PG_VERSION"), "17\n");
    execFileSync("mkfifo", [path.join(broken, "pipe")]);
    const dataDir = path.join(work, "from-broken");
    expect(copyPgliteTemplate(dataDir, broken)).to.equal(false);
    expect(fs.readdirSync(dataDir)).to.deep.equal([]);
    expect(fs.readdirSync(work).filter((f) => f.includes(".partial"))).to.deep.equal([]);
  });

  it("an in-memory database starts from the cached bare cluster, reads int8 as text as on disk, and a damaged cache is replaced", async () => {
    const file = bareClusterFile()!;
    expect(file).to.match(/node_modules\/\.cache\/tokenized-asset-api\/pglite-bare-/);
    const check = async () => {
      const db = await openDb({});
      try {
        expect(await db.query("SELECT 9007199254740993::int8 AS n")).to.deep.equal([{ n: "9007199254740993" }]);
        expect(await migrate(db)).to.have.length.above(0); // the cluster holds nothing of ours: every migration runs
      } finally {
        await db.close();
      }
    };
    await check();
    expect(readBareCluster(), "cached after the first new database").to.not.equal(undefined);
    fs.writeFileSync(file, "not a tarball");
    await check(); // the damaged cache does not load: initdb, and a fresh cache
    expect(fs.readFileSync(file).subarray(0, 2)).to.deep.equal(Buffer.from([0x1f, 0x8b])); // gzip again
    await check();
  });
});
