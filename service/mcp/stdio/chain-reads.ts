import { Contract, JsonRpcProvider } from "ethers";

/**
 * What the stdio server reads from a chain itself, never from the service: the base fee its fee cap is a multiple of,
 * and an agent token's decimals. Only on the chains TAK_RPC_URLS names; elsewhere the fee cap is TAK_MAX_FEE_GWEI or
 * DEFAULT_FEE_CAP, and decimals come from the request.
 */

/** The fee cap without TAK_MAX_FEE_GWEI and without an RPC of its own: 100 gwei. */
export const DEFAULT_FEE_CAP = 100_000_000_000n;
/** With an RPC: this many times the latest base fee, plus twice the suggested tip. */
export const BASE_FEE_MULTIPLE = 3n;

export class ChainReads {
  private readonly providers = new Map<number, JsonRpcProvider>();

  constructor(
    private readonly rpcUrls: ReadonlyMap<number, string>,
    private readonly maxFee: bigint | undefined,
  ) {}

  private provider(chainId: number): JsonRpcProvider | undefined {
    const url = this.rpcUrls.get(chainId);
    if (!url) return undefined;
    let provider = this.providers.get(chainId);
    if (!provider) this.providers.set(chainId, (provider = new JsonRpcProvider(url, chainId, { staticNetwork: true })));
    return provider;
  }

  /** The highest maxFeePerGas signed on `chainId` (wei), and how it was decided. */
  async feeCap(chainId: number): Promise<{ cap: bigint; rule: string }> {
    if (this.maxFee !== undefined) return { cap: this.maxFee, rule: "TAK_MAX_FEE_GWEI" };
    const provider = this.provider(chainId);
    if (!provider) return { cap: DEFAULT_FEE_CAP, rule: "the default cap (set TAK_MAX_FEE_GWEI or TAK_RPC_URLS)" };
    const [block, tip] = await Promise.all([
      provider.getBlock("latest"),
      provider.send("eth_maxPriorityFeePerGas", []).then(
        (hex: string) => BigInt(hex),
        () => 1_000_000_000n,
      ),
    ]);
    const base = block?.baseFeePerGas ?? 0n;
    return {
      cap: base * BASE_FEE_MULTIPLE + tip * 2n,
      rule: `${BASE_FEE_MULTIPLE} times the base fee read from TAK_RPC_URLS`,
    };
  }

  /** An ERC-20's decimals read from the chain, when this server has an RPC for it. */
  async decimals(chainId: number, token: string): Promise<number | undefined> {
    const provider = this.provider(chainId);
    if (!provider) return undefined;
    const contract = new Contract(token, ["function decimals() view returns (uint8)"], provider);
    return Number(await contract.decimals());
  }

  close(): void {
    for (const provider of this.providers.values()) provider.destroy();
  }
}
