import { expect } from "chai";
import hre from "hardhat";
import { impersonateAccount, loadFixture, setBalance, time } from "@nomicfoundation/hardhat-network-helpers";
import type { AgentMandate, ComplianceProvider, MisbehavingComplianceProvider } from "../../../typechain-types";
import {
  ACTION,
  DAY,
  ReasonCode,
  expectAbiSubset,
  interfaceIdOf,
  signExtend,
  signGrant,
  signRevoke,
  signSetOperator,
  type GrantParams,
} from "./helpers";

const { ethers } = hre;

const IDREF = ethers.id("kyc-principal");
const OTHER_REF = ethers.id("another-identity");
const MAX_NONCE_JUMP = 2n ** 64n - 1n;
/** MisbehavingComplianceProvider.Mode */
const Mode = { Eligible: 0, NotEligible: 1, Revert: 2, ShortAnswer: 3, NotABool: 4 } as const;

/**
 * Where this registry deliberately differs from the ERC-8226 reference (issue 48, docs/rams.md): compliance is asked
 * at every execution, every lifecycle call consumes the principal's nonce, and a principal can void the signatures it
 * gave (IAgentMandateNonces).
 */
describe("RAMS AgentMandate safeguards: compliance at execution, nonces", () => {
  async function deployFixture() {
    const [admin, complianceOwner, principal, agent, operator, relayer, stranger, recorder, enforcer, asset] =
      await ethers.getSigners();
    const mandate: AgentMandate = await ethers.deployContract("AgentMandate", [admin.address]);
    const compliance: ComplianceProvider = await ethers.deployContract("ComplianceProvider", [complianceOwner.address]);
    await compliance.connect(complianceOwner).grantPrincipal(principal.address, IDREF, 0);
    await mandate.connect(admin).grantRole(await mandate.RECORDER_ROLE(), recorder.address);
    const params = async (over: Partial<GrantParams> = {}): Promise<GrantParams> => ({
      agent: agent.address,
      validFrom: 0,
      validUntil: (await time.latest()) + DAY,
      principal: principal.address,
      complianceProvider: await compliance.getAddress(),
      identityRef: IDREF,
      asset: asset.address,
      maxTransactionValue: 1000,
      maxCumulativeValue: 1500,
      metadata: ethers.ZeroHash,
      actions: [ACTION],
      deadline: 0,
      ...over,
    });
    const grant = async (over: Partial<GrantParams> = {}) =>
      mandate.connect(principal).grantMandate(await params(over), "0x");
    const canExecute = (amount: bigint | number = 1) =>
      mandate.canExecute(agent.address, principal.address, asset.address, ACTION, amount);
    const record = (from = principal, amount: bigint | number = 1) =>
      mandate.connect(from).recordExecution(agent.address, principal.address, ACTION, amount);
    const nonce = () => mandate.nonces(principal.address);
    const revokeAtProvider = (reason: number = ReasonCode.AML_FLAG) =>
      compliance.connect(complianceOwner).revokePrincipal(principal.address, reason);
    return {
      mandate,
      compliance,
      admin,
      complianceOwner,
      principal,
      agent,
      operator,
      relayer,
      stranger,
      recorder,
      enforcer,
      asset,
      params,
      grant,
      canExecute,
      record,
      nonce,
      revokeAtProvider,
    };
  }

  async function grantedFixture() {
    const f = await deployFixture();
    await f.grant();
    return f;
  }

  const hourFromNow = async () => (await time.latest()) + 3600;

  // ------------------------------------------------------------------------------------------------------------------
  describe("compliance asked at every execution", () => {
    it("a principal revoked at the provider: canExecute false, recordExecution PrincipalNotEligible for the principal, a recorder and the asset; nothing recorded", async () => {
      const { mandate, agent, principal, recorder, asset, canExecute, record, revokeAtProvider } =
        await loadFixture(grantedFixture);
      expect(await canExecute()).to.equal(true);
      await revokeAtProvider();
      expect(await canExecute()).to.equal(false);
      await expect(record(principal)).to.be.revertedWithCustomError(mandate, "PrincipalNotEligible");
      await expect(record(recorder)).to.be.revertedWithCustomError(mandate, "PrincipalNotEligible");
      await impersonateAccount(asset.address);
      await setBalance(asset.address, 10n ** 18n);
      await expect(record(asset)).to.be.revertedWithCustomError(mandate, "PrincipalNotEligible");
      const m = await mandate.getMandate(agent.address, principal.address);
      expect(m.revoked).to.equal(false); // the mandate itself is unchanged: the provider's answer decides
      expect(m.cumulativeUsed).to.equal(0n);
    });

    it("the provider granting the principal again under the mandate's identityRef makes the mandate usable again", async () => {
      const { mandate, compliance, complianceOwner, principal, canExecute, record, revokeAtProvider } =
        await loadFixture(grantedFixture);
      await revokeAtProvider();
      expect(await canExecute()).to.equal(false);
      await compliance.connect(complianceOwner).grantPrincipal(principal.address, IDREF, 0);
      expect(await canExecute()).to.equal(true);
      await expect(record()).to.emit(mandate, "ExecutionRecorded");
    });

    it("a principal granted again under another identity: the mandate's identityRef no longer matches → refused", async () => {
      const { mandate, compliance, complianceOwner, principal, canExecute, record } = await loadFixture(grantedFixture);
      await compliance.connect(complianceOwner).grantPrincipal(principal.address, OTHER_REF, 0);
      expect((await compliance.checkPrincipal(principal.address, IDREF))[1]).to.equal(ReasonCode.IDENTITY_NOT_FOUND);
      expect(await canExecute()).to.equal(false);
      await expect(record()).to.be.revertedWithCustomError(mandate, "PrincipalNotEligible");
    });

    it("KYC expiry: executable at exactly expiresAt, refused one second later (canExecute false, PrincipalNotEligible)", async () => {
      const { mandate, compliance, complianceOwner, principal, agent, grant, canExecute, record } =
        await loadFixture(deployFixture);
      const expiresAt = (await time.latest()) + 100;
      await compliance.connect(complianceOwner).grantPrincipal(principal.address, IDREF, expiresAt);
      await grant();
      await time.setNextBlockTimestamp(expiresAt);
      await expect(record()).to.emit(mandate, "ExecutionRecorded");
      expect(await canExecute()).to.equal(true); // the view runs on the block just mined, at expiresAt
      await time.increaseTo(expiresAt + 1);
      expect(await canExecute()).to.equal(false);
      await expect(record()).to.be.revertedWithCustomError(mandate, "PrincipalNotEligible");
      expect((await mandate.getMandate(agent.address, principal.address)).cumulativeUsed).to.equal(1n);
    });

    it("recordExecution's order: UnauthorizedRecorder, NotExecutable, ExceedsTransactionCap and ExceedsCumulativeCap all come before PrincipalNotEligible", async () => {
      const { mandate, agent, principal, stranger, enforcer, admin, record, revokeAtProvider } =
        await loadFixture(grantedFixture);
      await record(principal, 1000); // 500 of the cumulative cap left
      await revokeAtProvider();
      await expect(record(stranger)).to.be.revertedWithCustomError(mandate, "UnauthorizedRecorder");
      await expect(record(principal, 1001)).to.be.revertedWithCustomError(mandate, "ExceedsTransactionCap");
      await expect(record(principal, 501)).to.be.revertedWithCustomError(mandate, "ExceedsCumulativeCap");
      await expect(record(principal, 500)).to.be.revertedWithCustomError(mandate, "PrincipalNotEligible");
      await mandate.connect(admin).grantRole(await mandate.ENFORCER_ROLE(), enforcer.address);
      await mandate.connect(enforcer).freezeAgent(agent.address);
      await expect(record(principal, 500)).to.be.revertedWithCustomError(mandate, "NotExecutable");
    });

    it("a provider that answers not eligible, reverts, answers too few bytes or a first word other than 0/1: canExecute false without reverting, recordExecution PrincipalNotEligible", async () => {
      const { mandate, grant, canExecute, record } = await loadFixture(deployFixture);
      const provider: MisbehavingComplianceProvider = await ethers.deployContract("MisbehavingComplianceProvider");
      await grant({ complianceProvider: await provider.getAddress() }); // it answers eligible at grant
      expect(await canExecute()).to.equal(true);
      for (const mode of [Mode.NotEligible, Mode.Revert, Mode.ShortAnswer, Mode.NotABool]) {
        await provider.setMode(mode);
        expect(await canExecute(), `mode ${mode}`).to.equal(false);
        await expect(record(), `mode ${mode}`).to.be.revertedWithCustomError(mandate, "PrincipalNotEligible");
      }
      await provider.setMode(Mode.Eligible);
      expect(await canExecute()).to.equal(true);
      await expect(record()).to.emit(mandate, "ExecutionRecorded");
    });

    it("the agent's other principals are not affected by one principal's revocation", async () => {
      const { mandate, compliance, complianceOwner, agent, stranger, asset, params, canExecute, revokeAtProvider } =
        await loadFixture(grantedFixture);
      await compliance.connect(complianceOwner).grantPrincipal(stranger.address, OTHER_REF, 0);
      await mandate.connect(stranger).grantMandate(await params({ principal: stranger.address, identityRef: OTHER_REF }), "0x");
      await revokeAtProvider();
      expect(await canExecute()).to.equal(false);
      expect(await mandate.canExecute(agent.address, stranger.address, asset.address, ACTION, 1)).to.equal(true);
    });
  });

  // ------------------------------------------------------------------------------------------------------------------
  describe("stale signatures die with any later lifecycle call", () => {
    it("an ExtendMandate signature for one mandate does not extend a later mandate of the pair (revoked and re-granted directly)", async () => {
      const { mandate, agent, principal, relayer, grant } = await loadFixture(grantedFixture);
      const deadline = await hourFromNow();
      const newValidUntil = (await time.latest()) + 30 * DAY;
      const ext = { agent: agent.address, principal: principal.address, newValidUntil, deadline };
      const signed = await signExtend(principal, mandate, ext); // for the first mandate, never submitted
      await mandate.connect(principal).revokeMandate(agent.address, principal.address, 0, "0x");
      await grant(); // the later mandate, one day long
      const before = (await mandate.getMandate(agent.address, principal.address)).validUntil;
      await expect(
        mandate.connect(relayer).extendMandate(agent.address, principal.address, newValidUntil, deadline, signed),
      ).to.be.revertedWithCustomError(mandate, "InvalidSignature");
      expect((await mandate.getMandate(agent.address, principal.address)).validUntil).to.equal(before);
    });

    it("an ExtendMandate signature dies when its mandate expires and the pair is granted again", async () => {
      const { mandate, agent, principal, relayer, grant } = await loadFixture(deployFixture);
      await grant({ validUntil: (await time.latest()) + 100 });
      const deadline = (await time.latest()) + 2 * DAY;
      const newValidUntil = (await time.latest()) + 30 * DAY;
      const signed = await signExtend(principal, mandate, {
        agent: agent.address,
        principal: principal.address,
        newValidUntil,
        deadline,
      });
      await time.increase(101);
      await grant();
      await expect(
        mandate.connect(relayer).extendMandate(agent.address, principal.address, newValidUntil, deadline, signed),
      ).to.be.revertedWithCustomError(mandate, "InvalidSignature");
    });

    it("an operator's direct revoke voids the principal's outstanding signatures (a signed SetOperator, a signed revoke)", async () => {
      const { mandate, agent, principal, operator, relayer, stranger, grant } = await loadFixture(grantedFixture);
      await mandate.connect(principal).setOperator(principal.address, operator.address, true, 0, "0x");
      const deadline = await hourFromNow();
      const opSig = await signSetOperator(principal, mandate, {
        principal: principal.address,
        operator: stranger.address,
        approved: true,
        deadline,
      });
      const revokeSig = await signRevoke(principal, mandate, { agent: agent.address, principal: principal.address, deadline });
      await mandate.connect(operator).revokeMandate(agent.address, principal.address, 0, "0x");
      await expect(
        mandate.connect(relayer).setOperator(principal.address, stranger.address, true, deadline, opSig),
      ).to.be.revertedWithCustomError(mandate, "InvalidSignature");
      expect(await mandate.isOperator(principal.address, stranger.address)).to.equal(false);
      await grant(); // a new mandate the signed revoke would otherwise end
      await expect(
        mandate.connect(relayer).revokeMandate(agent.address, principal.address, deadline, revokeSig),
      ).to.be.revertedWithCustomError(mandate, "InvalidSignature");
    });
  });

  // ------------------------------------------------------------------------------------------------------------------
  describe("invalidateNonces (IAgentMandateNonces)", () => {
    it("voids an unsubmitted signature: after invalidateNonces(nonce + 1) the signed grant is InvalidSignature; emits NoncesInvalidated", async () => {
      const { mandate, principal, relayer, params, nonce, canExecute } = await loadFixture(deployFixture);
      const p = await params({ deadline: await hourFromNow() });
      const signed = await signGrant(principal, mandate, p);
      await expect(mandate.connect(principal).invalidateNonces(1))
        .to.emit(mandate, "NoncesInvalidated")
        .withArgs(principal.address, 0, 1);
      expect(await nonce()).to.equal(1n);
      await expect(mandate.connect(relayer).grantMandate(p, signed)).to.be.revertedWithCustomError(
        mandate,
        "InvalidSignature",
      );
      expect(await canExecute()).to.equal(false);
    });

    it("signatures made ahead for later nonces die with a jump above them; a jump to exactly a signed nonce leaves that one usable", async () => {
      const { mandate, principal, operator, stranger, relayer, nonce } = await loadFixture(grantedFixture);
      const deadline = await hourFromNow();
      const current = await nonce(); // 1: the grant used nonce 0
      const sign = (who: string, n: bigint) =>
        signSetOperator(principal, mandate, { principal: principal.address, operator: who, approved: true, deadline }, n);
      const ahead1 = await sign(operator.address, current + 1n);
      const ahead2 = await sign(stranger.address, current + 2n);
      await mandate.connect(principal).invalidateNonces(current + 1n);
      // the signature for current + 1 is now the next one: still usable (documented)
      await mandate.connect(relayer).setOperator(principal.address, operator.address, true, deadline, ahead1);
      expect(await nonce()).to.equal(current + 2n);
      await mandate.connect(principal).invalidateNonces(current + 3n);
      await expect(
        mandate.connect(relayer).setOperator(principal.address, stranger.address, true, deadline, ahead2),
      ).to.be.revertedWithCustomError(mandate, "InvalidSignature");
    });

    it("InvalidNewNonce(current, new) for the current nonce, a lower one, and more than 2^64 - 1 ahead; exactly 2^64 - 1 ahead is accepted", async () => {
      const { mandate, principal, nonce } = await loadFixture(grantedFixture); // nonce 1
      await expect(mandate.connect(principal).invalidateNonces(1))
        .to.be.revertedWithCustomError(mandate, "InvalidNewNonce")
        .withArgs(1, 1);
      await expect(mandate.connect(principal).invalidateNonces(0))
        .to.be.revertedWithCustomError(mandate, "InvalidNewNonce")
        .withArgs(1, 0);
      await expect(mandate.connect(principal).invalidateNonces(1n + MAX_NONCE_JUMP + 1n))
        .to.be.revertedWithCustomError(mandate, "InvalidNewNonce")
        .withArgs(1, 1n + MAX_NONCE_JUMP + 1n);
      await expect(mandate.connect(principal).invalidateNonces(ethers.MaxUint256))
        .to.be.revertedWithCustomError(mandate, "InvalidNewNonce")
        .withArgs(1, ethers.MaxUint256);
      await mandate.connect(principal).invalidateNonces(1n + MAX_NONCE_JUMP);
      expect(await nonce()).to.equal(1n + MAX_NONCE_JUMP);
    });

    it("moves only the caller's own nonce: an operator or a stranger cannot void the principal's signatures with it", async () => {
      const { mandate, principal, operator, stranger, relayer, params, nonce } = await loadFixture(deployFixture);
      await mandate.connect(principal).setOperator(principal.address, operator.address, true, 0, "0x");
      const p = await params({ deadline: await hourFromNow() });
      const signed = await signGrant(principal, mandate, p);
      await expect(mandate.connect(operator).invalidateNonces(5))
        .to.emit(mandate, "NoncesInvalidated")
        .withArgs(operator.address, 0, 5);
      await mandate.connect(stranger).invalidateNonces(5);
      expect(await nonce()).to.equal(1n);
      await expect(mandate.connect(relayer).grantMandate(p, signed)).to.emit(mandate, "MandateGranted");
    });

    it("leaves mandates and operators as they are", async () => {
      const { mandate, principal, operator, canExecute, nonce } = await loadFixture(grantedFixture);
      await mandate.connect(principal).setOperator(principal.address, operator.address, true, 0, "0x");
      await mandate.connect(principal).invalidateNonces((await nonce()) + 10n);
      expect(await canExecute()).to.equal(true);
      expect(await mandate.isOperator(principal.address, operator.address)).to.equal(true);
    });

    it("ERC-165: IAgentMandateNonces is its own interface (0x22f888e7), reported beside IAgentMandate's unchanged 0x44aef2f5; its ABI is in AgentMandate's", async () => {
      const { mandate } = await loadFixture(deployFixture);
      const id = await interfaceIdOf("IAgentMandateNonces");
      expect(id).to.equal(ethers.id("invalidateNonces(uint256)").slice(0, 10));
      expect(id).to.equal("0x22f888e7");
      expect(await mandate.supportsInterface(id)).to.equal(true);
      expect(await interfaceIdOf("IAgentMandate")).to.equal("0x44aef2f5");
      expect(await mandate.supportsInterface("0x44aef2f5")).to.equal(true);
      await expectAbiSubset("IAgentMandateNonces", "AgentMandate");
      const iface = new ethers.Interface((await hre.artifacts.readArtifact("IAgentMandate")).abi);
      expect(iface.getFunction("invalidateNonces")).to.equal(null);
      expect(mandate.interface.getError("InvalidNewNonce")!.selector).to.equal(
        ethers.id("InvalidNewNonce(uint256,uint256)").slice(0, 10),
      );
    });
  });
});
