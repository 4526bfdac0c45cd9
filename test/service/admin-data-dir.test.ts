import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect } from "chai";
import { findDataDir } from "../../service/operator/data-dir";

describe("npm run admin without DATA_DIR: which data directory it works on", () => {
  let root: string;
  const dir = (name: string, withDatabase: boolean) => {
    const d = path.join(root, name);
    fs.mkdirSync(withDatabase ? path.join(d, "sandbox", "pglite") : d, { recursive: true });
    return d;
  };

  beforeEach(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), "tak-admin-data-dir-"));
  });
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  it("the first candidate holding the environment's database (the sandbox npm start made)", () => {
    const empty = dir("here", false);
    const sandbox = dir("checkout", true);
    expect(findDataDir({}, [empty, sandbox])).to.equal(sandbox);
    expect(findDataDir({}, [sandbox, empty])).to.equal(sandbox);
  });

  it("none: says where it looked, and creates nothing", () => {
    const a = dir("a", false);
    const b = path.join(root, "b");
    expect(() => findDataDir({}, [a, b])).to.throw(
      `No sandbox database found: looked for ${path.join(a, "sandbox", "pglite")} and ${path.join(b, "sandbox", "pglite")}`,
    );
    expect(fs.readdirSync(a)).to.deep.equal([]);
    expect(fs.existsSync(b)).to.equal(false);
    expect(() => findDataDir({ ENVIRONMENT: "production" }, [dir("c", true)])).to.throw("No production database found");
  });

  it("DATA_DIR or DATABASE_URL is used as given", () => {
    expect(findDataDir({ DATA_DIR: "/srv/tak" }, [])).to.equal("/srv/tak");
    expect(findDataDir({ DATABASE_URL: "postgres://db/tak" }, [])).to.equal(undefined);
  });
});
