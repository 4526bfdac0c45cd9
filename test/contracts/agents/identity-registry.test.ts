import { expect } from "chai";
import hre from "hardhat";
import { loadFixture, time } from "@nomicfoundation/hardhat-network-helpers";
import type { Interface, ContractTransactionReceipt, ContractTransactionResponse } from "ethers";
import type { IdentityRegistry } from "../../../typechain-types";
import {
  AGENT_URI,
  agentFixture,
  agentWalletDomain,
  AGENT_WALLET_SET_TYPES,
  identityFixture,
  signAgentWallet,
} from "./erc8004-helpers";

const { ethers } = hre;

/** The contract's ABI as an untyped ethers Interface, so that arbitrary signatures can be looked up. */
function abiOf(contract: { interface: unknown }): Interface {
  return contract.interface as Interface;
}

const WALLET_KEY = "agentWallet";
const MAX_DEADLINE_DELAY = 300n;

async function receiptOf(tx: Promise<ContractTransactionResponse>): Promise<ContractTransactionReceipt> {
  const receipt = await (await tx).wait();
  if (!receipt) throw new Error("no receipt");
  return receipt;
}

/** Names of the registry's events in the receipt, in log order. */
function eventNames(identity: IdentityRegistry, receipt: ContractTransactionReceipt): string[] {
  return receipt.logs.map((log) => identity.interface.parseLog(log)?.name ?? `unknown@${log.address}`);
}

/** Timestamp the next mined block will have (pinned with setNextBlockTimestamp by the caller). */
async function pinNextTimestamp(offset = 100n): Promise<bigint> {
  const t = BigInt(await time.latest()) + offset;
  await time.setNextBlockTimestamp(t);
  return t;
}

describe("IdentityRegistry (ERC-8004)", function () {
  describe("deployment", function () {
    it("is the ERC-721 'AgentIdentity' / 'AGENT', version 2.0.0", async function () {
      const { identity } = await loadFixture(identityFixture);
      expect(await identity.name()).to.equal("AgentIdentity");
      expect(await identity.symbol()).to.equal("AGENT");
      expect(await identity.getVersion()).to.equal("2.0.0");
    });

    it("exposes the EIP-712 domain ERC8004IdentityRegistry / 1 (ERC-5267)", async function () {
      const { identity } = await loadFixture(identityFixture);
      const domain = await identity.eip712Domain();
      const { chainId } = await ethers.provider.getNetwork();
      expect(domain.fields).to.equal("0x0f");
      expect(domain.name).to.equal("ERC8004IdentityRegistry");
      expect(domain.version).to.equal("1");
      expect(domain.chainId).to.equal(chainId);
      expect(domain.verifyingContract).to.equal(await identity.getAddress());
      expect(domain.salt).to.equal(ethers.ZeroHash);
      expect(domain.extensions).to.deep.equal([]);
    });

    it("supports ERC-165, ERC-721, ERC-721 metadata and ERC-4906 only", async function () {
      const { identity } = await loadFixture(identityFixture);
      for (const id of ["0x01ffc9a7", "0x80ac58cd", "0x5b5e139f", "0x49064906"]) {
        expect(await identity.supportsInterface(id), id).to.equal(true);
      }
      expect(await identity.supportsInterface("0x780e9d63")).to.equal(false); // ERC721Enumerable
      expect(await identity.supportsInterface("0xffffffff")).to.equal(false);
    });
  });

  describe("register", function () {
    it("numbers agents from 0 across the three overloads and returns the id", async function () {
      const { identity, alice, bob } = await loadFixture(identityFixture);
      expect(await identity.connect(alice)["register()"].staticCall()).to.equal(0n);
      await identity.connect(alice)["register()"]();
      expect(await identity.connect(bob)["register(string)"].staticCall("ipfs://b")).to.equal(1n);
      await identity.connect(bob)["register(string)"]("ipfs://b");
      expect(await identity.connect(alice)["register(string,(string,bytes)[])"].staticCall("ipfs://c", [])).to.equal(2n);
      await identity.connect(alice)["register(string,(string,bytes)[])"]("ipfs://c", []);
      expect(await identity.ownerOf(0n)).to.equal(alice.address);
      expect(await identity.ownerOf(1n)).to.equal(bob.address);
      expect(await identity.ownerOf(2n)).to.equal(alice.address);
      expect(await identity.balanceOf(alice.address)).to.equal(2n);
      await expect(identity.ownerOf(3n)).to.be.revertedWithCustomError(identity, "ERC721NonexistentToken").withArgs(3n);
    });

    it("register(string) mints, sets the URI and records the caller as agent wallet", async function () {
      const { identity, alice } = await loadFixture(identityFixture);
      const tx = identity.connect(alice)["register(string)"](AGENT_URI);
      await expect(tx).to.emit(identity, "Transfer").withArgs(ethers.ZeroAddress, alice.address, 0n);
      await expect(tx).to.emit(identity, "MetadataUpdate").withArgs(0n);
      await expect(tx).to.emit(identity, "Registered").withArgs(0n, AGENT_URI, alice.address);
      await expect(tx)
        .to.emit(identity, "MetadataSet")
        .withArgs(0n, WALLET_KEY, WALLET_KEY, alice.address.toLowerCase());
      expect(await identity.tokenURI(0n)).to.equal(AGENT_URI);
      expect(await identity.getAgentWallet(0n)).to.equal(alice.address);
      // The reserved key reads back as the 20-byte packed address.
      expect(await identity.getMetadata(0n, WALLET_KEY)).to.equal(alice.address.toLowerCase());
    });

    it("emits Transfer, MetadataUpdate, Registered, MetadataSet(agentWallet) in this order", async function () {
      const { identity, alice } = await loadFixture(identityFixture);
      const receipt = await receiptOf(identity.connect(alice)["register(string)"](AGENT_URI));
      expect(eventNames(identity, receipt)).to.deep.equal(["Transfer", "MetadataUpdate", "Registered", "MetadataSet"]);
      // The MetadataSet topic is keccak256("agentWallet").
      expect(receipt.logs[3].topics[2]).to.equal(ethers.id(WALLET_KEY));
      expect(receipt.logs.every((log) => log.address === identity.target)).to.equal(true);
    });

    it("register() stores no URI: tokenURI is empty, Registered carries '' and no MetadataUpdate is emitted", async function () {
      const { identity, alice } = await loadFixture(identityFixture);
      const tx = identity.connect(alice)["register()"]();
      await expect(tx).to.emit(identity, "Registered").withArgs(0n, "", alice.address);
      await expect(tx).to.not.emit(identity, "MetadataUpdate");
      const receipt = await receiptOf(tx);
      expect(eventNames(identity, receipt)).to.deep.equal(["Transfer", "Registered", "MetadataSet"]);
      expect(await identity.tokenURI(0n)).to.equal("");
      expect(await identity.getAgentWallet(0n)).to.equal(alice.address);
    });

    it("register('') does set an (empty) URI and emits MetadataUpdate, like the reference", async function () {
      const { identity, alice } = await loadFixture(identityFixture);
      const receipt = await receiptOf(identity.connect(alice)["register(string)"](""));
      expect(eventNames(identity, receipt)).to.deep.equal(["Transfer", "MetadataUpdate", "Registered", "MetadataSet"]);
      expect(await identity.tokenURI(0n)).to.equal("");
    });

    it("register(string, entries) stores each entry and emits MetadataSet after the agentWallet one", async function () {
      const { identity, alice } = await loadFixture(identityFixture);
      const entries = [
        { metadataKey: "name", metadataValue: ethers.toUtf8Bytes("Weather Bot") },
        { metadataKey: "paymentAddress", metadataValue: "0x742d35cc6634c0532925a3b844bc9e7595f0beb7" },
        { metadataKey: "", metadataValue: "0x01" },
      ];
      const tx = identity.connect(alice)["register(string,(string,bytes)[])"](AGENT_URI, entries);
      await expect(tx).to.emit(identity, "MetadataSet").withArgs(0n, "name", "name", ethers.hexlify(entries[0].metadataValue));
      await expect(tx)
        .to.emit(identity, "MetadataSet")
        .withArgs(0n, "paymentAddress", "paymentAddress", entries[1].metadataValue);
      const receipt = await receiptOf(tx);
      expect(eventNames(identity, receipt)).to.deep.equal([
        "Transfer",
        "MetadataUpdate",
        "Registered",
        "MetadataSet",
        "MetadataSet",
        "MetadataSet",
        "MetadataSet",
      ]);
      const keys = receipt.logs.slice(3).map((log) => identity.interface.parseLog(log)!.args.metadataKey as string);
      expect(keys).to.deep.equal([WALLET_KEY, "name", "paymentAddress", ""]);
      expect(await identity.getMetadata(0n, "name")).to.equal(ethers.hexlify(entries[0].metadataValue));
      expect(await identity.getMetadata(0n, "paymentAddress")).to.equal(entries[1].metadataValue);
      expect(await identity.getMetadata(0n, "")).to.equal("0x01");
      expect(await identity.getAgentWallet(0n)).to.equal(alice.address);
      expect(await identity.tokenURI(0n)).to.equal(AGENT_URI);
    });

    it("a later entry with the same key wins", async function () {
      const { identity, alice } = await loadFixture(identityFixture);
      await identity.connect(alice)["register(string,(string,bytes)[])"](AGENT_URI, [
        { metadataKey: "k", metadataValue: "0x01" },
        { metadataKey: "k", metadataValue: "0x02" },
      ]);
      expect(await identity.getMetadata(0n, "k")).to.equal("0x02");
    });

    it("refuses the reserved key 'agentWallet' anywhere in the entries ('reserved key'); nothing is registered", async function () {
      const { identity, alice } = await loadFixture(identityFixture);
      await expect(
        identity.connect(alice)["register(string,(string,bytes)[])"](AGENT_URI, [
          { metadataKey: "name", metadataValue: "0x01" },
          { metadataKey: WALLET_KEY, metadataValue: alice.address },
        ]),
      ).to.be.revertedWith("reserved key");
      expect(await identity.balanceOf(alice.address)).to.equal(0n);
      // The id was not consumed.
      expect(await identity.connect(alice)["register()"].staticCall()).to.equal(0n);
    });

    it("the reserved-key check is exact (case and spelling matter)", async function () {
      const { identity, alice } = await loadFixture(identityFixture);
      await identity.connect(alice)["register(string,(string,bytes)[])"](AGENT_URI, [
        { metadataKey: "AgentWallet", metadataValue: "0x01" },
        { metadataKey: "agentWallet ", metadataValue: "0x02" },
      ]);
      expect(await identity.getMetadata(0n, "AgentWallet")).to.equal("0x01");
      expect(await identity.getAgentWallet(0n)).to.equal(alice.address);
    });

    describe("contract registrants (ERC-721 receiver check, as _safeMint)", function () {
      async function registrarFixture() {
        const base = await identityFixture();
        const registrar = await ethers.deployContract("AgentRegistrarMock", [await base.identity.getAddress()]);
        return { ...base, registrar };
      }

      it("a receiving contract registers; the check runs after URI, wallet and events are in place", async function () {
        const { identity, registrar } = await loadFixture(registrarFixture);
        const receipt = await receiptOf(registrar.registerAgent(AGENT_URI));
        expect(await identity.ownerOf(0n)).to.equal(registrar.target);
        expect(await identity.getAgentWallet(0n)).to.equal(registrar.target);
        expect(await registrar.callbacks()).to.equal(1n);
        expect(await registrar.seenTokenId()).to.equal(0n);
        expect(await registrar.seenTokenURI()).to.equal(AGENT_URI);
        expect(await registrar.seenAgentWallet()).to.equal(registrar.target);
        expect(eventNames(identity, receipt)).to.deep.equal(["Transfer", "MetadataUpdate", "Registered", "MetadataSet"]);
        await registrar.registerAgentWithoutURI();
        expect(await registrar.seenTokenId()).to.equal(1n);
        expect(await registrar.callbacks()).to.equal(2n);
      });

      it("a contract answering with the wrong value is refused with ERC721InvalidReceiver", async function () {
        const { identity, registrar } = await loadFixture(registrarFixture);
        await registrar.setMode(1); // WrongMagic
        await expect(registrar.registerAgent(AGENT_URI))
          .to.be.revertedWithCustomError(identity, "ERC721InvalidReceiver")
          .withArgs(registrar.target);
        await registrar.setMode(3); // RevertEmpty
        await expect(registrar.registerAgentWithoutURI())
          .to.be.revertedWithCustomError(identity, "ERC721InvalidReceiver")
          .withArgs(registrar.target);
      });

      it("a receiver's revert reason bubbles up and nothing is registered", async function () {
        const { identity, registrar } = await loadFixture(registrarFixture);
        await registrar.setMode(2); // RevertWithReason
        await expect(registrar.registerAgent(AGENT_URI)).to.be.revertedWith("registrar refuses");
        expect(await identity.balanceOf(registrar.target)).to.equal(0n);
      });
    });
  });

  describe("metadata", function () {
    it("the owner sets a value: stored, MetadataSet with the key as topic and in clear", async function () {
      const { identity, alice, agentId } = await loadFixture(agentFixture);
      const tx = identity.connect(alice).setMetadata(agentId, "mcp", "0xc0ffee");
      await expect(tx).to.emit(identity, "MetadataSet").withArgs(agentId, "mcp", "mcp", "0xc0ffee");
      const receipt = await receiptOf(tx);
      expect(receipt.logs[0].topics[2]).to.equal(ethers.id("mcp"));
      expect(await identity.getMetadata(agentId, "mcp")).to.equal("0xc0ffee");
      await identity.connect(alice).setMetadata(agentId, "mcp", "0x");
      expect(await identity.getMetadata(agentId, "mcp")).to.equal("0x");
    });

    it("an operator (approved for all) and the approved address may set metadata", async function () {
      const { identity, operator, approved, agentId } = await loadFixture(agentFixture);
      await expect(identity.connect(operator).setMetadata(agentId, "a", "0x01"))
        .to.emit(identity, "MetadataSet")
        .withArgs(agentId, "a", "a", "0x01");
      await identity.connect(approved).setMetadata(agentId, "b", "0x02");
      expect(await identity.getMetadata(agentId, "a")).to.equal("0x01");
      expect(await identity.getMetadata(agentId, "b")).to.equal("0x02");
    });

    it("anyone else gets 'Not authorized' (checked before the reserved key)", async function () {
      const { identity, stranger, bob, agentId } = await loadFixture(agentFixture);
      await expect(identity.connect(stranger).setMetadata(agentId, "a", "0x01")).to.be.revertedWith("Not authorized");
      await expect(identity.connect(bob).setMetadata(agentId, WALLET_KEY, bob.address)).to.be.revertedWith(
        "Not authorized",
      );
    });

    it("the reserved key is refused even to the owner ('reserved key')", async function () {
      const { identity, alice, stranger, agentId } = await loadFixture(agentFixture);
      await expect(identity.connect(alice).setMetadata(agentId, WALLET_KEY, stranger.address)).to.be.revertedWith(
        "reserved key",
      );
      expect(await identity.getAgentWallet(agentId)).to.equal(alice.address);
    });

    it("an unknown agent reverts ERC721NonexistentToken", async function () {
      const { identity, alice } = await loadFixture(agentFixture);
      await expect(identity.connect(alice).setMetadata(7n, "a", "0x01"))
        .to.be.revertedWithCustomError(identity, "ERC721NonexistentToken")
        .withArgs(7n);
    });

    it("getMetadata returns empty bytes for unknown keys and unknown agents (no revert)", async function () {
      const { identity, agentId } = await loadFixture(agentFixture);
      expect(await identity.getMetadata(agentId, "nothing")).to.equal("0x");
      expect(await identity.getMetadata(42n, "name")).to.equal("0x");
      expect(await identity.getMetadata(42n, WALLET_KEY)).to.equal("0x");
    });

    it("values are per agent", async function () {
      const { identity, alice, bob, agentId } = await loadFixture(agentFixture);
      await identity.connect(bob)["register()"]();
      await identity.connect(alice).setMetadata(agentId, "k", "0xaa");
      await identity.connect(bob).setMetadata(1n, "k", "0xbb");
      expect(await identity.getMetadata(agentId, "k")).to.equal("0xaa");
      expect(await identity.getMetadata(1n, "k")).to.equal("0xbb");
    });
  });

  describe("setAgentURI", function () {
    it("the owner replaces the URI: MetadataUpdate then URIUpdated(agentId, uri, caller)", async function () {
      const { identity, alice, agentId } = await loadFixture(agentFixture);
      const tx = identity.connect(alice).setAgentURI(agentId, "ipfs://bafy-new");
      await expect(tx).to.emit(identity, "URIUpdated").withArgs(agentId, "ipfs://bafy-new", alice.address);
      await expect(tx).to.emit(identity, "MetadataUpdate").withArgs(agentId);
      expect(eventNames(identity, await receiptOf(tx))).to.deep.equal(["MetadataUpdate", "URIUpdated"]);
      expect(await identity.tokenURI(agentId)).to.equal("ipfs://bafy-new");
    });

    it("an operator and the approved address may set it; updatedBy is the caller", async function () {
      const { identity, operator, approved, agentId } = await loadFixture(agentFixture);
      await expect(identity.connect(operator).setAgentURI(agentId, "ipfs://op"))
        .to.emit(identity, "URIUpdated")
        .withArgs(agentId, "ipfs://op", operator.address);
      await expect(identity.connect(approved).setAgentURI(agentId, "data:application/json;base64,e30="))
        .to.emit(identity, "URIUpdated")
        .withArgs(agentId, "data:application/json;base64,e30=", approved.address);
      expect(await identity.tokenURI(agentId)).to.equal("data:application/json;base64,e30=");
    });

    it("sets a URI on an agent registered without one", async function () {
      const { identity, bob } = await loadFixture(agentFixture);
      await identity.connect(bob)["register()"]();
      await identity.connect(bob).setAgentURI(1n, "https://later.example/agent.json");
      expect(await identity.tokenURI(1n)).to.equal("https://later.example/agent.json");
    });

    it("refuses others ('Not authorized') and unknown agents (ERC721NonexistentToken)", async function () {
      const { identity, alice, stranger, agentId } = await loadFixture(agentFixture);
      await expect(identity.connect(stranger).setAgentURI(agentId, "ipfs://evil")).to.be.revertedWith("Not authorized");
      await expect(identity.connect(alice).setAgentURI(9n, "ipfs://x"))
        .to.be.revertedWithCustomError(identity, "ERC721NonexistentToken")
        .withArgs(9n);
      await expect(identity.tokenURI(9n)).to.be.revertedWithCustomError(identity, "ERC721NonexistentToken").withArgs(9n);
      expect(await identity.tokenURI(agentId)).to.equal(AGENT_URI);
    });
  });

  describe("agent wallet", function () {
    it("getAgentWallet is the zero address for an unknown agent (no revert)", async function () {
      const { identity } = await loadFixture(agentFixture);
      expect(await identity.getAgentWallet(99n)).to.equal(ethers.ZeroAddress);
    });

    it("setAgentWallet with the new wallet's EOA signature (EIP-712)", async function () {
      const { identity, alice, walletKey, agentId } = await loadFixture(agentFixture);
      const deadline = BigInt(await time.latest()) + 240n;
      const sig = await signAgentWallet(walletKey, identity, {
        agentId,
        newWallet: walletKey.address,
        owner: alice.address,
        deadline,
      });
      await expect(identity.connect(alice).setAgentWallet(agentId, walletKey.address, deadline, sig))
        .to.emit(identity, "MetadataSet")
        .withArgs(agentId, WALLET_KEY, WALLET_KEY, walletKey.address.toLowerCase());
      expect(await identity.getAgentWallet(agentId)).to.equal(walletKey.address);
      expect(await identity.getMetadata(agentId, WALLET_KEY)).to.equal(walletKey.address.toLowerCase());
    });

    it("the digest is the EIP-712 hash of AgentWalletSet(uint256 agentId,address newWallet,address owner,uint256 deadline)", async function () {
      const { identity, alice, walletKey, agentId } = await loadFixture(agentFixture);
      // Sign the hand-built digest with the raw key: proves type string, field order and domain, independently of
      // ethers' typed-data encoder.
      const domain = await agentWalletDomain(identity);
      const typeHash = ethers.id("AgentWalletSet(uint256 agentId,address newWallet,address owner,uint256 deadline)");
      const deadline = BigInt(await time.latest()) + 60n;
      const structHash = ethers.keccak256(
        ethers.AbiCoder.defaultAbiCoder().encode(
          ["bytes32", "uint256", "address", "address", "uint256"],
          [typeHash, agentId, walletKey.address, alice.address, deadline],
        ),
      );
      const domainSeparator = ethers.TypedDataEncoder.hashDomain(domain);
      expect(ethers.TypedDataEncoder.hashStruct("AgentWalletSet", AGENT_WALLET_SET_TYPES, {
        agentId,
        newWallet: walletKey.address,
        owner: alice.address,
        deadline,
      })).to.equal(structHash);
      const digest = ethers.keccak256(ethers.concat(["0x1901", domainSeparator, structHash]));
      // walletKey is Hardhat account #6; derive its key from the default mnemonic.
      const key = ethers.HDNodeWallet.fromPhrase(
        "test test test test test test test test test test test junk",
        undefined,
        "m/44'/60'/0'/0/6",
      );
      expect(key.address).to.equal(walletKey.address);
      const sig = key.signingKey.sign(digest).serialized;
      await identity.connect(alice).setAgentWallet(agentId, walletKey.address, deadline, sig);
      expect(await identity.getAgentWallet(agentId)).to.equal(walletKey.address);
    });

    it("an operator or the approved address may submit; the signed owner is the token owner, not the caller", async function () {
      const { identity, alice, operator, approved, walletKey, otherKey, agentId } = await loadFixture(agentFixture);
      const deadline = BigInt(await time.latest()) + 200n;
      const forOwner = await signAgentWallet(walletKey, identity, {
        agentId,
        newWallet: walletKey.address,
        owner: alice.address,
        deadline,
      });
      await identity.connect(operator).setAgentWallet(agentId, walletKey.address, deadline, forOwner);
      expect(await identity.getAgentWallet(agentId)).to.equal(walletKey.address);

      const forCaller = await signAgentWallet(otherKey, identity, {
        agentId,
        newWallet: otherKey.address,
        owner: approved.address,
        deadline,
      });
      await expect(
        identity.connect(approved).setAgentWallet(agentId, otherKey.address, deadline, forCaller),
      ).to.be.revertedWith("invalid wallet sig");
    });

    it("refuses a signature by anyone but the new wallet, or over other values or another domain", async function () {
      const { identity, alice, walletKey, otherKey, agentId } = await loadFixture(agentFixture);
      const deadline = BigInt(await time.latest()) + 200n;
      const good = { agentId, newWallet: walletKey.address, owner: alice.address, deadline };
      const cases: [string, string][] = [
        ["signed by another key", await signAgentWallet(otherKey, identity, good)],
        ["signed by the owner", await signAgentWallet(alice, identity, good)],
        ["another agentId", await signAgentWallet(walletKey, identity, { ...good, agentId: 1n })],
        ["another owner", await signAgentWallet(walletKey, identity, { ...good, owner: otherKey.address })],
        ["another deadline", await signAgentWallet(walletKey, identity, { ...good, deadline: deadline - 1n })],
        ["another newWallet", await signAgentWallet(walletKey, identity, { ...good, newWallet: otherKey.address })],
        ["another chain", await signAgentWallet(walletKey, identity, good, { chainId: 1n })],
        ["another contract", await signAgentWallet(walletKey, identity, good, { verifyingContract: otherKey.address })],
        ["another domain name", await signAgentWallet(walletKey, identity, good, { name: "ERC8004IdentityRegistry2" })],
        ["another version", await signAgentWallet(walletKey, identity, good, { version: "2" })],
        ["empty", "0x"],
        ["64-byte (ERC-2098 short)", ethers.Signature.from(await signAgentWallet(walletKey, identity, good)).compactSerialized],
      ];
      for (const [label, sig] of cases) {
        await expect(
          identity.connect(alice).setAgentWallet(agentId, walletKey.address, deadline, sig),
          label,
        ).to.be.revertedWith("invalid wallet sig");
      }
      // The unmodified signature works.
      await identity
        .connect(alice)
        .setAgentWallet(agentId, walletKey.address, deadline, await signAgentWallet(walletKey, identity, good));
      expect(await identity.getAgentWallet(agentId)).to.equal(walletKey.address);
    });

    it("has no nonce: the same signature can be used again until its deadline", async function () {
      const { identity, alice, walletKey, agentId } = await loadFixture(agentFixture);
      const deadline = BigInt(await time.latest()) + 200n;
      const sig = await signAgentWallet(walletKey, identity, {
        agentId,
        newWallet: walletKey.address,
        owner: alice.address,
        deadline,
      });
      await identity.connect(alice).setAgentWallet(agentId, walletKey.address, deadline, sig);
      await identity.connect(alice).unsetAgentWallet(agentId);
      await expect(identity.connect(alice).setAgentWallet(agentId, walletKey.address, deadline, sig))
        .to.emit(identity, "MetadataSet")
        .withArgs(agentId, WALLET_KEY, WALLET_KEY, walletKey.address.toLowerCase());
    });

    it("accepts an ERC-1271 contract wallet's signature, refuses a wrong one", async function () {
      const { identity, alice, walletKey, otherKey, agentId } = await loadFixture(agentFixture);
      const contractWallet = await ethers.deployContract("ERC1271WalletMock", [walletKey.address]);
      const deadline = BigInt(await time.latest()) + 200n;
      const message = { agentId, newWallet: await contractWallet.getAddress(), owner: alice.address, deadline };
      const wrong = await signAgentWallet(otherKey, identity, message);
      await expect(
        identity.connect(alice).setAgentWallet(agentId, contractWallet.target, deadline, wrong),
      ).to.be.revertedWith("invalid wallet sig");
      const good = await signAgentWallet(walletKey, identity, message);
      await expect(identity.connect(alice).setAgentWallet(agentId, contractWallet.target, deadline, good))
        .to.emit(identity, "MetadataSet")
        .withArgs(agentId, WALLET_KEY, WALLET_KEY, (contractWallet.target as string).toLowerCase());
      expect(await identity.getAgentWallet(agentId)).to.equal(contractWallet.target);
    });

    it("a contract without ERC-1271 cannot be made the wallet", async function () {
      const { identity, alice, walletKey, agentId } = await loadFixture(agentFixture);
      const plain = await ethers.deployContract("PlainERC20", [alice.address, 1n]);
      const deadline = BigInt(await time.latest()) + 200n;
      const sig = await signAgentWallet(walletKey, identity, {
        agentId,
        newWallet: await plain.getAddress(),
        owner: alice.address,
        deadline,
      });
      await expect(identity.connect(alice).setAgentWallet(agentId, plain.target, deadline, sig)).to.be.revertedWith(
        "invalid wallet sig",
      );
    });

    it("refuses the zero wallet ('bad wallet'), checked after authorization and before the deadline", async function () {
      const { identity, alice, stranger, agentId } = await loadFixture(agentFixture);
      await expect(identity.connect(alice).setAgentWallet(agentId, ethers.ZeroAddress, 0n, "0x")).to.be.revertedWith(
        "bad wallet",
      );
      await expect(identity.connect(stranger).setAgentWallet(agentId, ethers.ZeroAddress, 0n, "0x")).to.be.revertedWith(
        "Not authorized",
      );
    });

    describe("deadline window (block.timestamp <= deadline <= block.timestamp + 5 minutes)", function () {
      async function attempt(offsetFromBlock: bigint) {
        const { identity, alice, walletKey, agentId } = await loadFixture(agentFixture);
        const blockTime = BigInt(await time.latest()) + 100n;
        const deadline = blockTime + offsetFromBlock;
        const sig = await signAgentWallet(walletKey, identity, {
          agentId,
          newWallet: walletKey.address,
          owner: alice.address,
          deadline,
        });
        await time.setNextBlockTimestamp(blockTime);
        // Fixed gas limit: no estimate, the transaction itself is mined in the pinned block.
        return {
          identity,
          walletKey,
          agentId,
          tx: identity.connect(alice).setAgentWallet(agentId, walletKey.address, deadline, sig, { gasLimit: 500_000n }),
        };
      }

      it("deadline = block time + 300 s is accepted", async function () {
        const { identity, walletKey, agentId, tx } = await attempt(MAX_DEADLINE_DELAY);
        await expect(tx).to.emit(identity, "MetadataSet");
        expect(await identity.getAgentWallet(agentId)).to.equal(walletKey.address);
      });

      it("deadline = block time is accepted", async function () {
        const { identity, walletKey, agentId, tx } = await attempt(0n);
        await expect(tx).to.emit(identity, "MetadataSet");
        expect(await identity.getAgentWallet(agentId)).to.equal(walletKey.address);
      });

      it("deadline = block time + 301 s is refused ('deadline too far')", async function () {
        const { tx } = await attempt(MAX_DEADLINE_DELAY + 1n);
        await expect(tx).to.be.revertedWith("deadline too far");
      });

      it("deadline = block time - 1 s is refused ('expired')", async function () {
        const { tx } = await attempt(-1n);
        await expect(tx).to.be.revertedWith("expired");
      });

      it("the deadline is checked before the signature", async function () {
        const { identity, alice, walletKey, agentId } = await loadFixture(agentFixture);
        const t = await pinNextTimestamp();
        await expect(
          identity.connect(alice).setAgentWallet(agentId, walletKey.address, t - 1n, "0x", { gasLimit: 500_000n }),
        ).to.be.revertedWith("expired");
      });
    });

    it("only the owner, an operator or the approved address ('Not authorized'); unknown agent reverts", async function () {
      const { identity, alice, stranger, walletKey, agentId } = await loadFixture(agentFixture);
      const deadline = BigInt(await time.latest()) + 200n;
      const sig = await signAgentWallet(walletKey, identity, {
        agentId,
        newWallet: walletKey.address,
        owner: alice.address,
        deadline,
      });
      await expect(
        identity.connect(stranger).setAgentWallet(agentId, walletKey.address, deadline, sig),
      ).to.be.revertedWith("Not authorized");
      // The new wallet itself is not authorized either: it consents, the owner acts.
      await expect(
        identity.connect(walletKey).setAgentWallet(agentId, walletKey.address, deadline, sig),
      ).to.be.revertedWith("Not authorized");
      await expect(identity.connect(alice).setAgentWallet(5n, walletKey.address, deadline, sig))
        .to.be.revertedWithCustomError(identity, "ERC721NonexistentToken")
        .withArgs(5n);
    });

    it("unsetAgentWallet clears it (MetadataSet with empty value); operator and approved may too", async function () {
      const { identity, alice, operator, approved, bob, agentId } = await loadFixture(agentFixture);
      await expect(identity.connect(alice).unsetAgentWallet(agentId))
        .to.emit(identity, "MetadataSet")
        .withArgs(agentId, WALLET_KEY, WALLET_KEY, "0x");
      expect(await identity.getAgentWallet(agentId)).to.equal(ethers.ZeroAddress);
      expect(await identity.getMetadata(agentId, WALLET_KEY)).to.equal("0x");
      // Clearing an empty wallet is allowed and still emits.
      await expect(identity.connect(operator).unsetAgentWallet(agentId))
        .to.emit(identity, "MetadataSet")
        .withArgs(agentId, WALLET_KEY, WALLET_KEY, "0x");
      await identity.connect(approved).unsetAgentWallet(agentId);
      await expect(identity.connect(bob).unsetAgentWallet(agentId)).to.be.revertedWith("Not authorized");
      await expect(identity.connect(alice).unsetAgentWallet(3n))
        .to.be.revertedWithCustomError(identity, "ERC721NonexistentToken")
        .withArgs(3n);
    });
  });

  describe("transfers clear the agent wallet", function () {
    async function walletSetFixture() {
      const base = await agentFixture();
      const { identity, alice, walletKey, agentId } = base;
      const deadline = BigInt(await time.latest()) + 200n;
      const sig = await signAgentWallet(walletKey, identity, {
        agentId,
        newWallet: walletKey.address,
        owner: alice.address,
        deadline,
      });
      await (await identity.connect(alice).setAgentWallet(agentId, walletKey.address, deadline, sig)).wait();
      await (await identity.connect(alice).setMetadata(agentId, "name", "0x01")).wait();
      return base;
    }

    const transfers: [string, (f: Awaited<ReturnType<typeof walletSetFixture>>) => Promise<ContractTransactionResponse>][] = [
      ["transferFrom by the owner", (f) => f.identity.connect(f.alice).transferFrom(f.alice.address, f.bob.address, f.agentId)],
      [
        "safeTransferFrom(from,to,id) by the owner",
        (f) => f.identity.connect(f.alice)["safeTransferFrom(address,address,uint256)"](f.alice.address, f.bob.address, f.agentId),
      ],
      [
        "safeTransferFrom(from,to,id,data) by an operator",
        (f) =>
          f.identity
            .connect(f.operator)
            ["safeTransferFrom(address,address,uint256,bytes)"](f.alice.address, f.bob.address, f.agentId, "0x1234"),
      ],
      ["transferFrom by the approved address", (f) => f.identity.connect(f.approved).transferFrom(f.alice.address, f.bob.address, f.agentId)],
    ];

    for (const [label, send] of transfers) {
      it(`${label}: MetadataSet(agentWallet, '') before Transfer; URI and other metadata stay`, async function () {
        const f = await loadFixture(walletSetFixture);
        const { identity, alice, bob, agentId } = f;
        expect(await identity.getAgentWallet(agentId)).to.equal(f.walletKey.address);
        const tx = send(f);
        await expect(tx).to.emit(identity, "MetadataSet").withArgs(agentId, WALLET_KEY, WALLET_KEY, "0x");
        await expect(tx).to.emit(identity, "Transfer").withArgs(alice.address, bob.address, agentId);
        const names = eventNames(identity, await receiptOf(tx));
        expect(names.indexOf("MetadataSet")).to.be.lessThan(names.indexOf("Transfer"));
        expect(names.filter((n) => n === "MetadataSet")).to.have.length(1);
        expect(await identity.ownerOf(agentId)).to.equal(bob.address);
        expect(await identity.getAgentWallet(agentId)).to.equal(ethers.ZeroAddress);
        expect(await identity.getMetadata(agentId, WALLET_KEY)).to.equal("0x");
        expect(await identity.getMetadata(agentId, "name")).to.equal("0x01");
        expect(await identity.tokenURI(agentId)).to.equal(AGENT_URI);
      });
    }

    it("a transfer to oneself clears it too (reference behaviour)", async function () {
      const { identity, alice, agentId } = await loadFixture(walletSetFixture);
      await expect(identity.connect(alice).transferFrom(alice.address, alice.address, agentId))
        .to.emit(identity, "MetadataSet")
        .withArgs(agentId, WALLET_KEY, WALLET_KEY, "0x");
      expect(await identity.getAgentWallet(agentId)).to.equal(ethers.ZeroAddress);
    });

    it("a transfer of an agent whose wallet is already empty still emits the clearing MetadataSet", async function () {
      const { identity, alice, bob, agentId } = await loadFixture(walletSetFixture);
      await identity.connect(alice).unsetAgentWallet(agentId);
      await expect(identity.connect(alice).transferFrom(alice.address, bob.address, agentId))
        .to.emit(identity, "MetadataSet")
        .withArgs(agentId, WALLET_KEY, WALLET_KEY, "0x");
    });

    it("a refused transfer changes nothing", async function () {
      const { identity, alice, stranger, agentId, walletKey } = await loadFixture(walletSetFixture);
      await expect(identity.connect(stranger).transferFrom(alice.address, stranger.address, agentId))
        .to.be.revertedWithCustomError(identity, "ERC721InsufficientApproval")
        .withArgs(stranger.address, agentId);
      expect(await identity.getAgentWallet(agentId)).to.equal(walletKey.address);
    });

    it("after a transfer the new owner (not the old one, nor the old approved) controls the agent", async function () {
      const { identity, alice, bob, approved, walletKey, agentId } = await loadFixture(walletSetFixture);
      await identity.connect(alice).transferFrom(alice.address, bob.address, agentId);
      await expect(identity.connect(alice).setMetadata(agentId, "x", "0x01")).to.be.revertedWith("Not authorized");
      await expect(identity.connect(approved).setAgentURI(agentId, "ipfs://x")).to.be.revertedWith("Not authorized");
      await identity.connect(bob).setMetadata(agentId, "x", "0x02");

      const deadline = BigInt(await time.latest()) + 200n;
      const staleOwner = await signAgentWallet(walletKey, identity, {
        agentId,
        newWallet: walletKey.address,
        owner: alice.address,
        deadline,
      });
      await expect(
        identity.connect(bob).setAgentWallet(agentId, walletKey.address, deadline, staleOwner),
      ).to.be.revertedWith("invalid wallet sig");
      const fresh = await signAgentWallet(walletKey, identity, {
        agentId,
        newWallet: walletKey.address,
        owner: bob.address,
        deadline,
      });
      await identity.connect(bob).setAgentWallet(agentId, walletKey.address, deadline, fresh);
      expect(await identity.getAgentWallet(agentId)).to.equal(walletKey.address);
    });

    it("safeTransferFrom to a receiving contract clears the wallet; the receiver sees it cleared", async function () {
      const { identity, alice, agentId } = await loadFixture(walletSetFixture);
      const registrar = await ethers.deployContract("AgentRegistrarMock", [await identity.getAddress()]);
      await identity.connect(alice)["safeTransferFrom(address,address,uint256)"](alice.address, registrar.target, agentId);
      expect(await registrar.seenAgentWallet()).to.equal(ethers.ZeroAddress);
      expect(await identity.ownerOf(agentId)).to.equal(registrar.target);
    });

    it("has no burn", async function () {
      const { identity } = await loadFixture(identityFixture);
      expect(abiOf(identity).getFunction("burn")).to.equal(null);
    });
  });

  describe("isAuthorizedOrOwner", function () {
    it("is true for the owner, an operator and the approved address; false otherwise", async function () {
      const { identity, alice, operator, approved, stranger, agentId } = await loadFixture(agentFixture);
      expect(await identity.isAuthorizedOrOwner(alice.address, agentId)).to.equal(true);
      expect(await identity.isAuthorizedOrOwner(operator.address, agentId)).to.equal(true);
      expect(await identity.isAuthorizedOrOwner(approved.address, agentId)).to.equal(true);
      expect(await identity.isAuthorizedOrOwner(stranger.address, agentId)).to.equal(false);
      expect(await identity.isAuthorizedOrOwner(ethers.ZeroAddress, agentId)).to.equal(false);
      await identity.connect(alice).setApprovalForAll(operator.address, false);
      expect(await identity.isAuthorizedOrOwner(operator.address, agentId)).to.equal(false);
    });

    it("reverts ERC721NonexistentToken for an unknown agent", async function () {
      const { identity, alice } = await loadFixture(agentFixture);
      await expect(identity.isAuthorizedOrOwner(alice.address, 1n))
        .to.be.revertedWithCustomError(identity, "ERC721NonexistentToken")
        .withArgs(1n);
    });
  });

  describe("ABI identity with the ERC-8004 reference (IdentityRegistryUpgradeable 2.0.0)", function () {
    // Copied from the reference's ABI (its IdentityRegistry ABI file, plus isAuthorizedOrOwner from the source), minus
    // the proxy/ownership functions and events (initialize, owner, transferOwnership, renounceOwnership,
    // proxiableUUID, UPGRADE_INTERFACE_VERSION, upgradeToAndCall; Initialized, OwnershipTransferred, Upgraded) that a
    // plain deployment does not have.
    const FUNCTIONS = [
      "function approve(address to, uint256 tokenId)",
      "function balanceOf(address owner) view returns (uint256)",
      "function eip712Domain() view returns (bytes1 fields, string name, string version, uint256 chainId, address verifyingContract, bytes32 salt, uint256[] extensions)",
      "function getAgentWallet(uint256 agentId) view returns (address)",
      "function getApproved(uint256 tokenId) view returns (address)",
      "function getMetadata(uint256 agentId, string metadataKey) view returns (bytes)",
      "function getVersion() pure returns (string)",
      "function isApprovedForAll(address owner, address operator) view returns (bool)",
      "function isAuthorizedOrOwner(address spender, uint256 agentId) view returns (bool)",
      "function name() view returns (string)",
      "function ownerOf(uint256 tokenId) view returns (address)",
      "function register() returns (uint256 agentId)",
      "function register(string agentURI, (string metadataKey, bytes metadataValue)[] metadata) returns (uint256 agentId)",
      "function register(string agentURI) returns (uint256 agentId)",
      "function safeTransferFrom(address from, address to, uint256 tokenId, bytes data)",
      "function safeTransferFrom(address from, address to, uint256 tokenId)",
      "function setAgentURI(uint256 agentId, string newURI)",
      "function setAgentWallet(uint256 agentId, address newWallet, uint256 deadline, bytes signature)",
      "function setApprovalForAll(address operator, bool approved)",
      "function setMetadata(uint256 agentId, string metadataKey, bytes metadataValue)",
      "function supportsInterface(bytes4 interfaceId) view returns (bool)",
      "function symbol() view returns (string)",
      "function tokenURI(uint256 tokenId) view returns (string)",
      "function transferFrom(address from, address to, uint256 tokenId)",
      "function unsetAgentWallet(uint256 agentId)",
    ];
    const EVENTS = [
      "event Approval(address indexed owner, address indexed approved, uint256 indexed tokenId)",
      "event ApprovalForAll(address indexed owner, address indexed operator, bool approved)",
      "event BatchMetadataUpdate(uint256 _fromTokenId, uint256 _toTokenId)",
      "event EIP712DomainChanged()",
      "event MetadataSet(uint256 indexed agentId, string indexed indexedMetadataKey, string metadataKey, bytes metadataValue)",
      "event MetadataUpdate(uint256 _tokenId)",
      "event Registered(uint256 indexed agentId, string agentURI, address indexed owner)",
      "event Transfer(address indexed from, address indexed to, uint256 indexed tokenId)",
      "event URIUpdated(uint256 indexed agentId, string newURI, address indexed updatedBy)",
    ];
    // Canonical signature -> selector/topic, written out so that a change of a parameter type is caught even if the
    // human-readable lists above were edited along with the contract.
    const SELECTORS: Record<string, string> = {
      "register()": "0x1aa3a008",
      "register(string)": "0xf2c298be",
      "register(string,(string,bytes)[])": "0x8ea42286",
      "getMetadata(uint256,string)": "0xcb4799f2",
      "setMetadata(uint256,string,bytes)": "0x466648da",
      "setAgentURI(uint256,string)": "0x0af28bd3",
      "getAgentWallet(uint256)": "0x00339509",
      "setAgentWallet(uint256,address,uint256,bytes)": "0x2d1ef5ae",
      "unsetAgentWallet(uint256)": "0x3fddcf19",
      "isAuthorizedOrOwner(address,uint256)": "0xd95e72be",
      "getVersion()": "0x0d8e6e2c",
    };
    const TOPICS: Record<string, string> = {
      "Registered(uint256,string,address)": "0xca52e62c367d81bb2e328eb795f7c7ba24afb478408a26c0e201d155c449bc4a",
      "MetadataSet(uint256,string,string,bytes)": "0x2c149ed548c6d2993cd73efe187df6eccabe4538091b33adbd25fafdb8a1468b",
      "URIUpdated(uint256,string,address)": "0x3a2c7fffc2cba7582c690e3b82c453ea02a308326a98a3ad7576c606336409fb",
    };

    it("has exactly the reference's functions, with the same names, types, mutability and return values", async function () {
      const { identity } = await loadFixture(identityFixture);
      const ours: string[] = [];
      identity.interface.forEachFunction((f) => ours.push(f.format("full")));
      expect([...ours].sort()).to.deep.equal([...FUNCTIONS].sort());
    });

    it("has exactly the reference's events, with the same indexed flags and order", async function () {
      const { identity } = await loadFixture(identityFixture);
      const ours: string[] = [];
      identity.interface.forEachEvent((e) => ours.push(e.format("full")));
      expect([...ours].sort()).to.deep.equal([...EVENTS].sort());
    });

    it("selectors and topics match the reference signatures", async function () {
      const { identity } = await loadFixture(identityFixture);
      for (const [sig, selector] of Object.entries(SELECTORS)) {
        expect(ethers.id(sig).slice(0, 10), sig).to.equal(selector);
        const fragment = abiOf(identity).getFunction(sig);
        expect(fragment, sig).to.not.equal(null);
        expect(fragment!.selector, sig).to.equal(selector);
      }
      for (const [sig, topic] of Object.entries(TOPICS)) {
        const fragment = abiOf(identity).getEvent(sig);
        expect(fragment, sig).to.not.equal(null);
        expect(ethers.id(sig), sig).to.equal(topic);
        expect(fragment!.topicHash, sig).to.equal(topic);
      }
    });
  });
});
