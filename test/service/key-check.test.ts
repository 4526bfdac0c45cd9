import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect } from "chai";
import { assertDataKey, DataKeyMismatch } from "../../service/store/key-check";
import { Sealer } from "../../service/crypto/sealed";
import type { Config } from "../../service/config";
import { dataEncryptionKeyPath, ensureDataEncryptionKey } from "../../service/runtime-files";
import { openDb, type Db } from "../../service/store/db";
import { migrate } from "../../service/store/migrate";

describe("the data encryption key", () => {
  let db: Db;
  before(async () => {
    db = await openDb({});
    await migrate(db);
  });
  after(async () => db?.close());

  it("every start on one database must seal with the key of the first: the same key passes, another is refused", async () => {
    const key = new Sealer("first".repeat(8));
    await assertDataKey(db, key);
    await assertDataKey(db, new Sealer("first".repeat(8)));
    let refused: unknown;
    await assertDataKey(db, new Sealer("other".repeat(8))).catch((e) => (refused = e));
    expect(refused).to.be.instanceOf(DataKeyMismatch);
    expect((refused as Error).message).to.match(/give every instance the same DATA_ENCRYPTION_KEY/);
    const [row] = await db.query<{ value: string }>(
      "SELECT value FROM deployment_meta WHERE key = 'data_encryption_key_check'",
    );
    expect(row.value, "the check holds a sealed value, not the key").to.match(/^v1\./).and.not.include("first");
  });

  it("without DATA_ENCRYPTION_KEY, in the local sandbox: one made once in the data directory (0600), then kept; a production start never makes one", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tak-key-"));
    try {
      expect(() =>
        ensureDataEncryptionKey({ environmentDir: path.join(dir, "production"), profile: "production" }),
      ).to.throw(/DATA_ENCRYPTION_KEY: required outside the local sandbox/);
      expect(fs.existsSync(path.join(dir, "production"))).to.equal(false);
      const config = { environmentDir: path.join(dir, "sandbox"), profile: "local" } as Config;
      const first = ensureDataEncryptionKey(config);
      expect(first).to.match(/^[A-Za-z0-9_-]{43}$/);
      expect(ensureDataEncryptionKey(config)).to.equal(first);
      expect(fs.statSync(dataEncryptionKeyPath(config)).mode & 0o777).to.equal(0o600);
      expect(fs.readdirSync(config.environmentDir)).to.deep.equal(["data-encryption-key"]);
      expect(ensureDataEncryptionKey({ ...config, DATA_ENCRYPTION_KEY: "given".repeat(8) })).to.equal(
        "given".repeat(8),
      );
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
