import { randomUUID } from "node:crypto";
import type { z } from "zod";
import { badRequest, outOfCredits } from "../errors";
import { documentUrl, tokenContext, type TokenDocsUpload } from "../reads/tokenization";
import type { ApiKeyRecord } from "../store/api-keys";
import type { Services } from "./services";

/** The multipart fields of PATCH /patch-token-docs and the token document each one sets. */
export const DOCUMENT_FIELDS = [
  { field: "tokenLogotype", document: "logotype" },
  { field: "subscriptionAgreement", document: "subscriptionAgreement" },
  { field: "legalDocs", document: "legalDocs" },
] as const;

/** An uploaded file as the multipart parser hands it over. */
export interface UploadedFile {
  buffer: Buffer;
  mimetype: string;
}

/**
 * Stores a token's uploaded documents (content-addressed) and points the token at them, charging the key one
 * patch-token-docs credit in the same transaction: all of it happens, or none.
 */
export async function storeTokenDocuments(services: Services, apiKey: ApiKeyRecord, tokenSymbol: string, files: Record<string, UploadedFile[]>) {
  if (!tokenSymbol) throw badRequest("tokenSymbol is required", { field: "tokenSymbol" });
  const { token } = await tokenContext(services, apiKey, tokenSymbol);
  const present = DOCUMENT_FIELDS.filter((d) => files[d.field]?.[0]);
  if (!present.length) throw badRequest("At least one of tokenLogotype, subscriptionAgreement, legalDocs is required", { field: "tokenLogotype" });
  const refs: Record<string, string> = {};
  await services.db.transaction(async (q) => {
    const spent = await services.credits.spend(q, apiKey.id, "patch-token-docs", `docs:${randomUUID()}`);
    if (!spent.ok) throw outOfCredits("patch-token-docs");
    for (const d of present) {
      const file = files[d.field][0];
      refs[d.field] = await services.documents.put(q, file.buffer, file.mimetype || "application/octet-stream");
      await services.tokens.setDocument(token.id, d.document, refs[d.field], q);
    }
  });
  const answer: z.infer<typeof TokenDocsUpload> = {
    success: true,
    tokenSymbol: token.symbol,
    tokenLogotypeRef: refs.tokenLogotype ?? null,
    tokenLogotype: documentUrl(services, refs.tokenLogotype ?? null),
    subscriptionAgreementRef: refs.subscriptionAgreement ?? null,
    legalDocsRef: refs.legalDocs ?? null,
    subscriptionAgreementIpfs: refs.subscriptionAgreement ?? null,
    legalDocsIpfs: refs.legalDocs ?? null,
  };
  return answer;
}
