// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {Strings} from "@openzeppelin/contracts/utils/Strings.sol";
import {HandlerBase, System} from "./handler-base.sol";
import {InvariantModel} from "../model.sol";
import {vm} from "../base/vm.sol";

/// @title RecoveryHandler
/// @notice Recoveries in flight: requested by the recovery agent (or anyone trying), cancelled by the lost wallet or
///         the agent, executed by the new wallet or the agent after the delay, which the tokenizer may change; and
///         time, which only moves forward. A recovery that succeeds is checked against the model (requested, not
///         cancelled, its delay over, both wallets bound to one investor) and must move balance, frozen amount,
///         address freeze and dividend entitlement exactly.
contract RecoveryHandler is HandlerBase {
    using Strings for uint256;

    /// @dev What the two wallets of a recovery held just before it ran.
    struct Before {
        uint256 lostBalance;
        uint256 newBalance;
        uint256 lostFrozen;
        uint256 newFrozen;
        bool lostAddressFrozen;
        bool newAddressFrozen;
        uint256 lostEntitlement;
        uint256 newEntitlement;
    }

    constructor(System memory s) HandlerBase(s) {}

    /// @notice Up to a day, or one time in four up to eight (past a recovery's or an upgrade's delay).
    function warp(uint256 secondsSeed) external {
        vm.warp(block.timestamp + _bound(secondsSeed >> 2, 0, secondsSeed % 4 == 0 ? 8 days : 1 days));
    }

    /// @notice Three times in four within a few days, else anywhere from half a day to 32 days (out of bounds too).
    function setRecoveryDelay(uint256 callerSeed, uint256 delaySeed) external {
        address caller = _caller(callerSeed, DEFAULT_ADMIN);
        uint48 delay = uint48(
            _bound(delaySeed >> 2, delaySeed % 4 == 0 ? 12 hours : 1 days, delaySeed % 4 == 0 ? 32 days : 3 days)
        );
        bool allowed = model.holds(DEFAULT_ADMIN, caller);
        bool ok;
        vm.prank(caller);
        try token.setRecoveryDelay(delay) {
            ok = true;
        } catch {}
        _checkAllowed("setRecoveryDelay", caller, ok, allowed);
        if (!ok) return;
        model.setRecoveryDelay(delay);
        if (delay < 1 days || delay > 30 days) _fail(model.RECOVERY(), "a recovery delay outside its bounds was set");
    }

    function requestRecovery(uint256 callerSeed, uint256 lostSeed, uint256 newSeed) external {
        address caller = _caller(callerSeed, RECOVERY);
        address lostWallet = _holder(lostSeed);
        address newWallet = newSeed % 2 == 0 ? _sibling(lostWallet) : _holder(newSeed >> 1);
        bool allowed = model.holds(RECOVERY, caller);
        bool ok;
        vm.prank(caller);
        try token.requestRecovery(lostWallet, newWallet) {
            ok = true;
        } catch {}
        _checkAllowed("requestRecovery", caller, ok, allowed);
        if (!ok) return;
        model.setRecovery(lostWallet, newWallet, block.timestamp + model.recoveryDelay());
        _checkSameInvestor("requested", lostWallet, newWallet);
    }

    /// @notice The lost wallet itself tries one time in three (a wallet that is not lost proves it by cancelling).
    function cancelRecovery(uint256 callerSeed, uint256 lostSeed) external {
        address lostWallet = _holder(lostSeed);
        address caller = callerSeed % 3 == 0 ? lostWallet : _caller(callerSeed / 3, RECOVERY);
        bool allowed = model.holds(RECOVERY, caller) || caller == lostWallet;
        bool ok;
        vm.prank(caller);
        try token.cancelRecovery(lostWallet) {
            ok = true;
        } catch {}
        _checkAllowed("cancelRecovery", caller, ok, allowed);
        if (!ok) return;
        if (model.pendingRecovery(lostWallet).newWallet == address(0)) {
            _fail(
                model.RECOVERY(),
                string.concat("cancelled a recovery of ", model.nameOf(lostWallet), " never requested")
            );
        }
        model.clearRecovery(lostWallet);
    }

    /// @notice The new wallet itself tries one time in three.
    function executeRecovery(uint256 callerSeed, uint256 lostSeed) external {
        address lostWallet = lostSeed % 2 == 0 ? _pendingLostWallet(lostSeed >> 1) : _holder(lostSeed >> 1);
        InvariantModel.PendingRecovery memory pending = model.pendingRecovery(lostWallet);
        address newWallet = token.pendingRecovery(lostWallet).newWallet;
        address caller = callerSeed % 3 == 0 && newWallet != address(0) ? newWallet : _caller(callerSeed / 3, RECOVERY);
        bool allowed = model.holds(RECOVERY, caller) || (caller == pending.newWallet && caller != address(0));
        Before memory b = _snapshot(lostWallet, newWallet);
        bool ok;
        vm.prank(caller);
        try token.executeRecovery(lostWallet) {
            ok = true;
        } catch {}
        _checkAllowed("executeRecovery", caller, ok, allowed);
        if (!ok) return;
        if (pending.newWallet != newWallet || block.timestamp < pending.executableAt) {
            _fail(
                model.RECOVERY(), string.concat("recovery of ", model.nameOf(lostWallet), " not as requested or early")
            );
        }
        _checkSameInvestor("executed", lostWallet, newWallet);
        _checkMoved(lostWallet, newWallet, b);
        model.clearRecovery(lostWallet);
        model.recovered(lostWallet, newWallet);
    }

    /// @dev A wallet with a recovery pending, from a random starting point (a random wallet when none is).
    function _pendingLostWallet(uint256 seed) private view returns (address) {
        for (uint256 i; i < WALLETS; ++i) {
            address wallet = model.actor(FIRST_WALLET + ((seed % WALLETS + i) % WALLETS));
            if (model.pendingRecovery(wallet).newWallet != address(0)) return wallet;
        }
        return model.actor(FIRST_WALLET + (seed % WALLETS));
    }

    function _snapshot(address lostWallet, address newWallet) private view returns (Before memory b) {
        b.lostBalance = token.balanceOf(lostWallet);
        b.newBalance = token.balanceOf(newWallet);
        b.lostFrozen = token.getFrozenTokens(lostWallet);
        b.newFrozen = token.getFrozenTokens(newWallet);
        b.lostAddressFrozen = token.isFrozen(lostWallet);
        b.newAddressFrozen = token.isFrozen(newWallet);
        b.lostEntitlement = token.accumulativeDividendOf(lostWallet);
        b.newEntitlement = token.accumulativeDividendOf(newWallet);
    }

    /// @dev Balance, frozen amount and address freeze moved exactly (a freeze never spreads to a wallet that held
    ///      tokens: there it freezes what was recovered), and the lost wallet keeps nothing.
    function _checkMoved(address lostWallet, address newWallet, Before memory b) private {
        bool spreads = b.lostAddressFrozen && b.newBalance == 0;
        uint256 frozenAfter = b.newFrozen + b.lostFrozen + (b.lostAddressFrozen && !spreads ? b.lostBalance : 0);
        bool exact = token.balanceOf(newWallet) == b.newBalance + b.lostBalance && token.balanceOf(lostWallet) == 0
            && token.getFrozenTokens(lostWallet) == 0 && token.getFrozenTokens(newWallet) == frozenAfter
            && !token.isFrozen(lostWallet) && token.isFrozen(newWallet) == (b.newAddressFrozen || spreads)
            && token.accumulativeDividendOf(lostWallet) == 0 && token.withdrawableDividendOf(lostWallet) == 0
            && !token.isWhitelisted(lostWallet);
        if (!exact) {
            _fail(
                model.RECOVERY(),
                string.concat(
                    "recovery of ",
                    model.nameOf(lostWallet),
                    " into ",
                    model.nameOf(newWallet),
                    " did not move exactly ",
                    b.lostBalance.toString()
                )
            );
        }
        // Rounding: the two magnified entitlements add up before the division, so the sum may gain one unit.
        uint256 sum = token.accumulativeDividendOf(newWallet);
        if (sum < b.newEntitlement + b.lostEntitlement || sum > b.newEntitlement + b.lostEntitlement + 1) {
            _fail(
                model.ENTITLEMENTS(),
                string.concat("recovery into ", model.nameOf(newWallet), " changed the entitlement")
            );
        }
    }

    function _checkSameInvestor(string memory step, address lostWallet, address newWallet) private {
        bytes32 investor = model.investorOf(lostWallet);
        if (investor == bytes32(0) || model.investorOf(newWallet) != investor) {
            _fail(
                model.RECOVERY(),
                string.concat("recovery ", step, " from ", model.nameOf(lostWallet), " to ", model.nameOf(newWallet))
            );
        }
    }
}
