import type { Db } from "./db";
import type { Sealer } from "../crypto/sealed";

const CHECK_KEY = "data_encryption_key_check";
const CHECK_PURPOSE = "data-encryption-key-check";

export class DataKeyMismatch extends Error {}

/**
 * Every instance on one database must seal with the same key, or what one seals another cannot open (an authorisation
 * waiting to be settled, a pending signed transaction): the first start leaves a value sealed with its key in
 * deployment_meta, and a start with another key is refused instead of failing later, one payment at a time.
 */
export async function assertDataKey(db: Db, sealer: Sealer): Promise<void> {
  await db.query("INSERT INTO deployment_meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING", [
    CHECK_KEY,
    sealer.seal(CHECK_KEY, CHECK_PURPOSE),
  ]);
  const [row] = await db.query<{ value: string }>("SELECT value FROM deployment_meta WHERE key = $1", [CHECK_KEY]);
  try {
    if (sealer.open(row.value, CHECK_PURPOSE) === CHECK_KEY) return;
  } catch {
    // another key
  }
  throw new DataKeyMismatch(
    "DATA_ENCRYPTION_KEY (or the data-encryption-key file of DATA_DIR) is not the key this database's sealed values were sealed with: " +
      "give every instance the same DATA_ENCRYPTION_KEY. If the old key is lost, delete the row 'data_encryption_key_check' from deployment_meta; " +
      "what it sealed (authorisations waiting to be settled, pending signed transactions, open KYC links' URLs) can then not be opened.",
  );
}
