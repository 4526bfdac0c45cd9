import type { HDNodeWallet, Wallet } from "ethers";
import type { ApiClient, ApiResponse } from "./service";

export interface InvestorDetails {
  firstName: string;
  lastName: string;
  country: string;
}

/** The token of a KYC link URL (…/kyc?token=…). */
export function tokenOf(url: string): string {
  const token = new URL(url).searchParams.get("token");
  if (!token) throw new Error(`no token in ${url}`);
  return token;
}

/** Step 1 of the investor's page: the message the wallet is asked to sign. */
export function requestMessage(
  api: ApiClient,
  token: string,
  wallet: { address: string },
  details: InvestorDetails,
  chainId = 11155111,
) {
  return api.post("/kyc/message", { token, ...details, walletAddress: wallet.address, chainId });
}

/** What the investor's page does, through HTTP: message, personal_sign with the wallet, submission. */
export async function submitThroughLink(
  api: ApiClient,
  url: string,
  wallet: Wallet | HDNodeWallet,
  details: InvestorDetails,
): Promise<ApiResponse> {
  const token = tokenOf(url);
  const issued = await requestMessage(api, token, wallet, details);
  if (issued.status !== 200) return issued;
  const signature = await wallet.signMessage(issued.body.message);
  return api.post("/kyc/submit", {
    token,
    ...details,
    walletAddress: wallet.address,
    message: issued.body.message,
    signature,
  });
}
