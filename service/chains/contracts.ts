import { Interface, LogDescription, type EventFragment, type InterfaceAbi } from "ethers";
import { AgentExecutor__factory } from "../../typechain-types/factories/contracts/rams/AgentExecutor__factory";
import { AgentMandate__factory } from "../../typechain-types/factories/contracts/rams/AgentMandate__factory";
import { AgentTokenFactory__factory } from "../../typechain-types/factories/contracts/agents/AgentTokenFactory__factory";
import { AgentToken__factory } from "../../typechain-types/factories/contracts/agents/AgentToken__factory";
import { BKN__factory } from "../../typechain-types/factories/contracts/payments/BKN__factory";
import { ComplianceProvider__factory } from "../../typechain-types/factories/contracts/rams/ComplianceProvider__factory";
import { IERC7943Fungible__factory } from "../../typechain-types/factories/contracts/tokenization/interfaces/IERC7943Fungible__factory";
import { SecurityToken__factory } from "../../typechain-types/factories/contracts/tokenization/SecurityToken__factory";
import { StoEscrow__factory } from "../../typechain-types/factories/contracts/tokenization/StoEscrow__factory";
import { TokenFactory__factory } from "../../typechain-types/factories/contracts/tokenization/TokenFactory__factory";
import { USDC__factory } from "../../typechain-types/factories/contracts/payments/USDC__factory";
import { USDT__factory } from "../../typechain-types/factories/contracts/payments/USDT__factory";
import { Multicall3__factory } from "../../typechain-types/factories/contracts/payments/Multicall3__factory";

/** Contract interfaces (ABIs from TypeChain) used to encode calls and decode events and errors. */
export const securityTokenInterface = SecurityToken__factory.createInterface();
export const stoEscrowInterface = StoEscrow__factory.createInterface();
export const tokenFactoryInterface = TokenFactory__factory.createInterface();
export const usdcInterface = USDC__factory.createInterface();
export const multicall3Interface = Multicall3__factory.createInterface();
export const bknInterface = BKN__factory.createInterface();
export const agentTokenFactoryInterface = AgentTokenFactory__factory.createInterface();
export const agentTokenInterface = AgentToken__factory.createInterface();
/** ERC-8226 (RAMS): the registry, the compliance provider and the per-principal executor. */
export const agentMandateInterface = AgentMandate__factory.createInterface();
export const complianceProviderInterface = ComplianceProvider__factory.createInterface();
export const agentExecutorInterface = AgentExecutor__factory.createInterface();

/** ERC-8004 identity registry (the reference ABI, which our IdentityRegistry implements exactly). */
export const identityRegistryInterface = new Interface([
  "event Registered(uint256 indexed agentId, string agentURI, address indexed owner)",
  "event MetadataSet(uint256 indexed agentId, string indexed indexedMetadataKey, string metadataKey, bytes metadataValue)",
  "event URIUpdated(uint256 indexed agentId, string newURI, address indexed updatedBy)",
  "event Transfer(address indexed from, address indexed to, uint256 indexed tokenId)",
  "function register(string agentURI) returns (uint256 agentId)",
  "function setAgentURI(uint256 agentId, string newURI)",
  "function setMetadata(uint256 agentId, string metadataKey, bytes metadataValue)",
  "function getMetadata(uint256 agentId, string metadataKey) view returns (bytes)",
  "function setAgentWallet(uint256 agentId, address newWallet, uint256 deadline, bytes signature)",
  "function getAgentWallet(uint256 agentId) view returns (address)",
  "function isAuthorizedOrOwner(address spender, uint256 agentId) view returns (bool)",
  "function ownerOf(uint256 tokenId) view returns (address)",
  "function tokenURI(uint256 tokenId) view returns (string)",
  "function transferFrom(address from, address to, uint256 tokenId)",
  "function eip712Domain() view returns (bytes1 fields, string name, string version, uint256 chainId, address verifyingContract, bytes32 salt, uint256[] extensions)",
]);

/** ERC-8004 reputation registry (reference ABI). */
export const reputationRegistryInterface = new Interface([
  "event NewFeedback(uint256 indexed agentId, address indexed clientAddress, uint64 feedbackIndex, int128 value, uint8 valueDecimals, string indexed indexedTag1, string tag1, string tag2, string endpoint, string feedbackURI, bytes32 feedbackHash)",
  "event FeedbackRevoked(uint256 indexed agentId, address indexed clientAddress, uint64 indexed feedbackIndex)",
  "event ResponseAppended(uint256 indexed agentId, address indexed clientAddress, uint64 feedbackIndex, address indexed responder, string responseURI, bytes32 responseHash)",
  "function giveFeedback(uint256 agentId, int128 value, uint8 valueDecimals, string tag1, string tag2, string endpoint, string feedbackURI, bytes32 feedbackHash)",
  "function revokeFeedback(uint256 agentId, uint64 feedbackIndex)",
  "function appendResponse(uint256 agentId, address clientAddress, uint64 feedbackIndex, string responseURI, bytes32 responseHash)",
  "function readFeedback(uint256 agentId, address clientAddress, uint64 feedbackIndex) view returns (int128 value, uint8 valueDecimals, string tag1, string tag2, bool isRevoked)",
  "function getLastIndex(uint256 agentId, address clientAddress) view returns (uint64)",
  "function getSummary(uint256 agentId, address[] clientAddresses, string tag1, string tag2) view returns (uint64 count, int128 summaryValue, uint8 summaryValueDecimals)",
  "function getClients(uint256 agentId) view returns (address[])",
]);

/** Every custom error any of our contracts can raise, for decoding revert data. */
const errorInterface = new Interface(
  dedupe([
    SecurityToken__factory.abi,
    StoEscrow__factory.abi,
    TokenFactory__factory.abi,
    USDC__factory.abi,
    USDT__factory.abi,
    BKN__factory.abi,
    AgentToken__factory.abi,
    AgentTokenFactory__factory.abi,
    // RAMS: the revert errors are declared only in the contracts; ERC-7943 errors of regulated assets an executor calls.
    AgentMandate__factory.abi,
    ComplianceProvider__factory.abi,
    AgentExecutor__factory.abi,
    IERC7943Fungible__factory.abi,
  ]),
);

function dedupe(abis: InterfaceAbi[]): InterfaceAbi {
  const seen = new Set<string>();
  const fragments: unknown[] = [];
  for (const abi of abis) {
    for (const fragment of abi as { type: string; name?: string; inputs?: { type: string }[] }[]) {
      if (fragment.type !== "error") continue;
      const signature = `${fragment.name}(${(fragment.inputs ?? []).map((i) => i.type).join(",")})`;
      if (seen.has(signature)) continue;
      seen.add(signature);
      fragments.push(fragment);
    }
  }
  return fragments as InterfaceAbi;
}

/** "ErrorName(arg, …)" for revert data of our contracts, Error(string) and Panic; undefined when unknown. */
export function decodeRevert(data: string | undefined | null): string | undefined {
  if (!data || data === "0x") return undefined;
  try {
    const parsed = errorInterface.parseError(data);
    if (parsed) return `${parsed.name}(${parsed.args.map((a) => String(a)).join(", ")})`;
  } catch {
    // fall through to the standard encodings
  }
  try {
    const std = new Interface(["error Error(string)", "error Panic(uint256)"]).parseError(data);
    if (std) return std.name === "Error" ? String(std.args[0]) : `Panic(${std.args[0]})`;
  } catch {
    return undefined;
  }
  return undefined;
}

/** Digs the revert data out of an ethers or JSON-RPC error. */
export function revertDataOf(error: unknown): string | undefined {
  const seen = new Set<unknown>();
  const visit = (e: unknown): string | undefined => {
    if (!e || typeof e !== "object" || seen.has(e)) return undefined;
    seen.add(e);
    const o = e as Record<string, unknown>;
    if (typeof o.data === "string" && /^0x[0-9a-fA-F]*$/.test(o.data) && o.data.length >= 10) return o.data;
    for (const key of ["error", "info", "cause", "data"]) {
      const found = visit(o[key]);
      if (found) return found;
    }
    return undefined;
  };
  return visit(error);
}

const eventsByTopic = new WeakMap<Interface, Map<string, EventFragment>>();

/**
 * A log decoded by one of these interfaces, or null when none of its events has the log's topic: what
 * `Interface.parseLog` answers (and it throws, as that does, on data that does not decode). `parseLog` finds the event
 * by recomputing every event's topic hash, a keccak each, on every call; the topics here are computed once.
 */
export function parseEventLog(
  iface: Interface,
  log: { topics: readonly string[]; data: string },
): LogDescription | null {
  let events = eventsByTopic.get(iface);
  if (!events) {
    const found = new Map<string, EventFragment>();
    iface.forEachEvent((event) => found.set(event.topicHash, event));
    eventsByTopic.set(iface, (events = found));
  }
  const topic = log.topics[0]?.toLowerCase();
  const event = topic === undefined ? undefined : events.get(topic);
  if (!event || event.anonymous) return null;
  return new LogDescription(event, topic, iface.decodeEventLog(event, log.data, log.topics));
}
