// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {Strings} from "@openzeppelin/contracts/utils/Strings.sol";
import {HandlerBase, System} from "./handler-base.sol";
import {vm} from "../base/vm.sol";

/// @title HolderHandler
/// @notice What holders do: transfer (directly and through an allowance), burn, and claim dividends. Each move is
///         checked against the ERC-1404 code read just before it and against the sender's frozen amount; each claim
///         against the pause, the address freeze and the model's entitlement.
contract HolderHandler is HandlerBase {
    using Strings for uint256;

    constructor(System memory s) HandlerBase(s) {}

    function transfer(uint256 fromSeed, uint256 toSeed, uint256 amountSeed) external {
        address from = _sender(fromSeed);
        address to = _holder(toSeed);
        uint256 amount = _amountOf(from, amountSeed);
        uint8 code = token.detectTransferRestriction(from, to, amount);
        (uint256 balance, uint256 frozen) = (token.balanceOf(from), token.getFrozenTokens(from));
        bool ok;
        vm.prank(from);
        try token.transfer(to, amount) returns (bool result) {
            ok = result;
        } catch {}
        _checkPrediction("transfer", code, ok, from, to, amount);
        if (ok) model.succeeded("transfer");
        if (ok) _checkFrozenKept("transfer", from, from == to ? 0 : amount, balance, frozen);
    }

    function transferFrom(uint256 spenderSeed, uint256 fromSeed, uint256 toSeed, uint256 amountSeed) external {
        address spender = _actor(spenderSeed);
        address from = _sender(fromSeed);
        address to = _holder(toSeed);
        uint256 amount = _amountOf(from, amountSeed);
        vm.prank(from);
        token.approve(spender, amount);
        uint8 code = token.detectTransferRestriction(from, to, amount);
        (uint256 balance, uint256 frozen) = (token.balanceOf(from), token.getFrozenTokens(from));
        bool ok;
        vm.prank(spender);
        try token.transferFrom(from, to, amount) returns (bool result) {
            ok = result;
        } catch {}
        _checkPrediction("transferFrom", code, ok, from, to, amount);
        if (ok) model.succeeded("transferFrom");
        if (ok) _checkFrozenKept("transferFrom", from, from == to ? 0 : amount, balance, frozen);
    }

    function burn(uint256 holderSeed, uint256 amountSeed) external {
        address holder = _sender(holderSeed);
        uint256 amount = _amountOf(holder, amountSeed);
        if (amount == 0) amount = 1; // a zero burn is refused as such (ZeroAmount), not by a restriction
        uint8 code = token.detectTransferRestriction(holder, address(0), amount);
        (uint256 balance, uint256 frozen) = (token.balanceOf(holder), token.getFrozenTokens(holder));
        bool ok;
        vm.prank(holder);
        try token.burn(amount) {
            ok = true;
        } catch {}
        _checkPrediction("burn", code, ok, holder, address(0), amount);
        if (ok) model.succeeded("burn");
        if (ok) _checkFrozenKept("burn", holder, amount, balance, frozen);
    }

    /// @notice A claim succeeds only while the token is not paused and the holder not frozen as an address, pays the
    ///         holder's whole withdrawable dividend, and is not refused when all of those allow it (the dividend is
    ///         held, never lost), unless the payment token blacklists the holder or the token.
    function claimDividends(uint256 holderSeed) external {
        address holder = _holder(holderSeed);
        bool held = token.paused() || token.isFrozen(holder);
        uint256 withdrawable = token.withdrawableDividendOf(holder);
        bool blocked = usd.blacklisted(holder) || usd.blacklisted(address(token));
        vm.prank(holder);
        try token.claimDividends() returns (uint256 amount) {
            model.succeeded("claimDividends");
            model.claimed(holder, amount);
            if (held) _fail(model.FROZEN(), string.concat("dividend claimed while held by ", model.nameOf(holder)));
            if (amount != withdrawable) {
                _fail(
                    model.ENTITLEMENTS(),
                    string.concat(
                        model.nameOf(holder),
                        " claimed ",
                        amount.toString(),
                        " of a withdrawable ",
                        withdrawable.toString()
                    )
                );
            }
        } catch {
            if (!held && withdrawable != 0 && !blocked) {
                _fail(
                    model.DIVIDENDS_HELD(),
                    string.concat(model.nameOf(holder), " could not claim ", withdrawable.toString())
                );
            }
        }
    }

    /// @dev Up to a quarter above the balance, so that refusals for the balance are in the space too.
    function _amountOf(address holder, uint256 seed) private view returns (uint256) {
        uint256 balance = token.balanceOf(holder);
        return _bound(seed, 0, balance + balance / 4 + 1);
    }

    /// @dev A holder's own move never takes its balance below its frozen amount (nor below the balance it had, when
    ///      that was smaller) and never changes the frozen amount.
    function _checkFrozenKept(string memory action, address from, uint256 sent, uint256 balance, uint256 frozen)
        private
    {
        uint256 kept = frozen < balance ? frozen : balance;
        uint256 balanceAfter = token.balanceOf(from);
        if (balanceAfter != balance - sent || balanceAfter < kept || token.getFrozenTokens(from) != frozen) {
            _fail(
                model.FROZEN(),
                string.concat(
                    action,
                    " by ",
                    model.nameOf(from),
                    " left ",
                    balanceAfter.toString(),
                    " with ",
                    frozen.toString(),
                    " frozen"
                )
            );
        }
    }
}
