import type { Signer } from "ethers";
import { createApiClient, paymentTerms, x402Fetch, type ApiClient, type FetchLike } from "../../client/index";
import { checkDocumented } from "./documented";

/**
 * The repository's typed client (client/index.ts) as the end-to-end tests use it: every answer it receives is also
 * checked against what /openapi.json documents for it (test/helpers/documented.ts).
 */
export function documentedClient(baseUrl: string, apiKey?: string, fetch?: FetchLike): ApiClient {
  const client = createApiClient({ baseUrl, apiKey, fetch });
  client.use({
    async onResponse({ request, response }) {
      const json = (response.headers.get("content-type") ?? "").includes("application/json");
      const body = json ? await response.clone().json() : undefined;
      checkDocumented({
        method: request.method,
        path: new URL(request.url).pathname,
        status: response.status,
        headers: response.headers,
        body,
      });
      return undefined;
    },
  });
  return client;
}

/**
 * A typed client without a key whose calls pay their 402s through @x402/fetch with `payer`'s USDC (client x402Fetch),
 * limited to the deployment's payment asset (GET /.well-known/x402) and `maxAmountPerPayment` base units per call.
 */
export async function payingClient(
  baseUrl: string,
  payer: Signer,
  maxAmountPerPayment = "1000000",
): Promise<ApiClient> {
  const terms = await paymentTerms(documentedClient(baseUrl));
  return documentedClient(baseUrl, undefined, await x402Fetch(payer, { ...terms, maxAmountPerPayment }));
}
