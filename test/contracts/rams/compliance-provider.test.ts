import { expect } from "chai";
import hre from "hardhat";
import { loadFixture, time } from "@nomicfoundation/hardhat-network-helpers";
import type { ComplianceProvider } from "../../../typechain-types";
import { ReasonCode, expectAbiSubset, interfaceIdOf } from "./helpers";

const { ethers } = hre;

const IDREF = ethers.id("kyc-1");
const OTHER_REF = ethers.id("kyc-2");
const IERC165_ID = "0x01ffc9a7";

describe("RAMS ComplianceProvider", () => {
  async function deployFixture() {
    const [complianceOwner, principal, stranger] = await ethers.getSigners();
    const provider: ComplianceProvider = await ethers.deployContract("ComplianceProvider", [complianceOwner.address]);
    return { provider, complianceOwner, principal, stranger };
  }

  async function grantedFixture() {
    const f = await deployFixture();
    await f.provider.connect(f.complianceOwner).grantPrincipal(f.principal.address, IDREF, 0);
    return f;
  }

  describe("reference cases (test/ComplianceProvider.t.sol)", () => {
    it("test_CheckUnknownPrincipal: never granted → (false, IDENTITY_NOT_FOUND)", async () => {
      const { provider, principal } = await loadFixture(deployFixture);
      const [eligible, reason] = await provider.checkPrincipal(principal.address, IDREF);
      expect(eligible).to.equal(false);
      expect(reason).to.equal(ReasonCode.IDENTITY_NOT_FOUND);
    });

    it("test_CheckWrongIdentityRef: granted IDREF, checked with OTHER_REF → (false, IDENTITY_NOT_FOUND)", async () => {
      const { provider, principal } = await loadFixture(grantedFixture);
      const [eligible, reason] = await provider.checkPrincipal(principal.address, OTHER_REF);
      expect(eligible).to.equal(false);
      expect(reason).to.equal(ReasonCode.IDENTITY_NOT_FOUND);
    });

    it("test_ExpiryBlocksAfterDeadline: eligible with its expiry before, (false, KYC_EXPIRED, expiry) after", async () => {
      const { provider, complianceOwner, principal } = await loadFixture(deployFixture);
      const expiry = (await time.latest()) + 100;
      await provider.connect(complianceOwner).grantPrincipal(principal.address, IDREF, expiry);

      const [okBefore, , e1] = await provider.checkPrincipal(principal.address, IDREF);
      expect(okBefore).to.equal(true);
      expect(e1).to.equal(BigInt(expiry));

      await time.increase(101);
      const [okAfter, reason, e2] = await provider.checkPrincipal(principal.address, IDREF);
      expect(okAfter).to.equal(false);
      expect(reason).to.equal(ReasonCode.KYC_EXPIRED);
      expect(e2).to.equal(BigInt(expiry));
    });

    it("test_GrantMakesEligibleAndEmits: PrincipalGranted(principal, IDREF), then (true, COMPLIANT, 0)", async () => {
      const { provider, complianceOwner, principal } = await loadFixture(deployFixture);
      await expect(provider.connect(complianceOwner).grantPrincipal(principal.address, IDREF, 0))
        .to.emit(provider, "PrincipalGranted")
        .withArgs(principal.address, IDREF);
      const [eligible, reason, expiresAt] = await provider.checkPrincipal(principal.address, IDREF);
      expect(eligible).to.equal(true);
      expect(reason).to.equal(ReasonCode.COMPLIANT);
      expect(expiresAt).to.equal(0n);
    });

    it("test_GrantOnlyOwner: a stranger → OwnableUnauthorizedAccount(stranger)", async () => {
      const { provider, principal, stranger } = await loadFixture(deployFixture);
      await expect(provider.connect(stranger).grantPrincipal(principal.address, IDREF, 0))
        .to.be.revertedWithCustomError(provider, "OwnableUnauthorizedAccount")
        .withArgs(stranger.address);
    });

    it("test_GrantRevertsZeroIdentityRef: bytes32(0) → ZeroIdentityRef", async () => {
      const { provider, complianceOwner, principal } = await loadFixture(deployFixture);
      await expect(
        provider.connect(complianceOwner).grantPrincipal(principal.address, ethers.ZeroHash, 0),
      ).to.be.revertedWithCustomError(provider, "ZeroIdentityRef");
    });

    it("test_NoExpiryNeverExpires: expiresAt 0, a year later → still eligible", async () => {
      const { provider, principal } = await loadFixture(grantedFixture);
      await time.increase(365 * 24 * 3600);
      const [eligible] = await provider.checkPrincipal(principal.address, IDREF);
      expect(eligible).to.equal(true);
    });

    it("test_RegrantAfterRevoke: grant, revoke, grant with OTHER_REF → eligible under OTHER_REF, COMPLIANT", async () => {
      const { provider, complianceOwner, principal } = await loadFixture(grantedFixture);
      await provider.connect(complianceOwner).revokePrincipal(principal.address, ReasonCode.AML_FLAG);
      await provider.connect(complianceOwner).grantPrincipal(principal.address, OTHER_REF, 0);
      const [eligible, reason] = await provider.checkPrincipal(principal.address, OTHER_REF);
      expect(eligible).to.equal(true);
      expect(reason).to.equal(ReasonCode.COMPLIANT);
    });

    it("test_RevokeBlocksAndEmits: PrincipalRevoked(principal, IDREF, AML_FLAG), then (false, AML_FLAG)", async () => {
      const { provider, complianceOwner, principal } = await loadFixture(grantedFixture);
      await expect(provider.connect(complianceOwner).revokePrincipal(principal.address, ReasonCode.AML_FLAG))
        .to.emit(provider, "PrincipalRevoked")
        .withArgs(principal.address, IDREF, ReasonCode.AML_FLAG);
      const [eligible, reason] = await provider.checkPrincipal(principal.address, IDREF);
      expect(eligible).to.equal(false);
      expect(reason).to.equal(ReasonCode.AML_FLAG);
    });

    it("test_RevokeOnlyOwner: a stranger → OwnableUnauthorizedAccount(stranger)", async () => {
      const { provider, principal, stranger } = await loadFixture(grantedFixture);
      await expect(provider.connect(stranger).revokePrincipal(principal.address, ReasonCode.AML_FLAG))
        .to.be.revertedWithCustomError(provider, "OwnableUnauthorizedAccount")
        .withArgs(stranger.address);
    });

    it("test_RevokeRevertsWhenAlreadyRevoked: a second revoke → NotActive(principal)", async () => {
      const { provider, complianceOwner, principal } = await loadFixture(grantedFixture);
      await provider.connect(complianceOwner).revokePrincipal(principal.address, ReasonCode.AML_FLAG);
      await expect(provider.connect(complianceOwner).revokePrincipal(principal.address, ReasonCode.OTHER))
        .to.be.revertedWithCustomError(provider, "NotActive")
        .withArgs(principal.address);
    });

    it("test_RevokeRevertsWhenNeverGranted: → NotActive(principal)", async () => {
      const { provider, complianceOwner, principal } = await loadFixture(deployFixture);
      await expect(provider.connect(complianceOwner).revokePrincipal(principal.address, ReasonCode.AML_FLAG))
        .to.be.revertedWithCustomError(provider, "NotActive")
        .withArgs(principal.address);
    });

    it("test_SupportsInterface: true for IComplianceProvider and IERC165, false for 0xffffffff", async () => {
      const { provider } = await loadFixture(deployFixture);
      expect(await provider.supportsInterface(await interfaceIdOf("IComplianceProvider"))).to.equal(true);
      expect(await provider.supportsInterface(IERC165_ID)).to.equal(true);
      expect(await provider.supportsInterface("0xffffffff")).to.equal(false);
    });
  });

  describe("beyond the reference inventory", () => {
    it("the ERC-165 id of IComplianceProvider is 0xfa2a39b3 and is supported; IAgentMandate's is not", async () => {
      const { provider } = await loadFixture(deployFixture);
      expect(await interfaceIdOf("IComplianceProvider")).to.equal("0xfa2a39b3");
      expect(await provider.supportsInterface("0xfa2a39b3")).to.equal(true);
      expect(await provider.supportsInterface("0x44aef2f5")).to.equal(false);
    });

    it("function, event and error selectors match ERC-8226", async () => {
      const { provider } = await loadFixture(deployFixture);
      const iface = provider.interface;
      expect(iface.getFunction("grantPrincipal").selector).to.equal("0xdbca38d3");
      expect(iface.getFunction("revokePrincipal").selector).to.equal("0x20e03072");
      expect(iface.getFunction("checkPrincipal").selector).to.equal("0x01003112");
      expect(iface.getError("ZeroIdentityRef")!.selector).to.equal("0x66b49514");
      expect(iface.getError("NotActive")!.selector).to.equal("0x4022bc55");
      expect(iface.getEvent("PrincipalGranted").format("full")).to.equal(
        "event PrincipalGranted(address indexed principal, bytes32 indexed identityRef)",
      );
      expect(iface.getEvent("PrincipalRevoked").format("full")).to.equal(
        "event PrincipalRevoked(address indexed principal, bytes32 indexed identityRef, uint8 reason)",
      );
      expect(iface.getFunction("checkPrincipal").format("full")).to.equal(
        "function checkPrincipal(address principal, bytes32 identityRef) view returns (bool eligible, uint8 reason, uint48 expiresAt)",
      );
    });

    it("every function and event entry of the compiled IComplianceProvider ABI appears unchanged in ComplianceProvider's ABI", async () => {
      await expectAbiSubset("IComplianceProvider", "ComplianceProvider");
    });

    it("the constructor argument becomes the owner", async () => {
      const { provider, complianceOwner } = await loadFixture(deployFixture);
      expect(await provider.owner()).to.equal(complianceOwner.address);
    });

    it("eligibility holds at exactly expiresAt and ends one second later (inclusive expiry)", async () => {
      const { provider, complianceOwner, principal } = await loadFixture(deployFixture);
      const expiry = (await time.latest()) + 50;
      await provider.connect(complianceOwner).grantPrincipal(principal.address, IDREF, expiry);
      await time.increaseTo(expiry); // a block mined at exactly expiresAt; views run on it
      expect((await provider.checkPrincipal(principal.address, IDREF))[0]).to.equal(true);
      await time.increaseTo(expiry + 1);
      expect((await provider.checkPrincipal(principal.address, IDREF))[0]).to.equal(false);
    });

    it("check order: a revoked record reports its stored reason (expiresAt 0) even for another ref or after expiry", async () => {
      const { provider, complianceOwner, principal } = await loadFixture(deployFixture);
      const expiry = (await time.latest()) + 10;
      await provider.connect(complianceOwner).grantPrincipal(principal.address, IDREF, expiry);
      await provider.connect(complianceOwner).revokePrincipal(principal.address, ReasonCode.NOT_ACCREDITED);
      await time.increase(100);
      for (const ref of [IDREF, OTHER_REF]) {
        const [eligible, reason, expiresAt] = await provider.checkPrincipal(principal.address, ref);
        expect([eligible, reason, expiresAt]).to.deep.equal([false, BigInt(ReasonCode.NOT_ACCREDITED), 0n]);
      }
    });

    it("check order: a wrong ref on an expired record is IDENTITY_NOT_FOUND (expiresAt 0), not KYC_EXPIRED", async () => {
      const { provider, complianceOwner, principal } = await loadFixture(deployFixture);
      const expiry = (await time.latest()) + 10;
      await provider.connect(complianceOwner).grantPrincipal(principal.address, IDREF, expiry);
      await time.increase(100);
      const [eligible, reason, expiresAt] = await provider.checkPrincipal(principal.address, OTHER_REF);
      expect([eligible, reason, expiresAt]).to.deep.equal([false, BigInt(ReasonCode.IDENTITY_NOT_FOUND), 0n]);
    });

    it("a grant overwrites the previous record: a new expiry (0 = none) and identity ref replace the old ones", async () => {
      const { provider, complianceOwner, principal } = await loadFixture(deployFixture);
      const expiry = (await time.latest()) + 10;
      await provider.connect(complianceOwner).grantPrincipal(principal.address, IDREF, expiry);
      await provider.connect(complianceOwner).grantPrincipal(principal.address, OTHER_REF, 0);
      await time.increase(100);
      expect(await provider.checkPrincipal(principal.address, OTHER_REF)).to.deep.equal([true, 0n, 0n]);
      expect((await provider.checkPrincipal(principal.address, IDREF))[1]).to.equal(ReasonCode.IDENTITY_NOT_FOUND);
    });

    it("revoke stores any reason code and emits the stored identity ref; a re-grant can be revoked again", async () => {
      const { provider, complianceOwner, principal } = await loadFixture(grantedFixture);
      await expect(
        provider.connect(complianceOwner).revokePrincipal(principal.address, ReasonCode.JURISDICTION_BLOCKED),
      )
        .to.emit(provider, "PrincipalRevoked")
        .withArgs(principal.address, IDREF, ReasonCode.JURISDICTION_BLOCKED);
      await provider.connect(complianceOwner).grantPrincipal(principal.address, OTHER_REF, 0);
      await expect(provider.connect(complianceOwner).revokePrincipal(principal.address, ReasonCode.OTHER))
        .to.emit(provider, "PrincipalRevoked")
        .withArgs(principal.address, OTHER_REF, ReasonCode.OTHER);
      expect(await provider.checkPrincipal(principal.address, OTHER_REF)).to.deep.equal([
        false,
        BigInt(ReasonCode.OTHER),
        0n,
      ]);
    });

    it("revokePrincipal rejects a reason code outside the enum (0..8)", async () => {
      const { provider, complianceOwner, principal } = await loadFixture(grantedFixture);
      await expect(provider.connect(complianceOwner).revokePrincipal(principal.address, 9)).to.be.reverted;
    });
  });
});
