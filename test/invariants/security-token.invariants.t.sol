// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {InvariantTest} from "./base/invariant-test.sol";
import {SecurityTokenSystem} from "./security-token.system.sol";
import {AdminHandler} from "./handlers/admin-handler.sol";
import {HolderHandler} from "./handlers/holder-handler.sol";
import {IssuerHandler} from "./handlers/issuer-handler.sol";
import {OfferingHandler} from "./handlers/offering-handler.sol";
import {RecoveryHandler} from "./handlers/recovery-handler.sol";

/// @title SecurityTokenInvariants
/// @notice The named invariants of a security token and its offering escrow under random sequences of what holders,
///         issuer roles, recovery, offerings, upgrades and a hostile payment token do (the handlers), from fifteen
///         actors. forge checks each `invariant_*` after every call of its own campaign (runs × depth calls, set by
///         the profile in foundry.toml); what only a handler can see (the outcome of one call) it records in the
///         model, and the invariant of that name fails on it. docs/testing.md lists them and says what each means.
contract SecurityTokenInvariants is SecurityTokenSystem, InvariantTest {
    function setUp() public {
        _deploySystem();
        targetHandler(address(holders), _holderSelectors());
        targetHandler(address(issuer), _issuerSelectors());
        targetHandler(address(recovery), _recoverySelectors());
        targetHandler(address(offerings), _offeringSelectors());
        targetHandler(address(admin), _adminSelectors());
    }

    /// @notice Every token unit is in some actor's balance: the supply equals the sum of the balances (no holder
    ///         outside the actors exists, so nothing is minted to or moved anywhere else).
    function invariant_supplyEqualsSumOfBalances() public view {
        _checkSupplyEqualsSumOfBalances();
    }

    /// @notice What is minted plus what the escrow holds reserved never exceeds the cap.
    function invariant_supplyPlusReservedWithinCap() public view {
        _checkSupplyPlusReservedWithinCap();
    }

    /// @notice The token holds every unclaimed dividend: its payment-token balance covers what all actors may still
    ///         withdraw; and no claimable dividend was refused (recorded by the claim handler).
    function invariant_tokenHoldsEveryUnclaimedDividend() public view {
        _checkTokenHoldsEveryUnclaimedDividend();
    }

    /// @notice Each actor's dividend entitlement (earned in all) and withdrawn total are what the model says: grown
    ///         by distributions of what arrived in proportion to balances, moved only by recovery and exactly, never
    ///         by transfers, mints, burns, forced transfers or claims.
    function invariant_entitlementsMoveOnlyByRecovery() public view {
        _checkEntitlementsMoveOnlyByRecovery();
    }

    /// @notice The ERC-1404 code read before each transfer, transferFrom, burn and authorized mint was 0 exactly
    ///         when the call went through.
    function invariant_restrictionCodePredictsOutcome() public view {
        _checkRestrictionCodePredictsOutcome();
    }

    /// @notice The token's reserved supply is exactly what the escrow still owes: the unsold part of the open
    ///         offering plus the tokens owed on every unclaimed position of the open and the succeeded offerings.
    ///         And each offering's tokens sold are the sum of its positions.
    function invariant_escrowReservationsEqualTokensOwed() public view {
        _checkEscrowReservationsEqualTokensOwed();
    }

    /// @notice The escrow holds what it still owes: every payment of an open offering, the refunds of a failed one,
    ///         and after a success the remainders not yet paid back and the proceeds not yet withdrawn.
    function invariant_escrowSolvent() public view {
        _checkEscrowSolvent();
    }

    /// @notice No role does more than its grant: every restricted call that succeeded was made by an account the
    ///         model (grants seen to succeed, the tokenizer's handover) allowed, escrow- and factory-only hooks never
    ///         succeeded for an actor, and upgrades ran only as scheduled, after their delay, to a published
    ///         implementation.
    function invariant_noRoleExceedsItsGrant() public view {
        _checkNoRoleExceedsItsGrant();
    }

    /// @notice Frozen means frozen: a holder's own move never dips into its frozen amount nor changes it, a forced
    ///         transfer lowers it by exactly what it takes beyond the unfrozen part, and no dividend is paid to an
    ///         address-frozen holder or while the token is paused.
    function invariant_frozenMeansFrozen() public view {
        _checkFrozenMeansFrozen();
    }

    /// @notice Recovery needs the investor: it is requested and executed only between two wallets bound to one
    ///         investor, executed only as requested, after the delay and unless cancelled, and moves balance, frozen
    ///         amount and freeze exactly; a wallet holding anything never changes investor; the delay stays in bounds.
    function invariant_recoveryOnlyWithinInvestor() public view {
        _checkRecoveryOnlyWithinInvestor();
    }

    /// @notice An offering keeps the investor's money the investor's: it takes money only from a wallet the token
    ///         would deliver to, delivers every claimed position in full, and redirects or refunds a position only
    ///         to a wallet of the investor who paid for it.
    function invariant_offeringPaysItsInvestor() public view {
        _checkOfferingPaysItsInvestor();
    }

    // ───────────────────────────── what the fuzzer calls ─────────────────────────────

    /// @dev The order and repetitions weigh the fuzzer's choice (it picks a selector uniformly from the list): holders
    ///      act more often than anyone else, as they do.
    function _holderSelectors() private pure returns (bytes4[] memory s) {
        s = new bytes4[](7);
        s[0] = HolderHandler.transfer.selector;
        s[1] = HolderHandler.transfer.selector;
        s[2] = HolderHandler.transfer.selector;
        s[3] = HolderHandler.transferFrom.selector;
        s[4] = HolderHandler.burn.selector;
        s[5] = HolderHandler.claimDividends.selector;
        s[6] = HolderHandler.claimDividends.selector;
    }

    function _issuerSelectors() private pure returns (bytes4[] memory s) {
        s = new bytes4[](10);
        s[0] = IssuerHandler.mint.selector;
        s[1] = IssuerHandler.setWhitelisted.selector;
        s[2] = IssuerHandler.whitelistInvestors.selector;
        s[3] = IssuerHandler.setAddressFrozen.selector;
        s[4] = IssuerHandler.setFrozenTokens.selector;
        s[5] = IssuerHandler.freezePartialTokens.selector;
        s[6] = IssuerHandler.unfreezePartialTokens.selector;
        s[7] = IssuerHandler.forcedTransfer.selector;
        s[8] = IssuerHandler.pauseOrUnpause.selector;
        s[9] = IssuerHandler.distributeDividends.selector;
    }

    function _recoverySelectors() private pure returns (bytes4[] memory s) {
        s = new bytes4[](7);
        s[0] = RecoveryHandler.warp.selector;
        s[1] = RecoveryHandler.setRecoveryDelay.selector;
        s[2] = RecoveryHandler.requestRecovery.selector;
        s[3] = RecoveryHandler.requestRecovery.selector;
        s[4] = RecoveryHandler.cancelRecovery.selector;
        s[5] = RecoveryHandler.executeRecovery.selector;
        s[6] = RecoveryHandler.executeRecovery.selector;
    }

    function _offeringSelectors() private pure returns (bytes4[] memory s) {
        s = new bytes4[](13);
        s[0] = OfferingHandler.newOffering.selector;
        s[1] = OfferingHandler.newOffering.selector;
        s[2] = OfferingHandler.invest.selector;
        s[3] = OfferingHandler.invest.selector;
        s[4] = OfferingHandler.invest.selector;
        s[5] = OfferingHandler.setOfferingPaused.selector;
        s[6] = OfferingHandler.close.selector;
        s[7] = OfferingHandler.claim.selector;
        s[8] = OfferingHandler.claim.selector;
        s[9] = OfferingHandler.withdrawProceeds.selector;
        s[10] = OfferingHandler.redirectClaim.selector;
        s[11] = OfferingHandler.refundClaim.selector;
        s[12] = OfferingHandler.rebindAndResolve.selector;
    }

    function _adminSelectors() private pure returns (bytes4[] memory s) {
        s = new bytes4[](15);
        s[0] = AdminHandler.grantRole.selector;
        s[1] = AdminHandler.revokeRole.selector;
        s[2] = AdminHandler.renounceRole.selector;
        s[3] = AdminHandler.beginHandover.selector;
        s[4] = AdminHandler.cancelHandover.selector;
        s[5] = AdminHandler.acceptHandover.selector;
        s[6] = AdminHandler.changeHandoverDelay.selector;
        s[7] = AdminHandler.scheduleUpgrade.selector;
        s[8] = AdminHandler.cancelUpgrade.selector;
        s[9] = AdminHandler.executeUpgrade.selector;
        s[10] = AdminHandler.publishImplementations.selector;
        s[11] = AdminHandler.withdrawImplementation.selector;
        s[12] = AdminHandler.callReserved.selector;
        s[13] = AdminHandler.setPaymentFee.selector;
        s[14] = AdminHandler.setPaymentBlacklisted.selector;
    }
}
