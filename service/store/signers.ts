import { getAddress } from "ethers";
import type { Db } from "./db";

/** Wallets the operator has whitelisted as signers; every prepare checks its signer against this list. */
export class Signers {
  constructor(private readonly db: Db) {}

  async add(address: string): Promise<void> {
    await this.db.query("INSERT INTO signers (address) VALUES ($1) ON CONFLICT (address) DO NOTHING", [address.toLowerCase()]);
  }

  async remove(address: string): Promise<boolean> {
    const rows = await this.db.query("DELETE FROM signers WHERE address = $1 RETURNING address", [address.toLowerCase()]);
    return rows.length > 0;
  }

  async list(): Promise<string[]> {
    const rows = await this.db.query<{ address: string }>("SELECT address FROM signers ORDER BY added_at, address");
    return rows.map((r) => getAddress(r.address));
  }

  async isAllowed(address: string): Promise<boolean> {
    const rows = await this.db.query("SELECT 1 FROM signers WHERE address = $1", [address.toLowerCase()]);
    return rows.length > 0;
  }
}
