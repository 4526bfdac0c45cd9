// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {Strings} from "@openzeppelin/contracts/utils/Strings.sol";
import {HandlerBase, System} from "./handler-base.sol";
import {vm} from "../base/vm.sol";

/// @title IssuerHandler
/// @notice The issuer's controls, each tried by the tokenizer, the role's first holder or any actor: mint, whitelist
///         and bind, address freezes and frozen amounts (also above the balance), forced transfers, pause, and
///         dividend distributions. Every success is checked against the model's grants; the rest of what each
///         changes is checked where the contract promises it.
contract IssuerHandler is HandlerBase {
    using Strings for uint256;

    constructor(System memory s) HandlerBase(s) {}

    function mint(uint256 callerSeed, uint256 toSeed, uint256 amountSeed) external {
        address caller = _caller(callerSeed, MINTER);
        address to = _holder(toSeed);
        uint256 room = _room();
        uint256 amount = _bound(amountSeed, 1, room + room / 4 + 1);
        bool allowed = model.holds(MINTER, caller);
        uint8 code = token.detectTransferRestriction(address(0), to, amount);
        bool ok;
        vm.prank(caller);
        try token.mint(to, amount) {
            ok = true;
        } catch {}
        _checkAllowed("mint", caller, ok, allowed);
        if (allowed) _checkPrediction("mint", code, ok, address(0), to, amount);
    }

    /// @notice Removes from the whitelist one time in four, else adds.
    function setWhitelisted(uint256 callerSeed, uint256 accountSeed, uint256 statusSeed) external {
        address caller = _caller(callerSeed, WHITELISTER);
        address account = _holder(accountSeed);
        bool status = statusSeed % 4 != 0;
        bool allowed = model.holds(WHITELISTER, caller);
        bool ok;
        vm.prank(caller);
        try token.setWhitelisted(account, status) {
            ok = true;
        } catch {}
        _checkAllowed("setWhitelisted", caller, ok, allowed);
    }

    /// @notice Whitelists a wallet and binds it to one of three investors (or leaves its binding: id 0). A wallet
    ///         that holds anything never moves to another investor. One time in two the wallet is one that holds
    ///         nothing on the token, which may move.
    function whitelistInvestors(uint256 callerSeed, uint256 walletSeed, uint256 investorSeed) external {
        address caller = _caller(callerSeed, WHITELISTER);
        address wallet = walletSeed % 2 == 0 ? _emptyWallet(walletSeed >> 1) : _holder(walletSeed >> 1);
        bytes32 investorId =
            [bytes32(0), bytes32("investor-a"), bytes32("investor-b"), bytes32("investor-c")][investorSeed % 4];
        bytes32 before = token.investorOf(wallet);
        bool holds = token.balanceOf(wallet) != 0 || token.getFrozenTokens(wallet) != 0
            || token.withdrawableDividendOf(wallet) != 0 || token.pendingRecovery(wallet).newWallet != address(0);
        bool allowed = model.holds(WHITELISTER, caller);
        address[] memory wallets = new address[](1);
        bytes32[] memory ids = new bytes32[](1);
        (wallets[0], ids[0]) = (wallet, investorId);
        bool ok;
        vm.prank(caller);
        try token.whitelistInvestors(wallets, ids) {
            ok = true;
        } catch {}
        _checkAllowed("whitelistInvestors", caller, ok, allowed);
        if (!ok || investorId == bytes32(0)) return;
        model.bind(wallet, investorId);
        if (holds && before != bytes32(0) && before != investorId) {
            _fail(model.RECOVERY(), string.concat(model.nameOf(wallet), " moved to another investor while holding"));
        }
    }

    /// @notice Freezes one time in four, else unfreezes.
    function setAddressFrozen(uint256 callerSeed, uint256 accountSeed, uint256 frozenSeed) external {
        address caller = _caller(callerSeed, FREEZER);
        address account = _holder(accountSeed);
        bool frozen = frozenSeed % 4 == 0;
        bool allowed = model.holds(FREEZER, caller);
        bool ok;
        vm.prank(caller);
        try token.setAddressFrozen(account, frozen) {
            ok = true;
        } catch {}
        _checkAllowed("setAddressFrozen", caller, ok, allowed);
    }

    /// @notice Any amount up to twice the balance and more: a frozen amount above the balance is in the space.
    function setFrozenTokens(uint256 callerSeed, uint256 accountSeed, uint256 amountSeed) external {
        address caller = _caller(callerSeed, FREEZER);
        address account = _holder(accountSeed);
        uint256 amount = _bound(amountSeed, 0, 2 * token.balanceOf(account) + 10);
        bool allowed = model.holds(FREEZER, caller);
        bool ok;
        vm.prank(caller);
        try token.setFrozenTokens(account, amount) returns (bool result) {
            ok = result;
        } catch {}
        _checkAllowed("setFrozenTokens", caller, ok, allowed);
        if (ok && token.getFrozenTokens(account) != amount) {
            _fail(model.FROZEN(), string.concat("setFrozenTokens did not set ", model.nameOf(account)));
        }
    }

    function freezePartialTokens(uint256 callerSeed, uint256 accountSeed, uint256 amountSeed) external {
        address caller = _caller(callerSeed, FREEZER);
        address account = _holder(accountSeed);
        uint256 amount = _bound(amountSeed, 0, token.balanceOf(account) + 10);
        bool allowed = model.holds(FREEZER, caller);
        bool ok;
        vm.prank(caller);
        try token.freezePartialTokens(account, amount) {
            ok = true;
        } catch {}
        _checkAllowed("freezePartialTokens", caller, ok, allowed);
    }

    function unfreezePartialTokens(uint256 callerSeed, uint256 accountSeed, uint256 amountSeed) external {
        address caller = _caller(callerSeed, FREEZER);
        address account = _holder(accountSeed);
        uint256 amount = _bound(amountSeed, 0, token.getFrozenTokens(account) + 2);
        bool allowed = model.holds(FREEZER, caller);
        bool ok;
        vm.prank(caller);
        try token.unfreezePartialTokens(account, amount) {
            ok = true;
        } catch {}
        _checkAllowed("unfreezePartialTokens", caller, ok, allowed);
    }

    /// @notice A forced transfer moves exactly the amount and lowers the sender's frozen amount by exactly what it
    ///         took beyond the unfrozen part.
    function forcedTransfer(uint256 callerSeed, uint256 fromSeed, uint256 toSeed, uint256 amountSeed) external {
        address caller = _caller(callerSeed, ENFORCER);
        address from = _sender(fromSeed);
        address to = _holder(toSeed);
        uint256 balance = token.balanceOf(from);
        uint256 amount = _bound(amountSeed, 0, balance + balance / 4 + 1);
        uint256 frozen = token.getFrozenTokens(from);
        uint256 toBalance = token.balanceOf(to);
        bool allowed = model.holds(ENFORCER, caller);
        bool ok;
        vm.prank(caller);
        try token.forcedTransfer(from, to, amount) returns (bool result) {
            ok = result;
        } catch {}
        _checkAllowed("forcedTransfer", caller, ok, allowed);
        if (!ok) return;
        uint256 unfrozen = balance > frozen ? balance - frozen : 0;
        uint256 frozenAfter = amount > unfrozen ? frozen - (amount - unfrozen) : frozen;
        if (
            token.balanceOf(from) != balance - amount || token.balanceOf(to) != toBalance + amount
                || token.getFrozenTokens(from) != frozenAfter
        ) {
            _fail(
                model.FROZEN(),
                string.concat("forced transfer of ", amount.toString(), " from ", model.nameOf(from), " inexact")
            );
        }
    }

    /// @notice Pauses one time in eight, else unpauses: the token runs most of the time.
    function pauseOrUnpause(uint256 callerSeed, uint256 pauseSeed) external {
        address caller = _caller(callerSeed, PAUSER);
        bool allowed = model.holds(PAUSER, caller);
        bool ok;
        if (pauseSeed % 8 == 0) {
            vm.prank(caller);
            try token.pause() {
                ok = true;
            } catch {}
            _checkAllowed("pause", caller, ok, allowed);
        } else {
            vm.prank(caller);
            try token.unpause() {
                ok = true;
            } catch {}
            _checkAllowed("unpause", caller, ok, allowed);
        }
    }

    /// @notice The caller is funded and approves the token; the model distributes what actually arrived.
    function distributeDividends(uint256 callerSeed, uint256 amountSeed) external {
        address caller = _caller(callerSeed, DEFAULT_ADMIN);
        uint256 amount = _bound(amountSeed, 0, 1e10);
        _fund(caller, amount);
        vm.prank(caller);
        usd.approve(address(token), amount);
        bool allowed = model.holds(DEFAULT_ADMIN, caller);
        uint256 supply = token.totalSupply();
        uint256 before = usd.balanceOf(address(token));
        bool ok;
        vm.prank(caller);
        try token.distributeDividends(amount) {
            ok = true;
        } catch {}
        _checkAllowed("distributeDividends", caller, ok, allowed);
        if (ok) model.distributed(usd.balanceOf(address(token)) - before, supply);
    }

    /// @dev A wallet with no balance, frozen amount, dividend or pending recovery, from a random starting point (a
    ///      random wallet when every one holds something).
    function _emptyWallet(uint256 seed) private view returns (address) {
        for (uint256 i; i < WALLETS; ++i) {
            address wallet = model.actor(FIRST_WALLET + ((seed % WALLETS + i) % WALLETS));
            if (
                token.balanceOf(wallet) == 0 && token.getFrozenTokens(wallet) == 0
                    && token.withdrawableDividendOf(wallet) == 0
                    && token.pendingRecovery(wallet).newWallet == address(0)
            ) return wallet;
        }
        return _holder(seed);
    }

    function _room() private view returns (uint256) {
        uint256 committed = token.totalSupply() + token.reservedSupply();
        uint256 cap = token.supplyCap();
        return cap > committed ? cap - committed : 0;
    }
}
