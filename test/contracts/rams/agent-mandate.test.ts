import { expect } from "chai";
import hre from "hardhat";
import {
  impersonateAccount,
  loadFixture,
  setBalance,
  stopImpersonatingAccount,
  time,
} from "@nomicfoundation/hardhat-network-helpers";
import { PANIC_CODES } from "@nomicfoundation/hardhat-chai-matchers/panic";
import type { Result } from "ethers";
import type { AgentMandate, ComplianceProvider, RegulatedTokenMock } from "../../../typechain-types";
import {
  ACTION,
  DAY,
  MAX,
  OTHER_ACTION,
  ReasonCode,
  TYPES,
  TYPE_STRINGS,
  domainOf,
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
const IERC165_ID = "0x01ffc9a7";
const IACCESS_CONTROL_ID = "0x7965db0b";
const DEFAULT_ADMIN_ROLE = ethers.ZeroHash;

describe("RAMS AgentMandate", () => {
  async function deployFixture() {
    const [
      admin,
      complianceOwner,
      principal,
      agent,
      recipient,
      operator,
      relayer,
      stranger,
      recorder,
      enforcer,
      wrong,
      walletOwner,
      agent2,
      principal2,
    ] = await ethers.getSigners();
    const mandate: AgentMandate = await ethers.deployContract("AgentMandate", [admin.address]);
    const compliance: ComplianceProvider = await ethers.deployContract("ComplianceProvider", [complianceOwner.address]);
    const token: RegulatedTokenMock = await ethers.deployContract("RegulatedTokenMock", [
      "Regulated",
      "RWA",
      admin.address,
    ]);
    await compliance.connect(complianceOwner).grantPrincipal(principal.address, IDREF, 0);

    const ENFORCER_ROLE = await mandate.ENFORCER_ROLE();
    const RECORDER_ROLE = await mandate.RECORDER_ROLE();
    const tokenAddress = await token.getAddress();
    const complianceAddress = await compliance.getAddress();

    /** The reference `_params()`: one day of validity from now, caps 1000 / 1500, transferFrom only. */
    const params = async (over: Partial<GrantParams> = {}): Promise<GrantParams> => ({
      agent: agent.address,
      validFrom: 0,
      validUntil: (await time.latest()) + DAY,
      principal: principal.address,
      complianceProvider: complianceAddress,
      identityRef: IDREF,
      asset: tokenAddress,
      maxTransactionValue: 1000,
      maxCumulativeValue: 1500,
      metadata: ethers.ZeroHash,
      actions: [ACTION],
      deadline: 0,
      ...over,
    });
    /** The reference `_grant()`: a direct grant by the principal. */
    const grant = async (over: Partial<GrantParams> = {}) =>
      mandate.connect(principal).grantMandate(await params(over), "0x");
    const canExecute = (amount: bigint | number, action = ACTION, asset = tokenAddress, who = agent.address) =>
      mandate.canExecute(who, principal.address, asset, action, amount);
    const used = async (who = agent.address, p = principal.address) =>
      (await mandate.getMandate(who, p)).cumulativeUsed;
    const makeEnforcer = () => mandate.connect(admin).grantRole(ENFORCER_ROLE, enforcer.address);

    return {
      mandate,
      compliance,
      token,
      tokenAddress,
      complianceAddress,
      admin,
      complianceOwner,
      principal,
      agent,
      recipient,
      operator,
      relayer,
      stranger,
      recorder,
      enforcer,
      wrong,
      walletOwner,
      agent2,
      principal2,
      ENFORCER_ROLE,
      RECORDER_ROLE,
      params,
      grant,
      canExecute,
      used,
      makeEnforcer,
    };
  }

  async function grantedFixture() {
    const f = await deployFixture();
    await f.grant();
    return f;
  }

  const hourFromNow = async () => (await time.latest()) + 3600;

  // ------------------------------------------------------------------------------------------------------------------
  describe("reference cases (test/AgentMandate.t.sol)", () => {
    it("test_AdminCannotAlsoBeEnforcer: the admin grants ENFORCER_ROLE to itself → AdminEnforcerOverlap", async () => {
      const { mandate, admin, ENFORCER_ROLE } = await loadFixture(deployFixture);
      await expect(mandate.connect(admin).grantRole(ENFORCER_ROLE, admin.address)).to.be.revertedWithCustomError(
        mandate,
        "AdminEnforcerOverlap",
      );
    });

    it("test_EnforcerCannotAlsoBeAdmin: an enforcer is granted DEFAULT_ADMIN_ROLE → AdminEnforcerOverlap", async () => {
      const { mandate, admin, enforcer, makeEnforcer } = await loadFixture(deployFixture);
      await makeEnforcer();
      await expect(
        mandate.connect(admin).grantRole(DEFAULT_ADMIN_ROLE, enforcer.address),
      ).to.be.revertedWithCustomError(mandate, "AdminEnforcerOverlap");
    });

    it("test_CanExecuteActionNotEnabled: after a grant, OTHER_ACTION → false", async () => {
      const { canExecute } = await loadFixture(grantedFixture);
      expect(await canExecute(100, OTHER_ACTION)).to.equal(false);
    });

    it("test_CanExecuteNonexistentMandate: no grant → false", async () => {
      const { canExecute } = await loadFixture(deployFixture);
      expect(await canExecute(100)).to.equal(false);
    });

    it("test_CanExecuteOutsideWindow: granted, two days later → false", async () => {
      const { canExecute } = await loadFixture(grantedFixture);
      await time.increase(2 * DAY);
      expect(await canExecute(100)).to.equal(false);
    });

    it("test_CanExecuteWrongAsset: asset 0xBEEF → false", async () => {
      const { canExecute } = await loadFixture(grantedFixture);
      expect(await canExecute(100, ACTION, ethers.getAddress("0x000000000000000000000000000000000000beef"))).to.equal(
        false,
      );
    });

    it("test_ExtendByOperator: an approved operator extends to now + 10 days → validUntil updated", async () => {
      const { mandate, principal, operator, agent } = await loadFixture(grantedFixture);
      await mandate.connect(principal).setOperator(principal.address, operator.address, true, 0, "0x");
      const newUntil = (await time.latest()) + 10 * DAY;
      await mandate.connect(operator).extendMandate(agent.address, principal.address, newUntil, 0, "0x");
      expect((await mandate.getMandate(agent.address, principal.address)).validUntil).to.equal(BigInt(newUntil));
    });

    it("test_ExtendByPrincipal: the principal extends directly → validUntil updated", async () => {
      const { mandate, principal, agent } = await loadFixture(grantedFixture);
      const newUntil = (await time.latest()) + 10 * DAY;
      await mandate.connect(principal).extendMandate(agent.address, principal.address, newUntil, 0, "0x");
      expect((await mandate.getMandate(agent.address, principal.address)).validUntil).to.equal(BigInt(newUntil));
    });

    it("test_ExtendBySignature: a relayer submits the principal's ExtendMandate signature → validUntil updated", async () => {
      const { mandate, principal, agent, relayer } = await loadFixture(grantedFixture);
      const newUntil = (await time.latest()) + 10 * DAY;
      const deadline = await hourFromNow();
      const sig = await signExtend(principal, mandate, {
        agent: agent.address,
        principal: principal.address,
        newValidUntil: newUntil,
        deadline,
      });
      await mandate.connect(relayer).extendMandate(agent.address, principal.address, newUntil, deadline, sig);
      expect((await mandate.getMandate(agent.address, principal.address)).validUntil).to.equal(BigInt(newUntil));
    });

    it("test_ExtendPreservesCumulativeUsed: record 500, extend → cumulativeUsed still 500", async () => {
      const { mandate, principal, agent, used } = await loadFixture(grantedFixture);
      await mandate.connect(principal).recordExecution(agent.address, principal.address, ACTION, 500);
      await mandate
        .connect(principal)
        .extendMandate(agent.address, principal.address, (await time.latest()) + 10 * DAY, 0, "0x");
      expect(await used()).to.equal(500n);
    });

    it("test_ExtendRevertsInvalidExpiry: extend to the current validUntil → InvalidExpiry", async () => {
      const { mandate, principal, agent } = await loadFixture(grantedFixture);
      const current = (await mandate.getMandate(agent.address, principal.address)).validUntil;
      await expect(
        mandate.connect(principal).extendMandate(agent.address, principal.address, current, 0, "0x"),
      ).to.be.revertedWithCustomError(mandate, "InvalidExpiry");
    });

    it("test_ExtendRevertsWhenExpired: validUntil now + 100, 101 s later, extend → NoActiveMandate", async () => {
      const { mandate, principal, agent, grant } = await loadFixture(deployFixture);
      await grant({ validUntil: (await time.latest()) + 100 });
      await time.increase(101);
      await expect(
        mandate
          .connect(principal)
          .extendMandate(agent.address, principal.address, (await time.latest()) + 10 * DAY, 0, "0x"),
      ).to.be.revertedWithCustomError(mandate, "NoActiveMandate");
    });

    it("test_FreezeByEnforcerBlocksAndUnfreeze: freeze → isFrozen, canExecute false; unfreeze → canExecute true", async () => {
      const { mandate, enforcer, agent, canExecute, makeEnforcer } = await loadFixture(grantedFixture);
      await makeEnforcer();
      await mandate.connect(enforcer).freezeAgent(agent.address);
      expect(await mandate.isFrozen(agent.address)).to.equal(true);
      expect(await canExecute(100)).to.equal(false);
      await mandate.connect(enforcer).unfreezeAgent(agent.address);
      expect(await canExecute(100)).to.equal(true);
    });

    it("test_FreezeOnlyEnforcer: a stranger freezes → AccessControlUnauthorizedAccount(stranger, ENFORCER_ROLE)", async () => {
      const { mandate, stranger, agent, ENFORCER_ROLE } = await loadFixture(deployFixture);
      await expect(mandate.connect(stranger).freezeAgent(agent.address))
        .to.be.revertedWithCustomError(mandate, "AccessControlUnauthorizedAccount")
        .withArgs(stranger.address, ENFORCER_ROLE);
    });

    it("test_UnfreezeOnlyEnforcer: a stranger unfreezes → AccessControlUnauthorizedAccount(stranger, ENFORCER_ROLE)", async () => {
      const { mandate, stranger, agent, ENFORCER_ROLE } = await loadFixture(deployFixture);
      await expect(mandate.connect(stranger).unfreezeAgent(agent.address))
        .to.be.revertedWithCustomError(mandate, "AccessControlUnauthorizedAccount")
        .withArgs(stranger.address, ENFORCER_ROLE);
    });

    it("test_GrantByContractWallet_EIP1271: a KYC'd ERC-1271 wallet is the principal, its owner signs, a relayer submits → canExecute true", async () => {
      const { mandate, compliance, complianceOwner, walletOwner, relayer, agent, tokenAddress, params } =
        await loadFixture(deployFixture);
      const wallet = await ethers.deployContract("ERC1271WalletMock", [walletOwner.address]);
      const walletAddress = await wallet.getAddress();
      await compliance.connect(complianceOwner).grantPrincipal(walletAddress, IDREF, 0);
      const p = await params({ principal: walletAddress, deadline: await hourFromNow() });
      const sig = await signGrant(walletOwner, mandate, p);
      await mandate.connect(relayer).grantMandate(p, sig);
      expect(await mandate.canExecute(agent.address, walletAddress, tokenAddress, ACTION, 100)).to.equal(true);
    });

    it("test_GrantBySignature: a relayer submits the principal's signature → canExecute true, nonce 1", async () => {
      const { mandate, principal, relayer, params, canExecute } = await loadFixture(deployFixture);
      const p = await params({ deadline: await hourFromNow() });
      const sig = await signGrant(principal, mandate, p);
      await mandate.connect(relayer).grantMandate(p, sig);
      expect(await canExecute(100)).to.equal(true);
      expect(await mandate.nonces(principal.address)).to.equal(1n);
    });

    it("test_GrantDirectByPrincipal: getMandate.principal set, action enabled, canExecute at exactly the per-tx cap", async () => {
      const { mandate, principal, agent, canExecute } = await loadFixture(grantedFixture);
      expect((await mandate.getMandate(agent.address, principal.address)).principal).to.equal(principal.address);
      expect(await mandate.isActionEnabled(agent.address, principal.address, ACTION)).to.equal(true);
      expect(await canExecute(1000)).to.equal(true);
    });

    it("test_GrantRevertsAlreadyActive: a second grant → MandateAlreadyActive", async () => {
      const { mandate, grant } = await loadFixture(grantedFixture);
      await expect(grant()).to.be.revertedWithCustomError(mandate, "MandateAlreadyActive");
    });

    it("test_GrantRevertsBadSignature: signed with the wrong key → InvalidSignature", async () => {
      const { mandate, wrong, relayer, params } = await loadFixture(deployFixture);
      const p = await params({ deadline: await hourFromNow() });
      const sig = await signGrant(wrong, mandate, p);
      await expect(mandate.connect(relayer).grantMandate(p, sig)).to.be.revertedWithCustomError(
        mandate,
        "InvalidSignature",
      );
    });

    it("test_GrantRevertsInvalidExpiry: validUntil = now → InvalidExpiry", async () => {
      const { mandate, grant } = await loadFixture(deployFixture);
      await expect(grant({ validUntil: await time.latest() })).to.be.revertedWithCustomError(mandate, "InvalidExpiry");
    });

    it("test_GrantRevertsNotEligible: compliance revokes the principal (AML_FLAG) → PrincipalNotEligible", async () => {
      const { mandate, compliance, complianceOwner, principal, grant } = await loadFixture(deployFixture);
      await compliance.connect(complianceOwner).revokePrincipal(principal.address, ReasonCode.AML_FLAG);
      await expect(grant()).to.be.revertedWithCustomError(mandate, "PrincipalNotEligible");
    });

    it("test_GrantRevertsNotPrincipalWhenNoSig: a stranger, empty signature → NotPrincipal", async () => {
      const { mandate, stranger, params } = await loadFixture(deployFixture);
      await expect(mandate.connect(stranger).grantMandate(await params(), "0x")).to.be.revertedWithCustomError(
        mandate,
        "NotPrincipal",
      );
    });

    it("test_GrantRevertsZeroProvider: provider = 0 → ZeroComplianceProvider", async () => {
      const { mandate, grant } = await loadFixture(deployFixture);
      await expect(grant({ complianceProvider: ethers.ZeroAddress })).to.be.revertedWithCustomError(
        mandate,
        "ZeroComplianceProvider",
      );
    });

    it("test_NoLimitCapsAllowHugeAmount: both caps max → canExecute(max) true, recording max works, cumulativeUsed max", async () => {
      const { mandate, principal, agent, grant, canExecute, used } = await loadFixture(deployFixture);
      await grant({ maxTransactionValue: MAX, maxCumulativeValue: MAX });
      expect(await canExecute(MAX)).to.equal(true);
      await mandate.connect(principal).recordExecution(agent.address, principal.address, ACTION, MAX);
      expect(await used()).to.equal(MAX);
    });

    it("test_OperatorCannotGrant: an approved operator grants → NotPrincipal", async () => {
      const { mandate, principal, operator, params } = await loadFixture(deployFixture);
      await mandate.connect(principal).setOperator(principal.address, operator.address, true, 0, "0x");
      await expect(mandate.connect(operator).grantMandate(await params(), "0x")).to.be.revertedWithCustomError(
        mandate,
        "NotPrincipal",
      );
    });

    it("test_RecordByAsset: the token contract records 100 → cumulativeUsed 100", async () => {
      const { mandate, principal, agent, tokenAddress, used } = await loadFixture(grantedFixture);
      await impersonateAccount(tokenAddress);
      await setBalance(tokenAddress, ethers.parseEther("1"));
      const asToken = await ethers.getSigner(tokenAddress);
      await mandate.connect(asToken).recordExecution(agent.address, principal.address, ACTION, 100);
      await stopImpersonatingAccount(tokenAddress);
      expect(await used()).to.equal(100n);
    });

    it("test_RecordByPrincipal: the principal records 100 → cumulativeUsed 100", async () => {
      const { mandate, principal, agent, used } = await loadFixture(grantedFixture);
      await mandate.connect(principal).recordExecution(agent.address, principal.address, ACTION, 100);
      expect(await used()).to.equal(100n);
    });

    it("test_RecordByRecorderRole: the admin grants RECORDER_ROLE; the recorder records 100 → cumulativeUsed 100", async () => {
      const { mandate, admin, recorder, principal, agent, RECORDER_ROLE, used } = await loadFixture(grantedFixture);
      await mandate.connect(admin).grantRole(RECORDER_ROLE, recorder.address);
      await mandate.connect(recorder).recordExecution(agent.address, principal.address, ACTION, 100);
      expect(await used()).to.equal(100n);
    });

    it("test_RecordRevertsActionNotEnabled: record OTHER_ACTION → NotExecutable", async () => {
      const { mandate, principal, agent } = await loadFixture(grantedFixture);
      await expect(
        mandate.connect(principal).recordExecution(agent.address, principal.address, OTHER_ACTION, 100),
      ).to.be.revertedWithCustomError(mandate, "NotExecutable");
    });

    it("test_RecordRevertsOverCumulativeCap: record 1000, then 1000 (2000 > 1500) → ExceedsCumulativeCap", async () => {
      const { mandate, principal, agent } = await loadFixture(grantedFixture);
      await mandate.connect(principal).recordExecution(agent.address, principal.address, ACTION, 1000);
      await expect(
        mandate.connect(principal).recordExecution(agent.address, principal.address, ACTION, 1000),
      ).to.be.revertedWithCustomError(mandate, "ExceedsCumulativeCap");
    });

    it("test_RecordRevertsOverTxCap: record 1001 → ExceedsTransactionCap", async () => {
      const { mandate, principal, agent } = await loadFixture(grantedFixture);
      await expect(
        mandate.connect(principal).recordExecution(agent.address, principal.address, ACTION, 1001),
      ).to.be.revertedWithCustomError(mandate, "ExceedsTransactionCap");
    });

    it("test_RecordRevertsUnauthorized: a stranger records → UnauthorizedRecorder", async () => {
      const { mandate, stranger, principal, agent } = await loadFixture(grantedFixture);
      await expect(
        mandate.connect(stranger).recordExecution(agent.address, principal.address, ACTION, 100),
      ).to.be.revertedWithCustomError(mandate, "UnauthorizedRecorder");
    });

    it("test_RecordRevertsWhenFrozen: frozen agent, the principal records → NotExecutable", async () => {
      const { mandate, enforcer, principal, agent, makeEnforcer } = await loadFixture(grantedFixture);
      await makeEnforcer();
      await mandate.connect(enforcer).freezeAgent(agent.address);
      await expect(
        mandate.connect(principal).recordExecution(agent.address, principal.address, ACTION, 100),
      ).to.be.revertedWithCustomError(mandate, "NotExecutable");
    });

    it("test_RecordRevertsWhenRevoked: revoke, then record → NotExecutable", async () => {
      const { mandate, principal, agent } = await loadFixture(grantedFixture);
      await mandate.connect(principal).revokeMandate(agent.address, principal.address, 0, "0x");
      await expect(
        mandate.connect(principal).recordExecution(agent.address, principal.address, ACTION, 100),
      ).to.be.revertedWithCustomError(mandate, "NotExecutable");
    });

    it("test_RegrantAfterExpiry: grant for 100 s, 101 s later grant again → canExecute true", async () => {
      const { grant, canExecute } = await loadFixture(deployFixture);
      await grant({ validUntil: (await time.latest()) + 100 });
      await time.increase(101);
      await grant();
      expect(await canExecute(100)).to.equal(true);
    });

    it("test_RegrantAfterRevoke: revoke, grant again → canExecute true", async () => {
      const { mandate, principal, agent, grant, canExecute } = await loadFixture(grantedFixture);
      await mandate.connect(principal).revokeMandate(agent.address, principal.address, 0, "0x");
      await grant();
      expect(await canExecute(100)).to.equal(true);
    });

    it("test_RevokeByOperator: the operator revokes → canExecute false", async () => {
      const { mandate, principal, operator, agent, canExecute } = await loadFixture(grantedFixture);
      await mandate.connect(principal).setOperator(principal.address, operator.address, true, 0, "0x");
      await mandate.connect(operator).revokeMandate(agent.address, principal.address, 0, "0x");
      expect(await canExecute(100)).to.equal(false);
    });

    it("test_RevokeByPrincipal: the principal revokes → canExecute false", async () => {
      const { mandate, principal, agent, canExecute } = await loadFixture(grantedFixture);
      await mandate.connect(principal).revokeMandate(agent.address, principal.address, 0, "0x");
      expect(await canExecute(100)).to.equal(false);
    });

    it("test_RevokeBySignature: a relayer submits a RevokeMandate signature → canExecute false", async () => {
      const { mandate, principal, relayer, agent, canExecute } = await loadFixture(grantedFixture);
      const deadline = await hourFromNow();
      const sig = await signRevoke(principal, mandate, {
        agent: agent.address,
        principal: principal.address,
        deadline,
      });
      await mandate.connect(relayer).revokeMandate(agent.address, principal.address, deadline, sig);
      expect(await canExecute(100)).to.equal(false);
    });

    it("test_RevokeRevertsNoActiveMandate: revoke with no mandate → NoActiveMandate", async () => {
      const { mandate, principal, agent } = await loadFixture(deployFixture);
      await expect(
        mandate.connect(principal).revokeMandate(agent.address, principal.address, 0, "0x"),
      ).to.be.revertedWithCustomError(mandate, "NoActiveMandate");
    });

    it("test_RevokeRevertsNotAuthorized: a stranger, empty signature → NotAuthorized", async () => {
      const { mandate, stranger, principal, agent } = await loadFixture(grantedFixture);
      await expect(
        mandate.connect(stranger).revokeMandate(agent.address, principal.address, 0, "0x"),
      ).to.be.revertedWithCustomError(mandate, "NotAuthorized");
    });

    it("test_SetOperatorBySignature: a relayer submits a SetOperator signature → isOperator true", async () => {
      const { mandate, principal, operator, relayer } = await loadFixture(deployFixture);
      const deadline = await hourFromNow();
      const sig = await signSetOperator(principal, mandate, {
        principal: principal.address,
        operator: operator.address,
        approved: true,
        deadline,
      });
      await mandate.connect(relayer).setOperator(principal.address, operator.address, true, deadline, sig);
      expect(await mandate.isOperator(principal.address, operator.address)).to.equal(true);
    });

    it("test_SignatureExpired: past the deadline, the SetOperator signature → SignatureExpired", async () => {
      const { mandate, principal, operator, relayer } = await loadFixture(deployFixture);
      const deadline = await hourFromNow();
      const sig = await signSetOperator(principal, mandate, {
        principal: principal.address,
        operator: operator.address,
        approved: true,
        deadline,
      });
      await time.increaseTo(deadline + 1);
      await expect(
        mandate.connect(relayer).setOperator(principal.address, operator.address, true, deadline, sig),
      ).to.be.revertedWithCustomError(mandate, "SignatureExpired");
    });

    it("test_SignatureReplayRejected: the same SetOperator signature twice → the second is InvalidSignature", async () => {
      const { mandate, principal, operator, relayer } = await loadFixture(deployFixture);
      const deadline = await hourFromNow();
      const sig = await signSetOperator(principal, mandate, {
        principal: principal.address,
        operator: operator.address,
        approved: true,
        deadline,
      });
      await mandate.connect(relayer).setOperator(principal.address, operator.address, true, deadline, sig);
      await expect(
        mandate.connect(relayer).setOperator(principal.address, operator.address, true, deadline, sig),
      ).to.be.revertedWithCustomError(mandate, "InvalidSignature");
    });

    it("test_SupportsInterface: true for IAgentMandate and IERC165, false for 0xffffffff", async () => {
      const { mandate } = await loadFixture(deployFixture);
      expect(await mandate.supportsInterface(await interfaceIdOf("IAgentMandate"))).to.equal(true);
      expect(await mandate.supportsInterface(IERC165_ID)).to.equal(true);
      expect(await mandate.supportsInterface("0xffffffff")).to.equal(false);
    });
  });

  // ------------------------------------------------------------------------------------------------------------------
  describe("ABI identity with ERC-8226", () => {
    it("ERC-165: type(IAgentMandate).interfaceId is 0x44aef2f5 and is supported, with IAccessControl and IERC165", async () => {
      const { mandate } = await loadFixture(deployFixture);
      expect(await interfaceIdOf("IAgentMandate")).to.equal("0x44aef2f5");
      expect(await mandate.supportsInterface("0x44aef2f5")).to.equal(true);
      expect(await mandate.supportsInterface(IACCESS_CONTROL_ID)).to.equal(true);
      expect(await mandate.supportsInterface("0xfa2a39b3")).to.equal(false);
    });

    it("IAgentMandate declares exactly the ERC's functions, with the ERC's selectors", async () => {
      const iface = new ethers.Interface((await hre.artifacts.readArtifact("IAgentMandate")).abi);
      const expected: Record<string, string> = {
        "grantMandate((address,uint48,uint48,address,address,bytes32,address,uint256,uint256,bytes32,bytes32[],uint256),bytes)":
          "0xc6a4ad00",
        "revokeMandate(address,address,uint256,bytes)": "0x5e20639e",
        "extendMandate(address,address,uint48,uint256,bytes)": "0x98d22b55",
        "setOperator(address,address,bool,uint256,bytes)": "0x5e6f170b",
        "recordExecution(address,address,bytes32,uint256)": "0xb48faccf",
        "canExecute(address,address,address,bytes32,uint256)": "0xf80ba00f",
        "getMandate(address,address)": "0xc5e98345",
        "freezeAgent(address)": "0x267fbac5",
        "unfreezeAgent(address)": "0xa2e97ab4",
        "isFrozen(address)": "0xe5839836",
        "isOperator(address,address)": "0xb6363cf2",
        "isActionEnabled(address,address,bytes32)": "0x0c53b010",
        "nonces(address)": "0x7ecebe00",
        "DOMAIN_SEPARATOR()": "0x3644e515",
        "supportsInterface(bytes4)": "0x01ffc9a7",
      };
      const actual: Record<string, string> = {};
      iface.forEachFunction((fn) => {
        actual[fn.format("sighash")] = fn.selector;
      });
      expect(actual).to.deep.equal(expected);
      // The registry exposes the same selectors.
      const registry = new ethers.Interface((await hre.artifacts.readArtifact("AgentMandate")).abi);
      for (const [sig, selector] of Object.entries(expected))
        expect(registry.getFunction(sig)!.selector).to.equal(selector);
    });

    it("every function and event entry of the compiled IAgentMandate ABI appears unchanged in AgentMandate's ABI", async () => {
      await expectAbiSubset("IAgentMandate", "AgentMandate");
    });

    it("the Mandate struct returned by getMandate has the ERC's field names, types and order", async () => {
      const { mandate } = await loadFixture(deployFixture);
      const output = mandate.interface.getFunction("getMandate").outputs;
      expect(output.length).to.equal(1);
      expect(output[0].format("full")).to.equal(
        "(address agent, uint48 validFrom, uint48 validUntil, address principal, bool revoked, address complianceProvider, bytes32 identityRef, address asset, uint256 maxTransactionValue, uint256 maxCumulativeValue, uint256 cumulativeUsed, bytes32 metadata)",
      );
    });

    it("the eight events have the ERC's names, types, indexed flags and order (topics as computed)", async () => {
      const iface = new ethers.Interface((await hre.artifacts.readArtifact("IAgentMandate")).abi);
      const events: string[] = [];
      iface.forEachEvent((ev) => {
        events.push(ev.format("full"));
      });
      expect(events.sort()).to.deep.equal(
        [
          "event MandateGranted(address indexed agent, address indexed principal, address complianceProvider, address asset, uint48 validFrom, uint48 validUntil, bytes32 metadata)",
          "event ActionEnabled(address indexed agent, address indexed principal, bytes32 indexed action)",
          "event MandateRevoked(address indexed agent, address indexed principal, address revokedBy)",
          "event MandateExtended(address indexed agent, address indexed principal, uint48 newValidUntil)",
          "event OperatorSet(address indexed principal, address indexed operator, bool approved)",
          "event ExecutionRecorded(address indexed agent, address indexed principal, bytes32 indexed action, uint256 amount, uint256 cumulativeUsed)",
          "event AgentFrozen(address indexed agent, address indexed enforcer)",
          "event AgentUnfrozen(address indexed agent, address indexed enforcer)",
        ].sort(),
      );
      const topic = (name: string) => iface.getEvent(name)!.topicHash;
      expect(topic("MandateGranted")).to.match(/^0xa720148a[0-9a-f]{52}ab83$/);
      expect(topic("ExecutionRecorded")).to.match(/^0x9965291c[0-9a-f]{52}c286$/);
      expect(topic("AgentFrozen")).to.match(/^0x9d6c91df[0-9a-f]{52}a011$/);
    });

    it("the registry's custom errors have the ERC's selectors", async () => {
      const { mandate } = await loadFixture(deployFixture);
      const expected: Record<string, string> = {
        ZeroComplianceProvider: "0xa8b4d2be",
        MandateAlreadyActive: "0x8f2d3ce4",
        NoActiveMandate: "0xfc316461",
        PrincipalNotEligible: "0x8d64f6c5",
        InvalidExpiry: "0xd36c8500",
        NotPrincipal: "0x789a70b0",
        NotAuthorized: "0xea8e4eb5",
        SignatureExpired: "0x0819bdcd",
        InvalidSignature: "0x8baa579f",
        UnauthorizedRecorder: "0xb199d472",
        NotExecutable: "0x47ee14ea",
        ExceedsTransactionCap: "0x6480f20c",
        ExceedsCumulativeCap: "0x30c377a8",
        AdminEnforcerOverlap: "0x8320e6a5",
      };
      for (const [name, selector] of Object.entries(expected)) {
        const error = mandate.interface.getError(name)!;
        expect(error.inputs.length, name).to.equal(0);
        expect(error.selector, name).to.equal(selector);
      }
    });

    it("ENFORCER_ROLE and RECORDER_ROLE are keccak256 of their names; the admin role administers both", async () => {
      const { mandate, ENFORCER_ROLE, RECORDER_ROLE } = await loadFixture(deployFixture);
      expect(ENFORCER_ROLE).to.equal("0x973ef39d76cc2c6090feab1c030bec6ab5db557f64df047a4c4f9b5953cf1df3");
      expect(ENFORCER_ROLE).to.equal(ethers.id("ENFORCER_ROLE"));
      expect(RECORDER_ROLE).to.equal("0xf996da754c790e95d5c7ca3330cfcad529487fe9d1d8edb7afc65076fdf9adb4");
      expect(RECORDER_ROLE).to.equal(ethers.id("RECORDER_ROLE"));
      expect(await mandate.getRoleAdmin(ENFORCER_ROLE)).to.equal(DEFAULT_ADMIN_ROLE);
      expect(await mandate.getRoleAdmin(RECORDER_ROLE)).to.equal(DEFAULT_ADMIN_ROLE);
    });

    it("EIP-712 domain: name RAMS, version 1, this chain and registry; DOMAIN_SEPARATOR matches ethers", async () => {
      const { mandate } = await loadFixture(deployFixture);
      const domain = await domainOf(mandate);
      expect(await mandate.DOMAIN_SEPARATOR()).to.equal(ethers.TypedDataEncoder.hashDomain(domain));
      const [, name, version, chainId, verifyingContract] = await mandate.eip712Domain();
      expect([name, version, chainId, verifyingContract]).to.deep.equal([
        "RAMS",
        "1",
        domain.chainId,
        domain.verifyingContract,
      ]);
    });

    it("the four EIP-712 typehashes: keccak256 of the exact type strings, ethers encodes the same types", async () => {
      for (const [primary, { typeString, typehash }] of Object.entries(TYPE_STRINGS)) {
        expect(ethers.id(typeString), primary).to.equal(typehash);
        expect(ethers.TypedDataEncoder.from(TYPES[primary]).encodeType(primary), primary).to.equal(typeString);
      }
    });

    it("the registry hashes with those exact typehashes: signatures over hand-built digests verify for all four types", async () => {
      const { mandate, compliance, complianceOwner, relayer, operator, agent, params } = await loadFixture(
        deployFixture,
      );
      // A principal whose key is at hand, so the digest can be built by hand and signed raw.
      const key = ethers.Wallet.createRandom();
      await compliance.connect(complianceOwner).grantPrincipal(key.address, IDREF, 0);
      const coder = ethers.AbiCoder.defaultAbiCoder();
      const separator = await mandate.DOMAIN_SEPARATOR();
      const signDigest = (structHash: string) =>
        key.signingKey.sign(
          ethers.solidityPackedKeccak256(["bytes2", "bytes32", "bytes32"], ["0x1901", separator, structHash]),
        ).serialized;
      const deadline = await hourFromNow();

      const p = await params({ principal: key.address, deadline, actions: [ACTION, OTHER_ACTION] });
      const grantHash = ethers.keccak256(
        coder.encode(
          [
            "bytes32",
            "address",
            "uint48",
            "uint48",
            "address",
            "address",
            "bytes32",
            "address",
            "uint256",
            "uint256",
            "bytes32",
            "bytes32",
            "uint256",
            "uint256",
          ],
          [
            TYPE_STRINGS.GrantMandate.typehash,
            p.agent,
            p.validFrom,
            p.validUntil,
            p.principal,
            p.complianceProvider,
            p.identityRef,
            p.asset,
            p.maxTransactionValue,
            p.maxCumulativeValue,
            p.metadata,
            ethers.solidityPackedKeccak256(["bytes32[]"], [p.actions]),
            0,
            p.deadline,
          ],
        ),
      );
      await mandate.connect(relayer).grantMandate(p, signDigest(grantHash));

      const setOpHash = ethers.keccak256(
        coder.encode(
          ["bytes32", "address", "address", "bool", "uint256", "uint256"],
          [TYPE_STRINGS.SetOperator.typehash, key.address, operator.address, true, 1, deadline],
        ),
      );
      await mandate.connect(relayer).setOperator(key.address, operator.address, true, deadline, signDigest(setOpHash));

      const newUntil = (await time.latest()) + 5 * DAY;
      const extendHash = ethers.keccak256(
        coder.encode(
          ["bytes32", "address", "address", "uint48", "uint256", "uint256"],
          [TYPE_STRINGS.ExtendMandate.typehash, agent.address, key.address, newUntil, 2, deadline],
        ),
      );
      await mandate
        .connect(relayer)
        .extendMandate(agent.address, key.address, newUntil, deadline, signDigest(extendHash));

      const revokeHash = ethers.keccak256(
        coder.encode(
          ["bytes32", "address", "address", "uint256", "uint256"],
          [TYPE_STRINGS.RevokeMandate.typehash, agent.address, key.address, 3, deadline],
        ),
      );
      await mandate.connect(relayer).revokeMandate(agent.address, key.address, deadline, signDigest(revokeHash));

      const m = await mandate.getMandate(agent.address, key.address);
      expect([m.validUntil, m.revoked]).to.deep.equal([BigInt(newUntil), true]);
      expect(await mandate.isOperator(key.address, operator.address)).to.equal(true);
      expect(await mandate.nonces(key.address)).to.equal(4n);
    });
  });

  // ------------------------------------------------------------------------------------------------------------------
  describe("check order where it is observable", () => {
    it("grantMandate: a zero provider and a past validUntil together → ZeroComplianceProvider", async () => {
      const { mandate, grant } = await loadFixture(deployFixture);
      await expect(
        grant({ complianceProvider: ethers.ZeroAddress, validUntil: (await time.latest()) - 10 }),
      ).to.be.revertedWithCustomError(mandate, "ZeroComplianceProvider");
    });

    it("grantMandate: InvalidExpiry comes before MandateAlreadyActive", async () => {
      const { mandate, grant } = await loadFixture(grantedFixture);
      await expect(grant({ validUntil: await time.latest() })).to.be.revertedWithCustomError(mandate, "InvalidExpiry");
    });

    it("grantMandate: MandateAlreadyActive comes before authorization (a stranger sees it)", async () => {
      const { mandate, stranger, params } = await loadFixture(grantedFixture);
      await expect(mandate.connect(stranger).grantMandate(await params(), "0x")).to.be.revertedWithCustomError(
        mandate,
        "MandateAlreadyActive",
      );
    });

    it("grantMandate: authorization comes before eligibility (NotPrincipal, SignatureExpired, InvalidSignature for an ineligible principal)", async () => {
      const { mandate, compliance, complianceOwner, principal, stranger, wrong, relayer, params } = await loadFixture(
        deployFixture,
      );
      await compliance.connect(complianceOwner).revokePrincipal(principal.address, ReasonCode.AML_FLAG);
      await expect(mandate.connect(stranger).grantMandate(await params(), "0x")).to.be.revertedWithCustomError(
        mandate,
        "NotPrincipal",
      );
      const expired = await params({ deadline: (await time.latest()) - 1 });
      await expect(
        mandate.connect(relayer).grantMandate(expired, await signGrant(principal, mandate, expired)),
      ).to.be.revertedWithCustomError(mandate, "SignatureExpired");
      const p = await params({ deadline: await hourFromNow() });
      await expect(
        mandate.connect(relayer).grantMandate(p, await signGrant(wrong, mandate, p)),
      ).to.be.revertedWithCustomError(mandate, "InvalidSignature");
    });

    it("signature path: the deadline is checked before the signature (an expired garbage signature → SignatureExpired)", async () => {
      const { mandate, relayer, params } = await loadFixture(deployFixture);
      const p = await params({ deadline: (await time.latest()) - 1 });
      await expect(mandate.connect(relayer).grantMandate(p, "0x1234")).to.be.revertedWithCustomError(
        mandate,
        "SignatureExpired",
      );
    });

    it("revokeMandate: NoActiveMandate comes before authorization (a stranger on a missing or revoked mandate)", async () => {
      const { mandate, principal, stranger, agent, agent2 } = await loadFixture(grantedFixture);
      await expect(
        mandate.connect(stranger).revokeMandate(agent2.address, principal.address, 0, "0x"),
      ).to.be.revertedWithCustomError(mandate, "NoActiveMandate");
      await mandate.connect(principal).revokeMandate(agent.address, principal.address, 0, "0x");
      await expect(
        mandate.connect(stranger).revokeMandate(agent.address, principal.address, 0, "0x"),
      ).to.be.revertedWithCustomError(mandate, "NoActiveMandate");
      await expect(
        mandate.connect(principal).revokeMandate(agent.address, principal.address, 0, "0x"),
      ).to.be.revertedWithCustomError(mandate, "NoActiveMandate");
    });

    it("extendMandate on an expired and revoked mandate, by a stranger → NoActiveMandate", async () => {
      const { mandate, principal, stranger, agent, grant } = await loadFixture(deployFixture);
      await grant({ validUntil: (await time.latest()) + 100 });
      await mandate.connect(principal).revokeMandate(agent.address, principal.address, 0, "0x");
      await time.increase(200);
      await expect(
        mandate.connect(stranger).extendMandate(agent.address, principal.address, (await time.latest()) + DAY, 0, "0x"),
      ).to.be.revertedWithCustomError(mandate, "NoActiveMandate");
    });

    it("extendMandate: NoActiveMandate for a missing or revoked mandate, even for the principal", async () => {
      const { mandate, principal, agent, agent2 } = await loadFixture(grantedFixture);
      const later = (await time.latest()) + 10 * DAY;
      await expect(
        mandate.connect(principal).extendMandate(agent2.address, principal.address, later, 0, "0x"),
      ).to.be.revertedWithCustomError(mandate, "NoActiveMandate");
      await mandate.connect(principal).revokeMandate(agent.address, principal.address, 0, "0x");
      await expect(
        mandate.connect(principal).extendMandate(agent.address, principal.address, later, 0, "0x"),
      ).to.be.revertedWithCustomError(mandate, "NoActiveMandate");
    });

    it("extendMandate: InvalidExpiry (earlier or equal) comes before authorization; then a stranger gets NotAuthorized", async () => {
      const { mandate, principal, stranger, agent } = await loadFixture(grantedFixture);
      const current = (await mandate.getMandate(agent.address, principal.address)).validUntil;
      await expect(
        mandate.connect(stranger).extendMandate(agent.address, principal.address, current - 1n, 0, "0x"),
      ).to.be.revertedWithCustomError(mandate, "InvalidExpiry");
      await expect(
        mandate.connect(stranger).extendMandate(agent.address, principal.address, current + 1n, 0, "0x"),
      ).to.be.revertedWithCustomError(mandate, "NotAuthorized");
    });

    it("recordExecution by an unauthorized caller on a frozen agent → UnauthorizedRecorder (caller checked first)", async () => {
      const { mandate, enforcer, stranger, principal, agent, makeEnforcer } = await loadFixture(grantedFixture);
      await makeEnforcer();
      await mandate.connect(enforcer).freezeAgent(agent.address);
      await expect(
        mandate.connect(stranger).recordExecution(agent.address, principal.address, ACTION, 100),
      ).to.be.revertedWithCustomError(mandate, "UnauthorizedRecorder");
      // and with no mandate at all
      await expect(
        mandate.connect(stranger).recordExecution(stranger.address, principal.address, ACTION, 1),
      ).to.be.revertedWithCustomError(mandate, "UnauthorizedRecorder");
    });

    it("recordExecution: NotExecutable comes before the caps; the per-tx cap before the cumulative cap", async () => {
      const { mandate, enforcer, principal, agent, makeEnforcer } = await loadFixture(grantedFixture);
      await mandate.connect(principal).recordExecution(agent.address, principal.address, ACTION, 1000);
      // 1001 breaks both caps: the per-transaction one is reported
      await expect(
        mandate.connect(principal).recordExecution(agent.address, principal.address, ACTION, 1001),
      ).to.be.revertedWithCustomError(mandate, "ExceedsTransactionCap");
      await makeEnforcer();
      await mandate.connect(enforcer).freezeAgent(agent.address);
      await expect(
        mandate.connect(principal).recordExecution(agent.address, principal.address, ACTION, 5000),
      ).to.be.revertedWithCustomError(mandate, "NotExecutable");
    });
  });

  // ------------------------------------------------------------------------------------------------------------------
  describe("every revert path", () => {
    it("grantMandate: InvalidExpiry when validUntil <= validFrom (a future validFrom)", async () => {
      const { mandate, grant } = await loadFixture(deployFixture);
      const t = (await time.latest()) + DAY;
      await expect(grant({ validFrom: t, validUntil: t })).to.be.revertedWithCustomError(mandate, "InvalidExpiry");
      await expect(grant({ validFrom: t + 1, validUntil: t })).to.be.revertedWithCustomError(mandate, "InvalidExpiry");
      await expect(grant({ validFrom: t, validUntil: t + 1 })).to.not.be.reverted;
    });

    it("grantMandate: PrincipalNotEligible for a wrong identity ref, an expired KYC, or a principal the provider never saw", async () => {
      const { mandate, compliance, complianceOwner, principal, principal2, grant, params } = await loadFixture(
        deployFixture,
      );
      await expect(grant({ identityRef: ethers.id("someone-else") })).to.be.revertedWithCustomError(
        mandate,
        "PrincipalNotEligible",
      );
      await expect(
        mandate.connect(principal2).grantMandate(await params({ principal: principal2.address }), "0x"),
      ).to.be.revertedWithCustomError(mandate, "PrincipalNotEligible");
      await compliance.connect(complianceOwner).grantPrincipal(principal.address, IDREF, (await time.latest()) + 60);
      await time.increase(120);
      await expect(grant()).to.be.revertedWithCustomError(mandate, "PrincipalNotEligible");
    });

    it("grantMandate: a compliance provider without code makes the grant revert (no data)", async () => {
      const { stranger, grant } = await loadFixture(deployFixture);
      await expect(grant({ complianceProvider: stranger.address })).to.be.revertedWithoutReason();
    });

    it("grantMandate: a non-empty signature is verified even when the principal sends it", async () => {
      const { mandate, principal, wrong, params } = await loadFixture(deployFixture);
      const p = await params({ deadline: await hourFromNow() });
      await expect(
        mandate.connect(principal).grantMandate(p, await signGrant(wrong, mandate, p)),
      ).to.be.revertedWithCustomError(mandate, "InvalidSignature");
      await expect(mandate.connect(principal).grantMandate(p, "0x00")).to.be.revertedWithCustomError(
        mandate,
        "InvalidSignature",
      );
    });

    it("grantMandate: an ERC-1271 wallet principal rejects a signature by another key → InvalidSignature", async () => {
      const { mandate, compliance, complianceOwner, wrong, walletOwner, relayer, params } = await loadFixture(
        deployFixture,
      );
      const wallet = await ethers.deployContract("ERC1271WalletMock", [walletOwner.address]);
      const walletAddress = await wallet.getAddress();
      await compliance.connect(complianceOwner).grantPrincipal(walletAddress, IDREF, 0);
      const p = await params({ principal: walletAddress, deadline: await hourFromNow() });
      await expect(
        mandate.connect(relayer).grantMandate(p, await signGrant(wrong, mandate, p)),
      ).to.be.revertedWithCustomError(mandate, "InvalidSignature");
    });

    it("grantMandate: a signature for other parameters, another registry or a stale nonce → InvalidSignature", async () => {
      const { mandate, principal, relayer, admin, params } = await loadFixture(deployFixture);
      const p = await params({ deadline: await hourFromNow() });
      const forOtherCaps = await signGrant(principal, mandate, { ...p, maxTransactionValue: 999 });
      await expect(mandate.connect(relayer).grantMandate(p, forOtherCaps)).to.be.revertedWithCustomError(
        mandate,
        "InvalidSignature",
      );
      const other = await ethers.deployContract("AgentMandate", [admin.address]);
      const forOtherRegistry = await principal.signTypedData(await domainOf(other), TYPES.GrantMandate, {
        ...p,
        nonce: 0,
      });
      await expect(mandate.connect(relayer).grantMandate(p, forOtherRegistry)).to.be.revertedWithCustomError(
        mandate,
        "InvalidSignature",
      );
      const withNonce1 = await signGrant(principal, mandate, p, 1n);
      await expect(mandate.connect(relayer).grantMandate(p, withNonce1)).to.be.revertedWithCustomError(
        mandate,
        "InvalidSignature",
      );
    });

    it("revokeMandate: SignatureExpired and InvalidSignature on the signature path", async () => {
      const { mandate, principal, wrong, relayer, agent } = await loadFixture(grantedFixture);
      const late = (await time.latest()) - 1;
      const value = { agent: agent.address, principal: principal.address, deadline: late };
      await expect(
        mandate
          .connect(relayer)
          .revokeMandate(agent.address, principal.address, late, await signRevoke(principal, mandate, value)),
      ).to.be.revertedWithCustomError(mandate, "SignatureExpired");
      const deadline = await hourFromNow();
      const bad = await signRevoke(wrong, mandate, { ...value, deadline });
      await expect(
        mandate.connect(relayer).revokeMandate(agent.address, principal.address, deadline, bad),
      ).to.be.revertedWithCustomError(mandate, "InvalidSignature");
    });

    it("revokeMandate: an operator the principal has disapproved again → NotAuthorized", async () => {
      const { mandate, principal, operator, agent } = await loadFixture(grantedFixture);
      await mandate.connect(principal).setOperator(principal.address, operator.address, true, 0, "0x");
      await mandate.connect(principal).setOperator(principal.address, operator.address, false, 0, "0x");
      await expect(
        mandate.connect(operator).revokeMandate(agent.address, principal.address, 0, "0x"),
      ).to.be.revertedWithCustomError(mandate, "NotAuthorized");
    });

    it("extendMandate: SignatureExpired and InvalidSignature on the signature path", async () => {
      const { mandate, principal, wrong, relayer, agent } = await loadFixture(grantedFixture);
      const newValidUntil = (await time.latest()) + 10 * DAY;
      const late = (await time.latest()) - 1;
      const value = { agent: agent.address, principal: principal.address, newValidUntil, deadline: late };
      await expect(
        mandate
          .connect(relayer)
          .extendMandate(
            agent.address,
            principal.address,
            newValidUntil,
            late,
            await signExtend(principal, mandate, value),
          ),
      ).to.be.revertedWithCustomError(mandate, "SignatureExpired");
      const deadline = await hourFromNow();
      const bad = await signExtend(wrong, mandate, { ...value, deadline });
      await expect(
        mandate.connect(relayer).extendMandate(agent.address, principal.address, newValidUntil, deadline, bad),
      ).to.be.revertedWithCustomError(mandate, "InvalidSignature");
    });

    it("setOperator: NotPrincipal for a stranger or an operator; SignatureExpired; InvalidSignature", async () => {
      const { mandate, principal, operator, stranger, wrong, relayer } = await loadFixture(deployFixture);
      await expect(
        mandate.connect(stranger).setOperator(principal.address, stranger.address, true, 0, "0x"),
      ).to.be.revertedWithCustomError(mandate, "NotPrincipal");
      await mandate.connect(principal).setOperator(principal.address, operator.address, true, 0, "0x");
      await expect(
        mandate.connect(operator).setOperator(principal.address, stranger.address, true, 0, "0x"),
      ).to.be.revertedWithCustomError(mandate, "NotPrincipal");
      const value = { principal: principal.address, operator: stranger.address, approved: true, deadline: 0 };
      await expect(
        mandate
          .connect(relayer)
          .setOperator(principal.address, stranger.address, true, 0, await signSetOperator(principal, mandate, value)),
      ).to.be.revertedWithCustomError(mandate, "SignatureExpired");
      const deadline = await hourFromNow();
      const bad = await signSetOperator(wrong, mandate, { ...value, deadline });
      await expect(
        mandate.connect(relayer).setOperator(principal.address, stranger.address, true, deadline, bad),
      ).to.be.revertedWithCustomError(mandate, "InvalidSignature");
    });

    it("freezeAgent / unfreezeAgent: even the admin is refused without ENFORCER_ROLE", async () => {
      const { mandate, admin, agent, ENFORCER_ROLE } = await loadFixture(deployFixture);
      await expect(mandate.connect(admin).freezeAgent(agent.address))
        .to.be.revertedWithCustomError(mandate, "AccessControlUnauthorizedAccount")
        .withArgs(admin.address, ENFORCER_ROLE);
      await expect(mandate.connect(admin).unfreezeAgent(agent.address))
        .to.be.revertedWithCustomError(mandate, "AccessControlUnauthorizedAccount")
        .withArgs(admin.address, ENFORCER_ROLE);
    });

    it("recordExecution: NotExecutable with no mandate (principal calling), before validFrom, after validUntil", async () => {
      const { mandate, principal, agent, agent2, grant } = await loadFixture(deployFixture);
      await expect(
        mandate.connect(principal).recordExecution(agent2.address, principal.address, ACTION, 1),
      ).to.be.revertedWithCustomError(mandate, "NotExecutable");
      const start = (await time.latest()) + 100;
      await grant({ validFrom: start, validUntil: start + 100 });
      await expect(
        mandate.connect(principal).recordExecution(agent.address, principal.address, ACTION, 1),
      ).to.be.revertedWithCustomError(mandate, "NotExecutable");
      await time.increaseTo(start + 101);
      await expect(
        mandate.connect(principal).recordExecution(agent.address, principal.address, ACTION, 1),
      ).to.be.revertedWithCustomError(mandate, "NotExecutable");
    });

    it("recordExecution: the asset of another mandate cannot record for this one → UnauthorizedRecorder", async () => {
      const { mandate, principal, agent, tokenAddress, grant } = await loadFixture(deployFixture);
      const otherToken = await ethers.deployContract("RegulatedTokenMock", ["Other", "OTH", principal.address]);
      const otherAddress = await otherToken.getAddress();
      await grant({ asset: otherAddress });
      await impersonateAccount(tokenAddress);
      await setBalance(tokenAddress, ethers.parseEther("1"));
      const asToken = await ethers.getSigner(tokenAddress);
      await expect(
        mandate.connect(asToken).recordExecution(agent.address, principal.address, ACTION, 1),
      ).to.be.revertedWithCustomError(mandate, "UnauthorizedRecorder");
      await stopImpersonatingAccount(tokenAddress);
    });

    it("recordExecution: with no cumulative cap, a total past type(uint256).max is an arithmetic panic", async () => {
      const { mandate, principal, agent, grant } = await loadFixture(deployFixture);
      await grant({ maxTransactionValue: MAX, maxCumulativeValue: MAX });
      await mandate.connect(principal).recordExecution(agent.address, principal.address, ACTION, MAX);
      await expect(
        mandate.connect(principal).recordExecution(agent.address, principal.address, ACTION, 1),
      ).to.be.revertedWithPanic(PANIC_CODES.ARITHMETIC_OVERFLOW);
    });

    it("grantRole: a non-admin cannot grant roles (AccessControlUnauthorizedAccount)", async () => {
      const { mandate, stranger, ENFORCER_ROLE } = await loadFixture(deployFixture);
      await expect(mandate.connect(stranger).grantRole(ENFORCER_ROLE, stranger.address))
        .to.be.revertedWithCustomError(mandate, "AccessControlUnauthorizedAccount")
        .withArgs(stranger.address, DEFAULT_ADMIN_ROLE);
    });
  });

  // ------------------------------------------------------------------------------------------------------------------
  describe("inclusive validity window", () => {
    async function windowFixture() {
      const f = await deployFixture();
      const validFrom = (await time.latest()) + 100;
      const validUntil = validFrom + 100;
      await f.grant({ validFrom, validUntil });
      return { ...f, validFrom, validUntil };
    }

    it("canExecute is false one second before validFrom, true at exactly validFrom and validUntil, false one second after", async () => {
      const { canExecute, validFrom, validUntil } = await loadFixture(windowFixture);
      await time.increaseTo(validFrom - 1); // views run on the block just mined at this timestamp
      expect(await canExecute(1)).to.equal(false);
      await time.increaseTo(validFrom);
      expect(await canExecute(1)).to.equal(true);
      await time.increaseTo(validUntil);
      expect(await canExecute(1)).to.equal(true);
      await time.increaseTo(validUntil + 1);
      expect(await canExecute(1)).to.equal(false);
    });

    it("recordExecution succeeds in blocks at exactly validFrom and exactly validUntil, not one second outside", async () => {
      const { mandate, principal, agent, used, validFrom, validUntil } = await loadFixture(windowFixture);
      const record = () => mandate.connect(principal).recordExecution(agent.address, principal.address, ACTION, 10);
      await time.setNextBlockTimestamp(validFrom - 1);
      await expect(record()).to.be.revertedWithCustomError(mandate, "NotExecutable");
      await time.setNextBlockTimestamp(validFrom);
      await record();
      await time.setNextBlockTimestamp(validUntil);
      await record();
      await time.setNextBlockTimestamp(validUntil + 1);
      await expect(record()).to.be.revertedWithCustomError(mandate, "NotExecutable");
      expect(await used()).to.equal(20n);
    });

    it("a mandate is still active at exactly validUntil (MandateAlreadyActive) and can be re-granted one second later", async () => {
      const { mandate, grant, validUntil } = await loadFixture(windowFixture);
      await time.setNextBlockTimestamp(validUntil);
      await expect(grant({ validUntil: validUntil + DAY })).to.be.revertedWithCustomError(
        mandate,
        "MandateAlreadyActive",
      );
      await time.setNextBlockTimestamp(validUntil + 1);
      await expect(grant({ validUntil: validUntil + DAY })).to.emit(mandate, "MandateGranted");
    });

    it("extendMandate works at exactly validUntil and is NoActiveMandate one second later", async () => {
      const { mandate, principal, agent, validUntil } = await loadFixture(windowFixture);
      const snapshotless = async (ts: number, until: number) => {
        await time.setNextBlockTimestamp(ts);
        return mandate.connect(principal).extendMandate(agent.address, principal.address, until, 0, "0x");
      };
      await snapshotless(validUntil, validUntil + 10);
      await expect(snapshotless(validUntil + 11, validUntil + 20)).to.be.revertedWithCustomError(
        mandate,
        "NoActiveMandate",
      );
    });

    it("a grant needs validUntil strictly after the block time: equal → InvalidExpiry, one second later → granted", async () => {
      const { mandate, grant } = await loadFixture(deployFixture);
      const t = (await time.latest()) + 10;
      await time.setNextBlockTimestamp(t);
      await expect(grant({ validUntil: t })).to.be.revertedWithCustomError(mandate, "InvalidExpiry");
      await time.setNextBlockTimestamp(t + 1);
      await expect(grant({ validUntil: t + 2 })).to.emit(mandate, "MandateGranted");
    });

    it("a signature is accepted in a block at exactly its deadline and expired one second later", async () => {
      const { mandate, principal, operator, relayer } = await loadFixture(deployFixture);
      const deadline = (await time.latest()) + 100;
      const sign = (approved: boolean, nonce: bigint) =>
        signSetOperator(
          principal,
          mandate,
          { principal: principal.address, operator: operator.address, approved, deadline },
          nonce,
        );
      const first = await sign(true, 0n);
      const second = await sign(false, 1n);
      await time.setNextBlockTimestamp(deadline);
      await mandate.connect(relayer).setOperator(principal.address, operator.address, true, deadline, first);
      await time.setNextBlockTimestamp(deadline + 1);
      await expect(
        mandate.connect(relayer).setOperator(principal.address, operator.address, false, deadline, second),
      ).to.be.revertedWithCustomError(mandate, "SignatureExpired");
    });
  });

  // ------------------------------------------------------------------------------------------------------------------
  describe("nonces: consumed by every lifecycle call, direct or signed (unlike the reference: docs/rams.md)", () => {
    it("direct grant, setOperator, an operator's extend and an operator's revoke each move the principal's nonce by one", async () => {
      const { mandate, principal, operator, agent, grant } = await loadFixture(deployFixture);
      const nonce = () => mandate.nonces(principal.address);
      await grant();
      expect(await nonce()).to.equal(1n);
      await mandate.connect(principal).setOperator(principal.address, operator.address, true, 0, "0x");
      expect(await nonce()).to.equal(2n);
      await mandate
        .connect(operator)
        .extendMandate(agent.address, principal.address, (await time.latest()) + 5 * DAY, 0, "0x");
      expect(await nonce()).to.equal(3n);
      await mandate.connect(operator).revokeMandate(agent.address, principal.address, 0, "0x");
      expect(await nonce()).to.equal(4n);
      expect(await mandate.nonces(operator.address)).to.equal(0n);
    });

    it("a refused direct call leaves the nonce: NotPrincipal, NotAuthorized, MandateAlreadyActive", async () => {
      const { mandate, principal, stranger, agent, grant } = await loadFixture(deployFixture);
      await expect(grant()).not.to.be.reverted;
      await expect(grant()).to.be.revertedWithCustomError(mandate, "MandateAlreadyActive");
      await expect(
        mandate.connect(stranger).setOperator(principal.address, stranger.address, true, 0, "0x"),
      ).to.be.revertedWithCustomError(mandate, "NotPrincipal");
      await expect(
        mandate.connect(stranger).revokeMandate(agent.address, principal.address, 0, "0x"),
      ).to.be.revertedWithCustomError(mandate, "NotAuthorized");
      expect(await mandate.nonces(principal.address)).to.equal(1n);
    });

    it("each signature path moves the nonce on by one: grant 1, setOperator 2, extend 3, revoke 4", async () => {
      const { mandate, principal, operator, relayer, agent, params } = await loadFixture(deployFixture);
      const deadline = await hourFromNow();
      const p = await params({ deadline });
      await mandate.connect(relayer).grantMandate(p, await signGrant(principal, mandate, p));
      expect(await mandate.nonces(principal.address)).to.equal(1n);
      const op = { principal: principal.address, operator: operator.address, approved: true, deadline };
      await mandate
        .connect(relayer)
        .setOperator(
          principal.address,
          operator.address,
          true,
          deadline,
          await signSetOperator(principal, mandate, op),
        );
      expect(await mandate.nonces(principal.address)).to.equal(2n);
      const newValidUntil = (await time.latest()) + 5 * DAY;
      const ext = { agent: agent.address, principal: principal.address, newValidUntil, deadline };
      await mandate
        .connect(relayer)
        .extendMandate(
          agent.address,
          principal.address,
          newValidUntil,
          deadline,
          await signExtend(principal, mandate, ext),
        );
      expect(await mandate.nonces(principal.address)).to.equal(3n);
      const rev = { agent: agent.address, principal: principal.address, deadline };
      await mandate
        .connect(relayer)
        .revokeMandate(agent.address, principal.address, deadline, await signRevoke(principal, mandate, rev));
      expect(await mandate.nonces(principal.address)).to.equal(4n);
    });

    it("failed signature calls leave the nonce: bad signature, expired, and a valid signature whose grant then fails eligibility", async () => {
      const { mandate, compliance, complianceOwner, principal, wrong, relayer, params } = await loadFixture(
        deployFixture,
      );
      const p = await params({ deadline: await hourFromNow() });
      await expect(mandate.connect(relayer).grantMandate(p, await signGrant(wrong, mandate, p))).to.be.reverted;
      const late = await params({ deadline: (await time.latest()) - 1 });
      await expect(mandate.connect(relayer).grantMandate(late, await signGrant(principal, mandate, late))).to.be
        .reverted;
      await compliance.connect(complianceOwner).revokePrincipal(principal.address, ReasonCode.AML_FLAG);
      await expect(
        mandate.connect(relayer).grantMandate(p, await signGrant(principal, mandate, p)),
      ).to.be.revertedWithCustomError(mandate, "PrincipalNotEligible");
      expect(await mandate.nonces(principal.address)).to.equal(0n);
    });

    it("one nonce per principal: using one signature invalidates every other signature made for the same nonce", async () => {
      const { mandate, principal, operator, relayer, agent, params } = await loadFixture(deployFixture);
      const deadline = await hourFromNow();
      const p = await params({ deadline });
      const grantSig = await signGrant(principal, mandate, p); // nonce 0
      const opSig = await signSetOperator(principal, mandate, {
        principal: principal.address,
        operator: operator.address,
        approved: true,
        deadline,
      }); // also nonce 0
      await mandate.connect(relayer).setOperator(principal.address, operator.address, true, deadline, opSig);
      await expect(mandate.connect(relayer).grantMandate(p, grantSig)).to.be.revertedWithCustomError(
        mandate,
        "InvalidSignature",
      );
      expect(await mandate.canExecute(agent.address, principal.address, p.asset, ACTION, 1)).to.equal(false);
    });

    it("nonces are per principal", async () => {
      const { mandate, compliance, complianceOwner, principal, principal2, relayer, params } = await loadFixture(
        deployFixture,
      );
      await compliance.connect(complianceOwner).grantPrincipal(principal2.address, IDREF, 0);
      const p = await params({ principal: principal2.address, deadline: await hourFromNow() });
      await mandate.connect(relayer).grantMandate(p, await signGrant(principal2, mandate, p));
      expect(await mandate.nonces(principal2.address)).to.equal(1n);
      expect(await mandate.nonces(principal.address)).to.equal(0n);
    });

    it("a direct call cancels an outstanding signature: an unused signed grant cannot re-create a mandate the principal granted and revoked directly", async () => {
      const { mandate, principal, relayer, agent, params, canExecute } = await loadFixture(deployFixture);
      const p = await params({ deadline: await hourFromNow() });
      const signed = await signGrant(principal, mandate, p); // for nonce 0, never submitted
      await mandate.connect(principal).grantMandate(p, "0x"); // nonce 0 used here
      await mandate.connect(principal).revokeMandate(agent.address, principal.address, 0, "0x");
      expect(await canExecute(1)).to.equal(false);
      await expect(mandate.connect(relayer).grantMandate(p, signed)).to.be.revertedWithCustomError(
        mandate,
        "InvalidSignature",
      );
      expect((await mandate.getMandate(agent.address, principal.address)).revoked).to.equal(true);
      expect(await canExecute(1)).to.equal(false);
    });
  });

  // ------------------------------------------------------------------------------------------------------------------
  describe("cumulativeUsed, caps and re-grants", () => {
    it("cumulativeUsed survives extend (the cap is not reset) and is reset by a re-grant after revoke", async () => {
      const { mandate, principal, agent, grant, canExecute, used } = await loadFixture(grantedFixture);
      const record = (amount: number) =>
        mandate.connect(principal).recordExecution(agent.address, principal.address, ACTION, amount);
      await record(1000);
      await mandate
        .connect(principal)
        .extendMandate(agent.address, principal.address, (await time.latest()) + 9 * DAY, 0, "0x");
      expect(await used()).to.equal(1000n);
      expect(await canExecute(501)).to.equal(false);
      await expect(record(501)).to.be.revertedWithCustomError(mandate, "ExceedsCumulativeCap");
      await mandate.connect(principal).revokeMandate(agent.address, principal.address, 0, "0x");
      await grant();
      expect(await used()).to.equal(0n);
      expect(await canExecute(1000)).to.equal(true);
      await record(1000);
      expect(await used()).to.equal(1000n);
    });

    it("a re-grant after expiry resets cumulativeUsed and revoked, and replaces every field", async () => {
      const { mandate, principal, agent, complianceOwner, grant, used } = await loadFixture(deployFixture);
      await grant({ validUntil: (await time.latest()) + 100, metadata: ethers.id("v1") });
      await mandate.connect(principal).recordExecution(agent.address, principal.address, ACTION, 700);
      await time.increase(200);
      const provider2 = await ethers.deployContract("ComplianceProvider", [complianceOwner.address]);
      await provider2.connect(complianceOwner).grantPrincipal(principal.address, ethers.id("ref-2"), 0);
      const asset2 = await ethers.deployContract("RegulatedTokenMock", ["Two", "TWO", principal.address]);
      const validUntil = (await time.latest()) + 3 * DAY;
      await grant({
        validFrom: 5,
        validUntil,
        complianceProvider: await provider2.getAddress(),
        identityRef: ethers.id("ref-2"),
        asset: await asset2.getAddress(),
        maxTransactionValue: 7,
        maxCumulativeValue: 70,
        metadata: ethers.id("v2"),
      });
      const m = await mandate.getMandate(agent.address, principal.address);
      expect((m as unknown as Result).toObject()).to.deep.equal({
        agent: agent.address,
        validFrom: 5n,
        validUntil: BigInt(validUntil),
        principal: principal.address,
        revoked: false,
        complianceProvider: await provider2.getAddress(),
        identityRef: ethers.id("ref-2"),
        asset: await asset2.getAddress(),
        maxTransactionValue: 7n,
        maxCumulativeValue: 70n,
        cumulativeUsed: 0n,
        metadata: ethers.id("v2"),
      });
      expect(await used()).to.equal(0n);
    });

    it("a re-grant clears the previous grant's actions; isActionEnabled reflects the latest grant even after revoke", async () => {
      const { mandate, principal, agent, grant, canExecute } = await loadFixture(deployFixture);
      const THIRD = ethers.id("third-action");
      await grant({ actions: [ACTION, OTHER_ACTION] });
      await mandate.connect(principal).revokeMandate(agent.address, principal.address, 0, "0x");
      // still "enabled" (the label list of the latest grant), though the revoked mandate cannot execute it
      expect(await mandate.isActionEnabled(agent.address, principal.address, OTHER_ACTION)).to.equal(true);
      expect(await canExecute(1, OTHER_ACTION)).to.equal(false);
      await grant({ actions: [THIRD, ACTION] });
      expect(await mandate.isActionEnabled(agent.address, principal.address, OTHER_ACTION)).to.equal(false);
      expect(await mandate.isActionEnabled(agent.address, principal.address, ACTION)).to.equal(true);
      expect(await mandate.isActionEnabled(agent.address, principal.address, THIRD)).to.equal(true);
      expect(await canExecute(1, OTHER_ACTION)).to.equal(false);
      expect(await canExecute(1, THIRD)).to.equal(true);
      await expect(
        mandate.connect(principal).recordExecution(agent.address, principal.address, OTHER_ACTION, 1),
      ).to.be.revertedWithCustomError(mandate, "NotExecutable");
    });

    it("a grant with no actions enables nothing; duplicate labels are enabled once and announced per entry", async () => {
      const { mandate, principal, agent, grant, canExecute } = await loadFixture(deployFixture);
      await grant({ actions: [] });
      expect(await canExecute(1)).to.equal(false);
      await mandate.connect(principal).revokeMandate(agent.address, principal.address, 0, "0x");
      const tx = grant({ actions: [ACTION, ACTION] });
      const receipt = await (await tx).wait();
      const enabled = receipt!.logs
        .map((log) => mandate.interface.parseLog(log))
        .filter((parsed) => parsed?.name === "ActionEnabled");
      expect(enabled.length).to.equal(2);
      expect(await canExecute(1)).to.equal(true);
    });

    it("caps: exactly the per-tx cap and exactly the cumulative cap pass; one more unit fails; amount 0 always passes the caps", async () => {
      const { mandate, principal, agent, canExecute, used } = await loadFixture(grantedFixture);
      const record = (amount: number) =>
        mandate.connect(principal).recordExecution(agent.address, principal.address, ACTION, amount);
      expect(await canExecute(1001)).to.equal(false);
      await record(1000);
      expect(await canExecute(500)).to.equal(true);
      expect(await canExecute(501)).to.equal(false);
      await record(500);
      expect(await used()).to.equal(1500n);
      expect(await canExecute(1)).to.equal(false);
      await expect(record(1)).to.be.revertedWithCustomError(mandate, "ExceedsCumulativeCap");
      expect(await canExecute(0)).to.equal(true);
      await expect(record(0))
        .to.emit(mandate, "ExecutionRecorded")
        .withArgs(agent.address, principal.address, ACTION, 0, 1500);
    });

    it("caps of 0 allow only amount 0; one cap unlimited and the other set works independently", async () => {
      const { mandate, principal, agent, grant, canExecute } = await loadFixture(deployFixture);
      await grant({ maxTransactionValue: 0, maxCumulativeValue: 0 });
      expect(await canExecute(0)).to.equal(true);
      expect(await canExecute(1)).to.equal(false);
      await mandate.connect(principal).revokeMandate(agent.address, principal.address, 0, "0x");

      await grant({ maxTransactionValue: MAX, maxCumulativeValue: 1500 });
      expect(await canExecute(1500)).to.equal(true);
      expect(await canExecute(MAX)).to.equal(false); // no overflow: the cumulative check just fails
      await expect(
        mandate.connect(principal).recordExecution(agent.address, principal.address, ACTION, MAX),
      ).to.be.revertedWithCustomError(mandate, "ExceedsCumulativeCap");
      await mandate.connect(principal).revokeMandate(agent.address, principal.address, 0, "0x");

      await grant({ maxTransactionValue: 10, maxCumulativeValue: MAX });
      expect(await canExecute(10)).to.equal(true);
      expect(await canExecute(11)).to.equal(false);
      for (let i = 0; i < 3; i++) {
        await mandate.connect(principal).recordExecution(agent.address, principal.address, ACTION, 10);
      }
      expect((await mandate.getMandate(agent.address, principal.address)).cumulativeUsed).to.equal(30n);
    });

    it("cumulative caps around 2^128 (the storage packing limit) are kept exactly, and re-grants switch between the forms", async () => {
      const { mandate, principal, agent, grant, canExecute } = await loadFixture(deployFixture);
      const record = (amount: bigint) =>
        mandate.connect(principal).recordExecution(agent.address, principal.address, ACTION, amount);
      const view = () => mandate.getMandate(agent.address, principal.address);
      const revoke = () => mandate.connect(principal).revokeMandate(agent.address, principal.address, 0, "0x");
      const LIMIT = 2n ** 128n - 1n;
      for (const cap of [LIMIT, LIMIT + 1n, 2n ** 255n]) {
        await grant({ maxTransactionValue: MAX, maxCumulativeValue: cap });
        expect((await view()).maxCumulativeValue).to.equal(cap);
        expect((await view()).cumulativeUsed).to.equal(0n);
        await record(cap - 5n);
        expect(await canExecute(5n)).to.equal(true);
        expect(await canExecute(6n)).to.equal(false);
        await expect(record(5n))
          .to.emit(mandate, "ExecutionRecorded")
          .withArgs(agent.address, principal.address, ACTION, 5n, cap);
        expect((await view()).cumulativeUsed).to.equal(cap);
        expect((await view()).maxCumulativeValue).to.equal(cap);
        await expect(record(1n)).to.be.revertedWithCustomError(mandate, "ExceedsCumulativeCap");
        await revoke();
      }
      // back to a small cap: nothing of the earlier totals leaks into the new mandate
      await grant();
      expect((await view()).cumulativeUsed).to.equal(0n);
      expect((await view()).maxCumulativeValue).to.equal(1500n);
      await record(1000n);
      expect((await view()).cumulativeUsed).to.equal(1000n);
      await revoke();
      await grant({ maxTransactionValue: MAX, maxCumulativeValue: MAX });
      expect((await view()).cumulativeUsed).to.equal(0n);
    });
  });

  // ------------------------------------------------------------------------------------------------------------------
  describe("roles: admin and enforcer stay apart", () => {
    it("revoking ENFORCER_ROLE, then granting DEFAULT_ADMIN_ROLE to the same account works (revokeRole unaffected)", async () => {
      const { mandate, admin, enforcer, ENFORCER_ROLE, makeEnforcer } = await loadFixture(deployFixture);
      await makeEnforcer();
      await mandate.connect(admin).revokeRole(ENFORCER_ROLE, enforcer.address);
      await expect(mandate.connect(admin).grantRole(DEFAULT_ADMIN_ROLE, enforcer.address)).to.emit(
        mandate,
        "RoleGranted",
      );
      expect(await mandate.hasRole(DEFAULT_ADMIN_ROLE, enforcer.address)).to.equal(true);
    });

    it("an admin who renounces may then be made enforcer by another admin (renounceRole unaffected)", async () => {
      const { mandate, admin, recorder, ENFORCER_ROLE } = await loadFixture(deployFixture);
      await mandate.connect(admin).grantRole(DEFAULT_ADMIN_ROLE, recorder.address);
      await expect(mandate.connect(admin).renounceRole(DEFAULT_ADMIN_ROLE, admin.address)).to.emit(
        mandate,
        "RoleRevoked",
      );
      await mandate.connect(recorder).grantRole(ENFORCER_ROLE, admin.address);
      expect(await mandate.hasRole(ENFORCER_ROLE, admin.address)).to.equal(true);
    });

    it("an enforcer may renounce its role; renouncing for another account is AccessControlBadConfirmation", async () => {
      const { mandate, enforcer, stranger, ENFORCER_ROLE, makeEnforcer } = await loadFixture(deployFixture);
      await makeEnforcer();
      await expect(
        mandate.connect(stranger).renounceRole(ENFORCER_ROLE, enforcer.address),
      ).to.be.revertedWithCustomError(mandate, "AccessControlBadConfirmation");
      await mandate.connect(enforcer).renounceRole(ENFORCER_ROLE, enforcer.address);
      expect(await mandate.hasRole(ENFORCER_ROLE, enforcer.address)).to.equal(false);
    });

    it("the constructor's admin holds DEFAULT_ADMIN_ROLE; RECORDER_ROLE may go to the admin (only the enforcer overlap is refused)", async () => {
      const { mandate, admin, RECORDER_ROLE } = await loadFixture(deployFixture);
      expect(await mandate.hasRole(DEFAULT_ADMIN_ROLE, admin.address)).to.equal(true);
      await mandate.connect(admin).grantRole(RECORDER_ROLE, admin.address);
      expect(await mandate.hasRole(RECORDER_ROLE, admin.address)).to.equal(true);
    });
  });

  // ------------------------------------------------------------------------------------------------------------------
  describe("events and views", () => {
    it("grantMandate emits MandateGranted, then one ActionEnabled per action in order", async () => {
      const { mandate, principal, agent, complianceAddress, tokenAddress, params } = await loadFixture(deployFixture);
      const p = await params({ validFrom: 3, metadata: ethers.id("legal-text"), actions: [OTHER_ACTION, ACTION] });
      const receipt = await (await mandate.connect(principal).grantMandate(p, "0x")).wait();
      const logs = receipt!.logs.map((log) => mandate.interface.parseLog(log)!);
      expect(logs.map((l) => l.name)).to.deep.equal(["MandateGranted", "ActionEnabled", "ActionEnabled"]);
      expect([...logs[0].args]).to.deep.equal([
        agent.address,
        principal.address,
        complianceAddress,
        tokenAddress,
        3n,
        BigInt(p.validUntil),
        ethers.id("legal-text"),
      ]);
      expect([...logs[1].args]).to.deep.equal([agent.address, principal.address, OTHER_ACTION]);
      expect([...logs[2].args]).to.deep.equal([agent.address, principal.address, ACTION]);
    });

    it("revoke, extend, setOperator, record, freeze and unfreeze each emit their event; revokedBy is the relayer on the signature path", async () => {
      const { mandate, principal, operator, relayer, enforcer, agent, makeEnforcer } = await loadFixture(
        grantedFixture,
      );
      await makeEnforcer();
      await expect(mandate.connect(principal).setOperator(principal.address, operator.address, true, 0, "0x"))
        .to.emit(mandate, "OperatorSet")
        .withArgs(principal.address, operator.address, true);
      await expect(mandate.connect(principal).recordExecution(agent.address, principal.address, ACTION, 40))
        .to.emit(mandate, "ExecutionRecorded")
        .withArgs(agent.address, principal.address, ACTION, 40, 40);
      const newUntil = (await time.latest()) + 4 * DAY;
      await expect(mandate.connect(operator).extendMandate(agent.address, principal.address, newUntil, 0, "0x"))
        .to.emit(mandate, "MandateExtended")
        .withArgs(agent.address, principal.address, newUntil);
      await expect(mandate.connect(enforcer).freezeAgent(agent.address))
        .to.emit(mandate, "AgentFrozen")
        .withArgs(agent.address, enforcer.address);
      await expect(mandate.connect(enforcer).unfreezeAgent(agent.address))
        .to.emit(mandate, "AgentUnfrozen")
        .withArgs(agent.address, enforcer.address);
      const deadline = await hourFromNow();
      const sig = await signRevoke(principal, mandate, {
        agent: agent.address,
        principal: principal.address,
        deadline,
      });
      await expect(mandate.connect(relayer).revokeMandate(agent.address, principal.address, deadline, sig))
        .to.emit(mandate, "MandateRevoked")
        .withArgs(agent.address, principal.address, relayer.address);
      expect((await mandate.getMandate(agent.address, principal.address)).revoked).to.equal(true);
    });

    it("getMandate is all zero for a pair never granted; an expired mandate can still be revoked", async () => {
      const { mandate, principal, agent, agent2, grant } = await loadFixture(deployFixture);
      const empty = await mandate.getMandate(agent2.address, principal.address);
      expect(empty.agent).to.equal(ethers.ZeroAddress);
      expect(empty.principal).to.equal(ethers.ZeroAddress);
      expect(empty.complianceProvider).to.equal(ethers.ZeroAddress);
      expect(empty.validUntil).to.equal(0n);
      expect(empty.maxCumulativeValue).to.equal(0n);
      expect(await mandate.isActionEnabled(agent2.address, principal.address, ethers.ZeroHash)).to.equal(false);
      // A minute ahead: on a standalone node the next block's time follows the wall clock, which a busy machine moves.
      await grant({ validUntil: (await time.latest()) + 60 });
      await time.increase(120);
      await expect(mandate.connect(principal).revokeMandate(agent.address, principal.address, 0, "0x")).to.emit(
        mandate,
        "MandateRevoked",
      );
    });

    it("a freeze applies to all of the agent's mandates and to no other agent", async () => {
      const {
        mandate,
        compliance,
        complianceOwner,
        principal,
        principal2,
        agent,
        agent2,
        enforcer,
        tokenAddress,
        params,
        makeEnforcer,
      } = await loadFixture(grantedFixture);
      await compliance.connect(complianceOwner).grantPrincipal(principal2.address, IDREF, 0);
      await mandate.connect(principal2).grantMandate(await params({ principal: principal2.address }), "0x");
      await mandate.connect(principal).grantMandate(await params({ agent: agent2.address }), "0x");
      await makeEnforcer();
      await mandate.connect(enforcer).freezeAgent(agent.address);
      expect(await mandate.canExecute(agent.address, principal.address, tokenAddress, ACTION, 1)).to.equal(false);
      expect(await mandate.canExecute(agent.address, principal2.address, tokenAddress, ACTION, 1)).to.equal(false);
      expect(await mandate.canExecute(agent2.address, principal.address, tokenAddress, ACTION, 1)).to.equal(true);
    });

    it("canExecute is false for a zero asset on a missing mandate, and for a future validFrom", async () => {
      const { mandate, principal, agent, grant, canExecute } = await loadFixture(deployFixture);
      expect(
        await mandate.canExecute(agent.address, principal.address, ethers.ZeroAddress, ethers.ZeroHash, 0),
      ).to.equal(false);
      await grant({ validFrom: (await time.latest()) + 1000 });
      expect(await canExecute(1)).to.equal(false);
    });

    it("a RECORDER_ROLE holder can record for any pair (it is trusted registry-wide)", async () => {
      const { mandate, admin, recorder, compliance, complianceOwner, principal2, agent, params, RECORDER_ROLE } =
        await loadFixture(grantedFixture);
      await compliance.connect(complianceOwner).grantPrincipal(principal2.address, IDREF, 0);
      await mandate.connect(principal2).grantMandate(await params({ principal: principal2.address }), "0x");
      await mandate.connect(admin).grantRole(RECORDER_ROLE, recorder.address);
      await mandate.connect(recorder).recordExecution(agent.address, principal2.address, ACTION, 3);
      expect((await mandate.getMandate(agent.address, principal2.address)).cumulativeUsed).to.equal(3n);
    });
  });
});
