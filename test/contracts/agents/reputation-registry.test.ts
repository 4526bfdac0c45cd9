import { expect } from "chai";
import hre from "hardhat";
import { loadFixture, time } from "@nomicfoundation/hardhat-network-helpers";
import type { Interface, Signer } from "ethers";
import type { ReputationRegistry } from "../../../typechain-types";
import { reputationFixture, signAgentWallet } from "./erc8004-helpers";

const { ethers } = hre;

/** The contract's ABI as an untyped ethers Interface, so that arbitrary signatures can be looked up. */
function abiOf(contract: { interface: unknown }): Interface {
  return contract.interface as Interface;
}

const MAX_ABS_VALUE = 10n ** 38n;
const HASH = ethers.id("feedback document");

interface Rating {
  value?: bigint;
  decimals?: number;
  tag1?: string;
  tag2?: string;
  endpoint?: string;
  uri?: string;
  hash?: string;
}

/** giveFeedback by `client` with defaults for everything not given. */
function give(reputation: ReputationRegistry, client: Signer, agentId: bigint, r: Rating = {}) {
  return reputation
    .connect(client)
    .giveFeedback(
      agentId,
      r.value ?? 80n,
      r.decimals ?? 0,
      r.tag1 ?? "",
      r.tag2 ?? "",
      r.endpoint ?? "",
      r.uri ?? "",
      r.hash ?? ethers.ZeroHash,
    );
}

/**
 * readAllFeedback's result as a plain object. Positional on purpose: in ethers v6 `result.values` is Result's own
 * method, not the third output named "values".
 */
async function readAll(reputation: ReputationRegistry, ...args: Parameters<ReputationRegistry["readAllFeedback"]>) {
  const [clients, feedbackIndexes, values, valueDecimals, tag1s, tag2s, revokedStatuses] =
    await reputation.readAllFeedback(...args);
  return {
    clients: [...clients],
    feedbackIndexes: [...feedbackIndexes],
    values: [...values],
    valueDecimals: [...valueDecimals],
    tag1s: [...tag1s],
    tag2s: [...tag2s],
    revokedStatuses: [...revokedStatuses],
  };
}

async function giveAll(reputation: ReputationRegistry, agentId: bigint, ratings: [Signer, Rating][]) {
  for (const [client, r] of ratings) await (await give(reputation, client, agentId, r)).wait();
}

describe("ReputationRegistry (ERC-8004)", function () {
  describe("deployment", function () {
    it("is bound to the identity registry given to the constructor; version 2.0.0", async function () {
      const { reputation, identity } = await loadFixture(reputationFixture);
      expect(await reputation.getIdentityRegistry()).to.equal(await identity.getAddress());
      expect(await reputation.getVersion()).to.equal("2.0.0");
    });

    it("refuses a zero identity registry ('bad identity')", async function () {
      await expect(ethers.deployContract("ReputationRegistry", [ethers.ZeroAddress])).to.be.revertedWith(
        "bad identity",
      );
    });
  });

  describe("giveFeedback", function () {
    it("stores the rating at index 1 and emits NewFeedback with every argument", async function () {
      const { reputation, client1, agentId } = await loadFixture(reputationFixture);
      const tx = give(reputation, client1, agentId, {
        value: 9977n,
        decimals: 2,
        tag1: "uptime",
        tag2: "30d",
        endpoint: "https://agent.example/mcp",
        uri: "ipfs://bafy-feedback",
        hash: HASH,
      });
      await expect(tx)
        .to.emit(reputation, "NewFeedback")
        .withArgs(
          agentId,
          client1.address,
          1n,
          9977n,
          2,
          "uptime",
          "uptime",
          "30d",
          "https://agent.example/mcp",
          "ipfs://bafy-feedback",
          HASH,
        );
      const receipt = await (await tx).wait();
      // topics: signature, agentId, clientAddress, keccak256(tag1)
      expect(receipt!.logs[0].topics[3]).to.equal(ethers.id("uptime"));
      expect(await reputation.readFeedback(agentId, client1.address, 1n)).to.deep.equal([9977n, 2n, "uptime", "30d", false]);
      expect(await reputation.getLastIndex(agentId, client1.address)).to.equal(1n);
      expect(await reputation.getClients(agentId)).to.deep.equal([client1.address]);
    });

    it("an empty tag1 is indexed as keccak256('')", async function () {
      const { reputation, client1, agentId } = await loadFixture(reputationFixture);
      const receipt = await (await give(reputation, client1, agentId)).wait();
      expect(receipt!.logs[0].topics[3]).to.equal(ethers.keccak256("0x"));
    });

    it("indexes are 1-based per (agent, client); clients are listed once, in order of first feedback", async function () {
      const { reputation, identity, bob, client1, client2, agentId } = await loadFixture(reputationFixture);
      await identity.connect(bob)["register()"](); // agent 1
      await giveAll(reputation, agentId, [
        [client1, { value: 1n }],
        [client2, { value: 2n }],
        [client1, { value: 3n }],
        [client1, { value: 4n }],
      ]);
      await expect(give(reputation, client1, 1n, { value: 5n }))
        .to.emit(reputation, "NewFeedback")
        .withArgs(1n, client1.address, 1n, 5n, 0, "", "", "", "", "", ethers.ZeroHash);
      expect(await reputation.getLastIndex(agentId, client1.address)).to.equal(3n);
      expect(await reputation.getLastIndex(agentId, client2.address)).to.equal(1n);
      expect(await reputation.getLastIndex(1n, client1.address)).to.equal(1n);
      expect(await reputation.getLastIndex(1n, client2.address)).to.equal(0n);
      expect((await reputation.readFeedback(agentId, client1.address, 3n)).value).to.equal(4n);
      expect((await reputation.readFeedback(agentId, client2.address, 1n)).value).to.equal(2n);
      expect(await reputation.getClients(agentId)).to.deep.equal([client1.address, client2.address]);
      expect(await reputation.getClients(1n)).to.deep.equal([client1.address]);
      expect(await reputation.getClients(2n)).to.deep.equal([]);
    });

    it("accepts valueDecimals 18 and refuses 19 ('too many decimals')", async function () {
      const { reputation, client1, agentId } = await loadFixture(reputationFixture);
      await give(reputation, client1, agentId, { decimals: 18, value: 10n ** 18n });
      expect((await reputation.readFeedback(agentId, client1.address, 1n)).valueDecimals).to.equal(18n);
      await expect(give(reputation, client1, agentId, { decimals: 19 })).to.be.revertedWith("too many decimals");
      await expect(give(reputation, client1, agentId, { decimals: 255 })).to.be.revertedWith("too many decimals");
    });

    it("accepts |value| = 1e38 and refuses 1e38 + 1 either sign ('value too large')", async function () {
      const { reputation, client1, agentId } = await loadFixture(reputationFixture);
      await give(reputation, client1, agentId, { value: MAX_ABS_VALUE });
      await give(reputation, client1, agentId, { value: -MAX_ABS_VALUE });
      await give(reputation, client1, agentId, { value: 0n });
      expect((await reputation.readFeedback(agentId, client1.address, 2n)).value).to.equal(-MAX_ABS_VALUE);
      await expect(give(reputation, client1, agentId, { value: MAX_ABS_VALUE + 1n })).to.be.revertedWith(
        "value too large",
      );
      await expect(give(reputation, client1, agentId, { value: -MAX_ABS_VALUE - 1n })).to.be.revertedWith(
        "value too large",
      );
      const int128Max = 2n ** 127n - 1n;
      await expect(give(reputation, client1, agentId, { value: int128Max })).to.be.revertedWith("value too large");
      await expect(give(reputation, client1, agentId, { value: -int128Max - 1n })).to.be.revertedWith(
        "value too large",
      );
    });

    it("refuses the agent's owner, operator and approved address ('Self-feedback not allowed')", async function () {
      const { reputation, alice, operator, approved, agentId } = await loadFixture(reputationFixture);
      for (const [label, who] of [
        ["owner", alice],
        ["operator", operator],
        ["approved", approved],
      ] as const) {
        await expect(give(reputation, who, agentId), label).to.be.revertedWith("Self-feedback not allowed");
      }
      expect(await reputation.getClients(agentId)).to.deep.equal([]);
    });

    it("the self-feedback rule follows the current owner after a transfer", async function () {
      const { reputation, identity, alice, bob, operator, agentId } = await loadFixture(reputationFixture);
      await identity.connect(alice).transferFrom(alice.address, bob.address, agentId);
      await expect(give(reputation, bob, agentId)).to.be.revertedWith("Self-feedback not allowed");
      await give(reputation, alice, agentId, { value: 1n });
      await give(reputation, operator, agentId, { value: 2n }); // alice's operator is not bob's
      expect(await reputation.getClients(agentId)).to.deep.equal([alice.address, operator.address]);
    });

    it("the agent wallet is not blocked when it is not the owner or an operator (reference behaviour)", async function () {
      const { reputation, identity, alice, walletKey, agentId } = await loadFixture(reputationFixture);
      const deadline = BigInt(await time.latest()) + 200n;
      const sig = await signAgentWallet(walletKey, identity, {
        agentId,
        newWallet: walletKey.address,
        owner: alice.address,
        deadline,
      });
      await identity.connect(alice).setAgentWallet(agentId, walletKey.address, deadline, sig);
      await expect(give(reputation, walletKey, agentId)).to.emit(reputation, "NewFeedback");
    });

    it("an unknown agent reverts with the identity registry's ERC721NonexistentToken", async function () {
      const { reputation, identity, client1 } = await loadFixture(reputationFixture);
      await expect(give(reputation, client1, 99n))
        .to.be.revertedWithCustomError(identity, "ERC721NonexistentToken")
        .withArgs(99n);
    });

    it("checks decimals, then value, then the agent (existence and self-feedback)", async function () {
      const { reputation, alice, client1, agentId } = await loadFixture(reputationFixture);
      await expect(give(reputation, client1, 99n, { decimals: 19, value: MAX_ABS_VALUE + 1n })).to.be.revertedWith(
        "too many decimals",
      );
      await expect(give(reputation, client1, 99n, { value: MAX_ABS_VALUE + 1n })).to.be.revertedWith("value too large");
      await expect(give(reputation, alice, agentId, { decimals: 19 })).to.be.revertedWith("too many decimals");
    });
  });

  describe("revokeFeedback", function () {
    it("the client revokes its own entry once: FeedbackRevoked, then 'Already revoked'", async function () {
      const { reputation, client1, agentId } = await loadFixture(reputationFixture);
      await giveAll(reputation, agentId, [
        [client1, { value: 10n, tag1: "t" }],
        [client1, { value: 20n }],
      ]);
      await expect(reputation.connect(client1).revokeFeedback(agentId, 2n))
        .to.emit(reputation, "FeedbackRevoked")
        .withArgs(agentId, client1.address, 2n);
      expect(await reputation.readFeedback(agentId, client1.address, 2n)).to.deep.equal([20n, 0n, "", "", true]);
      expect((await reputation.readFeedback(agentId, client1.address, 1n)).isRevoked).to.equal(false);
      await expect(reputation.connect(client1).revokeFeedback(agentId, 2n)).to.be.revertedWith("Already revoked");
      // Revoking keeps the index sequence: the next rating is index 3.
      await expect(give(reputation, client1, agentId))
        .to.emit(reputation, "NewFeedback")
        .withArgs(agentId, client1.address, 3n, 80n, 0, "", "", "", "", "", ethers.ZeroHash);
    });

    it("refuses index 0 ('index must be > 0') and indexes past the caller's last one ('index out of bounds')", async function () {
      const { reputation, client1, agentId } = await loadFixture(reputationFixture);
      await give(reputation, client1, agentId);
      await expect(reputation.connect(client1).revokeFeedback(agentId, 0n)).to.be.revertedWith("index must be > 0");
      await expect(reputation.connect(client1).revokeFeedback(agentId, 2n)).to.be.revertedWith("index out of bounds");
      await expect(reputation.connect(client1).revokeFeedback(5n, 1n)).to.be.revertedWith("index out of bounds");
    });

    it("nobody else can revoke a client's entry, not even the agent owner", async function () {
      const { reputation, alice, client1, client2, agentId } = await loadFixture(reputationFixture);
      await give(reputation, client1, agentId, { value: 1n });
      await give(reputation, client2, agentId, { value: 2n });
      await expect(reputation.connect(alice).revokeFeedback(agentId, 1n)).to.be.revertedWith("index out of bounds");
      // client2 revoking index 1 revokes its own entry, never client1's.
      await expect(reputation.connect(client2).revokeFeedback(agentId, 1n))
        .to.emit(reputation, "FeedbackRevoked")
        .withArgs(agentId, client2.address, 1n);
      expect((await reputation.readFeedback(agentId, client1.address, 1n)).isRevoked).to.equal(false);
      expect((await reputation.readFeedback(agentId, client2.address, 1n)).isRevoked).to.equal(true);
    });
  });

  describe("appendResponse", function () {
    it("anyone responds (stranger, agent owner, the client itself) with ResponseAppended", async function () {
      const { reputation, alice, stranger, client1, agentId } = await loadFixture(reputationFixture);
      await give(reputation, client1, agentId);
      const responseHash = ethers.id("response");
      for (const who of [stranger, alice, client1]) {
        await expect(
          reputation.connect(who).appendResponse(agentId, client1.address, 1n, "ipfs://response", responseHash),
        )
          .to.emit(reputation, "ResponseAppended")
          .withArgs(agentId, client1.address, 1n, who.address, "ipfs://response", responseHash);
      }
      expect(await reputation.getResponseCount(agentId, client1.address, 1n, [])).to.equal(3n);
    });

    it("works on revoked feedback", async function () {
      const { reputation, client1, responder1, agentId } = await loadFixture(reputationFixture);
      await give(reputation, client1, agentId);
      await reputation.connect(client1).revokeFeedback(agentId, 1n);
      await expect(reputation.connect(responder1).appendResponse(agentId, client1.address, 1n, "ipfs://r", ethers.ZeroHash))
        .to.emit(reputation, "ResponseAppended")
        .withArgs(agentId, client1.address, 1n, responder1.address, "ipfs://r", ethers.ZeroHash);
      expect(await reputation.getResponseCount(agentId, client1.address, 1n, [])).to.equal(1n);
    });

    it("refuses index 0, an empty URI and an index past the client's last one, in that order", async function () {
      const { reputation, client1, responder1, agentId } = await loadFixture(reputationFixture);
      await give(reputation, client1, agentId);
      const r = reputation.connect(responder1);
      await expect(r.appendResponse(agentId, client1.address, 0n, "", ethers.ZeroHash)).to.be.revertedWith(
        "index must be > 0",
      );
      await expect(r.appendResponse(agentId, client1.address, 2n, "", ethers.ZeroHash)).to.be.revertedWith("Empty URI");
      await expect(r.appendResponse(agentId, client1.address, 1n, "", ethers.ZeroHash)).to.be.revertedWith("Empty URI");
      await expect(r.appendResponse(agentId, client1.address, 2n, "ipfs://r", ethers.ZeroHash)).to.be.revertedWith(
        "index out of bounds",
      );
      await expect(r.appendResponse(agentId, responder1.address, 1n, "ipfs://r", ethers.ZeroHash)).to.be.revertedWith(
        "index out of bounds",
      );
      await expect(r.appendResponse(77n, client1.address, 1n, "ipfs://r", ethers.ZeroHash)).to.be.revertedWith(
        "index out of bounds",
      );
    });
  });

  describe("readFeedback", function () {
    it("refuses index 0 ('index must be > 0') and past the last ('index out of bounds')", async function () {
      const { reputation, client1, client2, agentId } = await loadFixture(reputationFixture);
      await give(reputation, client1, agentId);
      await expect(reputation.readFeedback(agentId, client1.address, 0n)).to.be.revertedWith("index must be > 0");
      await expect(reputation.readFeedback(agentId, client1.address, 2n)).to.be.revertedWith("index out of bounds");
      await expect(reputation.readFeedback(agentId, client2.address, 1n)).to.be.revertedWith("index out of bounds");
      await expect(reputation.readFeedback(agentId, client2.address, 0n)).to.be.revertedWith("index must be > 0");
    });
  });

  describe("getSummary", function () {
    it("needs a non-empty client list ('clientAddresses required')", async function () {
      const { reputation, client1, agentId } = await loadFixture(reputationFixture);
      await give(reputation, client1, agentId);
      await expect(reputation.getSummary(agentId, [], "", "")).to.be.revertedWith("clientAddresses required");
    });

    it("is (0, 0, 0) when nothing matches", async function () {
      const { reputation, client1, client2, agentId } = await loadFixture(reputationFixture);
      expect(await reputation.getSummary(agentId, [client1.address], "", "")).to.deep.equal([0n, 0n, 0n]);
      await give(reputation, client1, agentId, { value: 50n, decimals: 3, tag1: "a" });
      expect(await reputation.getSummary(agentId, [client2.address], "", "")).to.deep.equal([0n, 0n, 0n]);
      expect(await reputation.getSummary(agentId, [client1.address], "b", "")).to.deep.equal([0n, 0n, 0n]);
    });

    it("averages plain integer ratings", async function () {
      const { reputation, client1, client2, agentId } = await loadFixture(reputationFixture);
      await giveAll(reputation, agentId, [
        [client1, { value: 80n }],
        [client1, { value: 90n }],
        [client2, { value: 100n }],
      ]);
      expect(await reputation.getSummary(agentId, [client1.address, client2.address], "", "")).to.deep.equal([
        3n,
        90n,
        0n,
      ]);
      expect(await reputation.getSummary(agentId, [client1.address], "", "")).to.deep.equal([2n, 85n, 0n]);
    });

    it("scales mixed decimals to 18, averages, and answers at the most common decimals (truncating)", async function () {
      const { reputation, client1, client2, client3, agentId } = await loadFixture(reputationFixture);
      await giveAll(reputation, agentId, [
        [client1, { value: 85n, decimals: 0 }], // 85
        [client2, { value: 9250n, decimals: 2 }], // 92.50
        [client3, { value: 7725n, decimals: 2 }], // 77.25
      ]);
      // (85 + 92.5 + 77.25) / 3 = 84.91666.. -> 84.91 at 2 decimals
      expect(
        await reputation.getSummary(agentId, [client1.address, client2.address, client3.address], "", ""),
      ).to.deep.equal([3n, 8491n, 2n]);
    });

    it("loses what the most common decimals cannot express", async function () {
      const { reputation, client1, agentId } = await loadFixture(reputationFixture);
      await giveAll(reputation, agentId, [
        [client1, { value: 1n, decimals: 0 }],
        [client1, { value: 1n, decimals: 0 }],
        [client1, { value: 1n, decimals: 0 }],
        [client1, { value: 5n * 10n ** 17n, decimals: 18 }], // 0.5
      ]);
      // 3.5 / 4 = 0.875 -> 0 at 0 decimals
      expect(await reputation.getSummary(agentId, [client1.address], "", "")).to.deep.equal([4n, 0n, 0n]);
    });

    it("handles negative values, truncating toward zero (not flooring)", async function () {
      const { reputation, client1, client2, agentId } = await loadFixture(reputationFixture);
      await giveAll(reputation, agentId, [
        [client1, { value: -5n }],
        [client2, { value: 2n }],
      ]);
      // -3 / 2 = -1.5 -> -1
      expect(await reputation.getSummary(agentId, [client1.address, client2.address], "", "")).to.deep.equal([
        2n,
        -1n,
        0n,
      ]);
      await giveAll(reputation, agentId, [[client1, { value: -12345n, decimals: 3 }], [client1, { value: -12345n, decimals: 3 }]]);
      // (-5 + 2 - 12.345 - 12.345) / 4 = -6.9225; decimals 0 and 3 tie (two entries each) -> 0 decimals -> -6
      expect(await reputation.getSummary(agentId, [client1.address, client2.address], "", "")).to.deep.equal([
        4n,
        -6n,
        0n,
      ]);
    });

    it("breaks a decimals tie toward the lowest decimals, whatever the order of the entries", async function () {
      const { reputation, client1, client2, agentId } = await loadFixture(reputationFixture);
      await giveAll(reputation, agentId, [
        [client1, { value: 2500n, decimals: 3 }], // 2.5
        [client2, { value: 15n, decimals: 1 }], // 1.5
      ]);
      // average 2.0; decimals 1 and 3 tie -> 1
      expect(await reputation.getSummary(agentId, [client1.address, client2.address], "", "")).to.deep.equal([
        2n,
        20n,
        1n,
      ]);
      expect(await reputation.getSummary(agentId, [client2.address, client1.address], "", "")).to.deep.equal([
        2n,
        20n,
        1n,
      ]);
      await give(reputation, client1, agentId, { value: 4000n, decimals: 3 }); // 4.0; now 3 decimals lead
      // (2.5 + 1.5 + 4) / 3 = 2.6666.. -> 2.666
      expect(await reputation.getSummary(agentId, [client1.address, client2.address], "", "")).to.deep.equal([
        3n,
        2666n,
        3n,
      ]);
    });

    it("skips revoked entries", async function () {
      const { reputation, client1, client2, agentId } = await loadFixture(reputationFixture);
      await giveAll(reputation, agentId, [
        [client1, { value: 100n }],
        [client1, { value: 0n, decimals: 5 }],
        [client2, { value: 40n }],
      ]);
      await reputation.connect(client1).revokeFeedback(agentId, 2n);
      expect(await reputation.getSummary(agentId, [client1.address, client2.address], "", "")).to.deep.equal([
        2n,
        70n,
        0n,
      ]);
      await reputation.connect(client2).revokeFeedback(agentId, 1n);
      expect(await reputation.getSummary(agentId, [client2.address], "", "")).to.deep.equal([0n, 0n, 0n]);
    });

    it("filters by tag1 and/or tag2; an empty tag matches anything", async function () {
      const { reputation, client1, client2, agentId } = await loadFixture(reputationFixture);
      await giveAll(reputation, agentId, [
        [client1, { value: 10n, tag1: "a", tag2: "x" }],
        [client1, { value: 20n, tag1: "a", tag2: "y" }],
        [client2, { value: 30n, tag1: "b", tag2: "x" }],
        [client2, { value: 60n, tag1: "b", tag2: "y" }],
        [client2, { value: 1000n, tag1: "", tag2: "" }],
      ]);
      const both = [client1.address, client2.address];
      expect(await reputation.getSummary(agentId, both, "", "")).to.deep.equal([5n, 224n, 0n]);
      expect(await reputation.getSummary(agentId, both, "a", "")).to.deep.equal([2n, 15n, 0n]);
      expect(await reputation.getSummary(agentId, both, "", "x")).to.deep.equal([2n, 20n, 0n]);
      expect(await reputation.getSummary(agentId, both, "b", "y")).to.deep.equal([1n, 60n, 0n]);
      expect(await reputation.getSummary(agentId, both, "a", "q")).to.deep.equal([0n, 0n, 0n]);
      // Tags match exactly (case-sensitive, no prefix match).
      expect(await reputation.getSummary(agentId, both, "A", "")).to.deep.equal([0n, 0n, 0n]);
    });

    it("counts a client listed twice twice, and ignores clients without feedback", async function () {
      const { reputation, client1, client2, client3, agentId } = await loadFixture(reputationFixture);
      await giveAll(reputation, agentId, [
        [client1, { value: 100n }],
        [client2, { value: 50n }],
      ]);
      expect(
        await reputation.getSummary(agentId, [client1.address, client1.address, client2.address, client3.address], "", ""),
      ).to.deep.equal([3n, 83n, 0n]);
    });

    it("extreme values average exactly", async function () {
      const { reputation, client1, client2, agentId } = await loadFixture(reputationFixture);
      await giveAll(reputation, agentId, [
        [client1, { value: MAX_ABS_VALUE }],
        [client2, { value: -MAX_ABS_VALUE }],
        [client2, { value: MAX_ABS_VALUE, decimals: 18 }],
        [client2, { value: MAX_ABS_VALUE, decimals: 18 }],
      ]);
      expect(await reputation.getSummary(agentId, [client1.address], "", "")).to.deep.equal([1n, MAX_ABS_VALUE, 0n]);
      // (1e38 - 1e38 + 1e20 + 1e20) / 4 = 5e19; decimals 0 and 18 tie -> 0 decimals
      expect(await reputation.getSummary(agentId, [client1.address, client2.address], "", "")).to.deep.equal([
        4n,
        5n * 10n ** 19n,
        0n,
      ]);
      // Only the two 18-decimal entries: 1e20 at 18 decimals, exact.
      await reputation.connect(client2).revokeFeedback(agentId, 1n);
      expect(await reputation.getSummary(agentId, [client2.address], "", "")).to.deep.equal([
        2n,
        MAX_ABS_VALUE,
        18n,
      ]);
    });

    it("narrows the average to int128 without a range check, like the reference (wraps when it does not fit)", async function () {
      const { reputation, client1, client2, agentId } = await loadFixture(reputationFixture);
      await giveAll(reputation, agentId, [
        [client1, { value: MAX_ABS_VALUE, decimals: 0 }], // 1e56 at 18 decimals
        [client2, { value: 0n, decimals: 18 }],
        [client2, { value: 0n, decimals: 18 }],
      ]);
      const averageAt18 = 10n ** 56n / 3n; // does not fit int128
      const [count, value, decimals] = await reputation.getSummary(agentId, [client1.address, client2.address], "", "");
      expect(count).to.equal(3n);
      expect(decimals).to.equal(18n);
      expect(value).to.equal(BigInt.asIntN(128, averageAt18));
      expect(value).to.not.equal(averageAt18);
    });
  });

  describe("readAllFeedback", function () {
    async function feedbackSetFixture() {
      const base = await reputationFixture();
      const { reputation, client1, client2, agentId } = base;
      await giveAll(reputation, agentId, [
        [client1, { value: 10n, decimals: 1, tag1: "a", tag2: "x" }],
        [client2, { value: -20n, decimals: 0, tag1: "a", tag2: "y" }],
        [client1, { value: 30n, decimals: 2, tag1: "b", tag2: "y" }],
      ]);
      await (await reputation.connect(client1).revokeFeedback(agentId, 2n)).wait();
      return base;
    }

    it("with no client list returns every client's entries, clients in order of first feedback, revoked excluded", async function () {
      const { reputation, client1, client2, agentId } = await loadFixture(feedbackSetFixture);
      const r = await readAll(reputation, agentId, [], "", "", false);
      expect(r.clients).to.deep.equal([client1.address, client2.address]);
      expect(r.feedbackIndexes).to.deep.equal([1n, 1n]);
      expect(r.values).to.deep.equal([10n, -20n]);
      expect(r.valueDecimals).to.deep.equal([1n, 0n]);
      expect(r.tag1s).to.deep.equal(["a", "a"]);
      expect(r.tag2s).to.deep.equal(["x", "y"]);
      expect(r.revokedStatuses).to.deep.equal([false, false]);
    });

    it("includes revoked entries on request, flagged", async function () {
      const { reputation, client1, client2, agentId } = await loadFixture(feedbackSetFixture);
      const r = await readAll(reputation, agentId, [], "", "", true);
      expect(r.clients).to.deep.equal([client1.address, client1.address, client2.address]);
      expect(r.feedbackIndexes).to.deep.equal([1n, 2n, 1n]);
      expect(r.values).to.deep.equal([10n, 30n, -20n]);
      expect(r.valueDecimals).to.deep.equal([1n, 2n, 0n]);
      expect(r.tag1s).to.deep.equal(["a", "b", "a"]);
      expect(r.tag2s).to.deep.equal(["x", "y", "y"]);
      expect(r.revokedStatuses).to.deep.equal([false, true, false]);
    });

    it("follows the order of an explicit client list and filters by tags", async function () {
      const { reputation, client1, client2, client3, agentId } = await loadFixture(feedbackSetFixture);
      const ordered = await readAll(reputation, agentId, [client2.address, client3.address, client1.address], "", "", true);
      expect(ordered.clients).to.deep.equal([client2.address, client1.address, client1.address]);
      expect(ordered.feedbackIndexes).to.deep.equal([1n, 1n, 2n]);

      const byTag1 = await readAll(reputation, agentId, [], "a", "", true);
      expect(byTag1.clients).to.deep.equal([client1.address, client2.address]);
      expect(byTag1.values).to.deep.equal([10n, -20n]);

      const byTag2 = await readAll(reputation, agentId, [], "", "y", true);
      expect(byTag2.values).to.deep.equal([30n, -20n]);
      expect(byTag2.revokedStatuses).to.deep.equal([true, false]);
      const byTag2Live = await readAll(reputation, agentId, [], "", "y", false);
      expect(byTag2Live.values).to.deep.equal([-20n]);

      const both = await readAll(reputation, agentId, [], "a", "x", false);
      expect(both.clients).to.deep.equal([client1.address]);
    });

    it("returns empty arrays when nothing matches or the agent has no feedback", async function () {
      const { reputation, client3, agentId } = await loadFixture(feedbackSetFixture);
      for (const r of [
        await readAll(reputation, agentId, [], "zzz", "", true),
        await readAll(reputation, agentId, [client3.address], "", "", true),
        await readAll(reputation, 12n, [], "", "", true),
      ]) {
        expect(r.clients).to.deep.equal([]);
        expect(r.feedbackIndexes).to.deep.equal([]);
        expect(r.values).to.deep.equal([]);
        expect(r.valueDecimals).to.deep.equal([]);
        expect(r.tag1s).to.deep.equal([]);
        expect(r.tag2s).to.deep.equal([]);
        expect(r.revokedStatuses).to.deep.equal([]);
      }
    });
  });

  describe("getResponseCount", function () {
    async function responsesFixture() {
      const base = await reputationFixture();
      const { reputation, client1, client2, responder1, responder2, agentId } = base;
      await giveAll(reputation, agentId, [
        [client1, {}],
        [client1, {}],
        [client2, {}],
      ]);
      await (await reputation.connect(client1).revokeFeedback(agentId, 2n)).wait();
      const respond = async (who: Signer, client: string, index: bigint) =>
        (await reputation.connect(who).appendResponse(agentId, client, index, "ipfs://r", ethers.ZeroHash)).wait();
      await respond(responder1, client1.address, 1n);
      await respond(responder1, client1.address, 1n);
      await respond(responder2, client1.address, 1n);
      await respond(responder1, client1.address, 2n); // revoked entry
      await respond(responder2, client2.address, 1n);
      return base;
    }

    it("client 0 counts every response to every entry of the agent (feedbackIndex ignored)", async function () {
      const { reputation, agentId } = await loadFixture(responsesFixture);
      expect(await reputation.getResponseCount(agentId, ethers.ZeroAddress, 0n, [])).to.equal(5n);
      expect(await reputation.getResponseCount(agentId, ethers.ZeroAddress, 7n, [])).to.equal(5n);
    });

    it("index 0 counts every entry of the client; otherwise one entry (not range-checked)", async function () {
      const { reputation, client1, client2, client3, agentId } = await loadFixture(responsesFixture);
      expect(await reputation.getResponseCount(agentId, client1.address, 0n, [])).to.equal(4n);
      expect(await reputation.getResponseCount(agentId, client1.address, 1n, [])).to.equal(3n);
      expect(await reputation.getResponseCount(agentId, client1.address, 2n, [])).to.equal(1n);
      expect(await reputation.getResponseCount(agentId, client2.address, 1n, [])).to.equal(1n);
      expect(await reputation.getResponseCount(agentId, client1.address, 3n, [])).to.equal(0n);
      expect(await reputation.getResponseCount(agentId, client3.address, 0n, [])).to.equal(0n);
      expect(await reputation.getResponseCount(3n, ethers.ZeroAddress, 0n, [])).to.equal(0n);
    });

    it("a responder filter counts only their responses; a responder listed twice counts twice", async function () {
      const { reputation, client1, responder1, responder2, stranger, agentId } = await loadFixture(responsesFixture);
      const count = (client: string, index: bigint, responders: string[]) =>
        reputation.getResponseCount(agentId, client, index, responders);
      expect(await count(ethers.ZeroAddress, 0n, [responder1.address])).to.equal(3n);
      expect(await count(ethers.ZeroAddress, 0n, [responder2.address])).to.equal(2n);
      expect(await count(ethers.ZeroAddress, 0n, [responder1.address, responder2.address])).to.equal(5n);
      expect(await count(ethers.ZeroAddress, 0n, [responder1.address, responder1.address])).to.equal(6n);
      expect(await count(ethers.ZeroAddress, 0n, [stranger.address])).to.equal(0n);
      expect(await count(client1.address, 0n, [responder2.address])).to.equal(1n);
      expect(await count(client1.address, 1n, [responder1.address])).to.equal(2n);
      expect(await count(client1.address, 2n, [responder2.address])).to.equal(0n);
    });
  });

  describe("ABI identity with the ERC-8004 reference (ReputationRegistryUpgradeable 2.0.0)", function () {
    // From the reference's ABI (its ReputationRegistry ABI file), minus the proxy/ownership functions and events
    // (initialize, owner, transferOwnership, renounceOwnership, proxiableUUID, UPGRADE_INTERFACE_VERSION,
    // upgradeToAndCall; Initialized, OwnershipTransferred, Upgraded) that a plain deployment does not have.
    const FUNCTIONS = [
      "function appendResponse(uint256 agentId, address clientAddress, uint64 feedbackIndex, string responseURI, bytes32 responseHash)",
      "function getClients(uint256 agentId) view returns (address[])",
      "function getIdentityRegistry() view returns (address)",
      "function getLastIndex(uint256 agentId, address clientAddress) view returns (uint64)",
      "function getResponseCount(uint256 agentId, address clientAddress, uint64 feedbackIndex, address[] responders) view returns (uint64 count)",
      "function getSummary(uint256 agentId, address[] clientAddresses, string tag1, string tag2) view returns (uint64 count, int128 summaryValue, uint8 summaryValueDecimals)",
      "function getVersion() pure returns (string)",
      "function giveFeedback(uint256 agentId, int128 value, uint8 valueDecimals, string tag1, string tag2, string endpoint, string feedbackURI, bytes32 feedbackHash)",
      "function readAllFeedback(uint256 agentId, address[] clientAddresses, string tag1, string tag2, bool includeRevoked) view returns (address[] clients, uint64[] feedbackIndexes, int128[] values, uint8[] valueDecimals, string[] tag1s, string[] tag2s, bool[] revokedStatuses)",
      "function readFeedback(uint256 agentId, address clientAddress, uint64 feedbackIndex) view returns (int128 value, uint8 valueDecimals, string tag1, string tag2, bool isRevoked)",
      "function revokeFeedback(uint256 agentId, uint64 feedbackIndex)",
    ];
    const EVENTS = [
      "event FeedbackRevoked(uint256 indexed agentId, address indexed clientAddress, uint64 indexed feedbackIndex)",
      "event NewFeedback(uint256 indexed agentId, address indexed clientAddress, uint64 feedbackIndex, int128 value, uint8 valueDecimals, string indexed indexedTag1, string tag1, string tag2, string endpoint, string feedbackURI, bytes32 feedbackHash)",
      "event ResponseAppended(uint256 indexed agentId, address indexed clientAddress, uint64 feedbackIndex, address indexed responder, string responseURI, bytes32 responseHash)",
    ];
    const SELECTORS: Record<string, string> = {
      "getIdentityRegistry()": "0xbc4d861b",
      "giveFeedback(uint256,int128,uint8,string,string,string,string,bytes32)": "0x3c036a7e",
      "revokeFeedback(uint256,uint64)": "0x4ab3ca99",
      "appendResponse(uint256,address,uint64,string,bytes32)": "0xc2349ab2",
      "readFeedback(uint256,address,uint64)": "0x232b0810",
      "getSummary(uint256,address[],string,string)": "0x81bbba58",
      "readAllFeedback(uint256,address[],string,string,bool)": "0xd9d84224",
      "getResponseCount(uint256,address,uint64,address[])": "0x6e04cacd",
      "getClients(uint256)": "0x42dd519c",
      "getLastIndex(uint256,address)": "0xf2d81759",
      "getVersion()": "0x0d8e6e2c",
    };
    const TOPICS: Record<string, string> = {
      "NewFeedback(uint256,address,uint64,int128,uint8,string,string,string,string,string,bytes32)":
        "0x6a4a61743519c9d648a14e6493f47dbe3ff1aa29e7785c96c8326a205e58febc",
      "FeedbackRevoked(uint256,address,uint64)": "0x25156fd3288212246d8b008d5921fde376c71ed14ac2e072a506eb06fde6d09d",
      "ResponseAppended(uint256,address,uint64,address,string,bytes32)":
        "0xb1c6be0b5b8aef6539e2fac0fd131a2faa7b49edf8e505b5eb0ad487d56051d4",
    };

    it("has exactly the reference's functions, with the same names, types, mutability and return values", async function () {
      const { reputation } = await loadFixture(reputationFixture);
      const ours: string[] = [];
      reputation.interface.forEachFunction((f) => ours.push(f.format("full")));
      expect([...ours].sort()).to.deep.equal([...FUNCTIONS].sort());
    });

    it("has exactly the reference's events, with the same indexed flags and order", async function () {
      const { reputation } = await loadFixture(reputationFixture);
      const ours: string[] = [];
      reputation.interface.forEachEvent((e) => ours.push(e.format("full")));
      expect([...ours].sort()).to.deep.equal([...EVENTS].sort());
    });

    it("selectors and topics match the reference signatures", async function () {
      const { reputation } = await loadFixture(reputationFixture);
      for (const [sig, selector] of Object.entries(SELECTORS)) {
        expect(ethers.id(sig).slice(0, 10), sig).to.equal(selector);
        const fragment = abiOf(reputation).getFunction(sig);
        expect(fragment, sig).to.not.equal(null);
        expect(fragment!.selector, sig).to.equal(selector);
      }
      for (const [sig, topic] of Object.entries(TOPICS)) {
        expect(ethers.id(sig), sig).to.equal(topic);
        const fragment = abiOf(reputation).getEvent(sig);
        expect(fragment, sig).to.not.equal(null);
        expect(fragment!.topicHash, sig).to.equal(topic);
      }
    });
  });
});
