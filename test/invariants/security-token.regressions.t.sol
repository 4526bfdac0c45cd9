// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {IAccessControl} from "@openzeppelin/contracts/access/IAccessControl.sol";
import {ISecurityToken} from "../../contracts/tokenization/interfaces/ISecurityToken.sol";
import {IStoEscrow} from "../../contracts/tokenization/interfaces/IStoEscrow.sol";
import {vm} from "./base/vm.sol";
import {SecurityTokenSystem} from "./security-token.system.sol";

/// @title SecurityTokenRegressions
/// @notice The counterexamples the invariant suite found, written out as fixed sequences on the same system, so that
///         a fix stays fixed whatever seed the fuzzer runs with (a replay of the handlers' raw inputs would not survive
///         a change to a handler). Each names the invariant that found it.
contract SecurityTokenRegressions is SecurityTokenSystem {
    error Failed(string what);

    function setUp() public {
        _deploySystem();
    }

    /// @notice invariant_tokenHoldsEveryUnclaimedDividend and invariant_entitlementsMoveOnlyByRecovery, shrunk to two
    ///         calls: the payment token takes a fee, then the tokenizer distributes. distributeDividends credited the
    ///         amount it asked for, not what arrived, so holders were owed more than the token held and the last
    ///         claims would have failed.
    function test_feeOnTransferDistributionCreditsWhatArrived() public {
        usd.setFee(100); // 1 %
        address tokenizer = model.tokenizer();
        usd.mint(tokenizer, 10_000);
        vm.prank(tokenizer);
        usd.approve(address(token), 10_000);
        vm.prank(tokenizer);
        token.distributeDividends(10_000);

        if (token.totalDividendsDistributed() != 9_900) revert Failed("distributed more than arrived");
        uint256 owed;
        for (uint256 i; i < model.actorCount(); ++i) {
            owed += token.withdrawableDividendOf(model.actor(i));
        }
        if (owed > usd.balanceOf(address(token))) revert Failed("holders owed more than the token holds");
    }

    /// @notice invariant_noRoleExceedsItsGrant, shrunk to one call: an account that never held the default admin role
    ///         "renounced" it and the call succeeded (OpenZeppelin's silent no-op), where every other role refuses a
    ///         renunciation by a non-holder with RoleNotHeld.
    function test_renouncingADefaultAdminRoleNeverHeldIsRefused() public {
        address outsider = model.actor(13);
        vm.prank(outsider);
        try IAccessControl(address(token)).renounceRole(bytes32(0), outsider) {
            revert Failed("renounced a role it never held");
        } catch (bytes memory reason) {
            if (bytes4(reason) != ISecurityToken.RoleNotHeld.selector) revert Failed("refused with another error");
        }
    }

    /// @notice invariant_offeringPaysItsInvestor: a wallet of investor B pays into an offering; after the close the
    ///         tokenizer binds the (empty) wallet to investor A, takes it off the whitelist and redirects the position
    ///         to a wallet of A. The escrow checked the recipient against the wallet's binding at redirect time, so
    ///         B's tokens went to A. The position now belongs to the investor its wallet was bound to when it paid.
    function test_rebindingAWalletDoesNotCarryItsPositionAway() public {
        address tokenizer = model.tokenizer();
        address bobWallet2 = model.actor(11);
        address aliceWallet1 = model.actor(8);
        vm.prank(tokenizer);
        escrow.newOffering(100, 0, 0, 1_000, 0, 1_000, uint64(block.timestamp), uint64(block.timestamp + 1 days));
        usd.mint(bobWallet2, 500);
        vm.prank(bobWallet2);
        usd.approve(address(escrow), 500);
        vm.prank(bobWallet2);
        escrow.invest(500);
        vm.prank(tokenizer);
        escrow.close();

        address[] memory wallets = new address[](1);
        bytes32[] memory ids = new bytes32[](1);
        (wallets[0], ids[0]) = (bobWallet2, "investor-a");
        vm.prank(tokenizer);
        token.whitelistInvestors(wallets, ids);
        vm.prank(tokenizer);
        token.setWhitelisted(bobWallet2, false);

        vm.prank(tokenizer);
        try escrow.redirectClaim(1, bobWallet2, aliceWallet1) {
            revert Failed("bob's position went to alice");
        } catch (bytes memory reason) {
            if (bytes4(reason) != IStoEscrow.NotSameInvestor.selector) revert Failed("refused with another error");
        }
        vm.prank(tokenizer);
        try escrow.refundClaim(1, bobWallet2, aliceWallet1) {
            revert Failed("bob's money went to alice");
        } catch (bytes memory reason) {
            if (bytes4(reason) != IStoEscrow.NotSameInvestor.selector) revert Failed("refused with another error");
        }
    }
}
