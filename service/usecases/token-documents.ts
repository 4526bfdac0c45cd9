import { randomUUID } from "node:crypto";
import type { z } from "zod";
import { badRequest, outOfCredits } from "../errors";
import type { CheckedFile } from "../model/document-types";
import { documentUrl, tokenContext } from "../reads/tokenization";
import type { TokenDocsUpload } from "../reads/tokenization-schemas";
import type { ApiKeyRecord } from "../store/api-keys";
import type { TokenRecord } from "../store/tokens";
import type { Services } from "./services";

/** The multipart fields of PATCH /patch-token-docs and the token document each one sets. */
export const DOCUMENT_FIELDS = [
  { field: "tokenLogotype", document: "logotype" },
  { field: "subscriptionAgreement", document: "subscriptionAgreement" },
  { field: "legalDocs", document: "legalDocs" },
] as const;

/** The largest document taken. */
export const MAX_DOCUMENT_BYTES = 10 * 1024 * 1024;

const symbolIn = (value: unknown) => (typeof value === "string" ? value.trim() : "");

/**
 * PATCH /patch-token-docs: everything that can be refused is refused before the files are kept. Before the body is read
 * (here): the key's upload rate, its patch-token-docs credit and, when the query names it, the token's scope; as the
 * body arrives (the route reads it, after a Content-Length over the limits was refused): the
 * token's scope once its tokenSymbol field was read (send it before the files, `scope`), each file's kind from its
 * first bytes (415) and its size (413). Then the documents are stored and the credit spent in one transaction (`store`).
 */
export async function startTokenDocumentsUpload(
  services: Services,
  apiKey: ApiKeyRecord,
  querySymbol: string | undefined,
) {
  await services.requestLimits.of("uploadsPerKey").admit(`key:${apiKey.id}`);
  if (!((await services.credits.balances(apiKey.id))["patch-token-docs"] > 0)) throw outOfCredits("patch-token-docs");
  let scoped: { symbol: string; token: TokenRecord } | undefined;
  const inScope = async (symbol: string) => {
    if (!symbol || scoped?.symbol === symbol) return;
    scoped = { symbol, token: (await tokenContext(services, apiKey, symbol)).token };
  };
  await inScope(symbolIn(querySymbol));
  return {
    /** Checks the token the form's tokenSymbol field names (the query's wins), before a file of it is read. */
    scope: (formSymbol: unknown) => inScope(symbolIn(querySymbol) || symbolIn(formSymbol)),
    /** Stores the received files for the token the query or the form names. */
    store: (files: Record<string, CheckedFile>, formSymbol: unknown) =>
      storeTokenDocuments(services, apiKey, symbolIn(querySymbol) || symbolIn(formSymbol), files),
  };
}

/**
 * Stores a token's uploaded documents (content-addressed) and points the token at them, charging the key one
 * patch-token-docs credit in the same transaction: all of it happens, or none.
 */
export async function storeTokenDocuments(
  services: Services,
  apiKey: ApiKeyRecord,
  tokenSymbol: string,
  files: Record<string, CheckedFile>,
) {
  if (!tokenSymbol) throw badRequest("tokenSymbol is required", { field: "tokenSymbol" });
  const { token } = await tokenContext(services, apiKey, tokenSymbol);
  const present = DOCUMENT_FIELDS.filter((d) => files[d.field]);
  if (!present.length)
    throw badRequest("At least one of tokenLogotype, subscriptionAgreement, legalDocs is required", {
      field: "tokenLogotype",
    });
  const refs: Record<string, string> = {};
  await services.db.transaction(async (q) => {
    const spent = await services.credits.spend(q, apiKey.id, "patch-token-docs", `docs:${randomUUID()}`);
    if (!spent.ok) throw outOfCredits("patch-token-docs");
    for (const d of present) {
      const file = files[d.field];
      refs[d.field] = await services.documents.put(q, file.buffer, file.mediaType);
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
