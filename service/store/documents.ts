import { createHash } from "node:crypto";
import type { Db, Queryable } from "./db";

/** Token documents stored content-addressed: the reference is the SHA-256 of the bytes, so equal files are stored once. */
export class Documents {
  constructor(private readonly db: Db) {}

  async put(tx: Queryable, content: Buffer, mediaType: string): Promise<string> {
    const sha256 = createHash("sha256").update(content).digest("hex");
    await tx.query(
      "INSERT INTO documents (sha256, media_type, size, content) VALUES ($1, $2, $3, $4) ON CONFLICT (sha256) DO NOTHING",
      [sha256, mediaType, content.length, content],
    );
    return `sha256:${sha256}`;
  }

  async get(sha256: string): Promise<{ content: Buffer; mediaType: string } | undefined> {
    const [row] = await this.db.query<{ content: Uint8Array; media_type: string }>(
      "SELECT content, media_type FROM documents WHERE sha256 = $1",
      [sha256],
    );
    return row && { content: Buffer.from(row.content), mediaType: row.media_type };
  }
}
