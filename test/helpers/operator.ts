import path from "node:path";
import { ApiKeys } from "../../service/store/api-keys";
import { openDb } from "../../service/store/db";
import { migrate } from "../../service/store/migrate";
import { Signers } from "../../service/store/signers";

/**
 * Operator set-up on a data directory's embedded database before a service process owns it: an Enterprise key and
 * `signer` whitelisted for it. Answers the key.
 */
export async function setUpOperator(dataDir: string, email: string, signer: string): Promise<string> {
  const db = await openDb({ dataDir: path.join(dataDir, "sandbox", "pglite") });
  try {
    await migrate(db);
    const { key, record } = await new ApiKeys(db).create({ email, plan: "Enterprise" });
    await new Signers(db).add(signer, { keyId: record.id });
    return key;
  } finally {
    await db.close();
  }
}
