// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {IAccessControl} from "@openzeppelin/contracts/access/IAccessControl.sol";
import {
    IAccessControlDefaultAdminRules
} from "@openzeppelin/contracts/access/extensions/IAccessControlDefaultAdminRules.sol";
import {ISecurityToken} from "../../../contracts/tokenization/interfaces/ISecurityToken.sol";
import {DelayedUpgrades} from "../../../contracts/upgrades/DelayedUpgrades.sol";
import {HandlerBase, System} from "./handler-base.sol";
import {InvariantModel} from "../model.sol";
import {vm} from "../base/vm.sol";

/// @title AdminHandler
/// @notice Who administers whom: role grants, revocations and renunciations; the tokenizer's two-step handover
///         (after which the old key holds nothing it was not granted); delayed upgrades of the token and the escrow
///         to implementations the factory publishes; the factory owner's publications; the functions no actor may
///         call (the escrow's hooks on the token, binding, initializing again); and the payment token's hostility
///         (a fee, a blacklist), which is no one's role but part of the space.
contract AdminHandler is HandlerBase {
    /// @dev The delay of DelayedUpgrades.
    uint256 private constant UPGRADE_DELAY = 7 days;

    constructor(System memory s) HandlerBase(s) {}

    // ───────────────────────────── roles ─────────────────────────────

    function grantRole(uint256 callerSeed, uint256 roleSeed, uint256 accountSeed) external {
        address caller = _caller(callerSeed, DEFAULT_ADMIN);
        bytes32 role = _role(roleSeed);
        address account = _actor(accountSeed);
        bool allowed = model.holds(DEFAULT_ADMIN, caller) && role != DEFAULT_ADMIN;
        bool ok;
        vm.prank(caller);
        try IAccessControl(address(token)).grantRole(role, account) {
            ok = true;
        } catch {}
        _checkAllowed("grantRole", caller, ok, allowed);
        if (ok) model.setGranted(role, account, true);
    }

    /// @notice One time in two from the role's first holder.
    function revokeRole(uint256 callerSeed, uint256 roleSeed, uint256 accountSeed) external {
        address caller = _caller(callerSeed, DEFAULT_ADMIN);
        bytes32 role = _role(roleSeed);
        address account = accountSeed % 2 == 0 ? model.designated(role) : _actor(accountSeed >> 1);
        bool allowed = model.holds(DEFAULT_ADMIN, caller) && role != DEFAULT_ADMIN;
        bool ok;
        vm.prank(caller);
        try IAccessControl(address(token)).revokeRole(role, account) {
            ok = true;
        } catch {}
        _checkAllowed("revokeRole", caller, ok, allowed);
        if (ok) model.setGranted(role, account, false);
    }

    /// @notice An account gives up a role it was granted; the tokenizer never renounces (no handover to nobody here).
    function renounceRole(uint256 callerSeed, uint256 roleSeed) external {
        bytes32 role = _role(roleSeed);
        address caller = callerSeed % 2 == 0 ? model.designated(role) : _actor(callerSeed >> 1);
        bool allowed = role != DEFAULT_ADMIN && model.granted(role, caller) && caller != model.tokenizer();
        bool ok;
        vm.prank(caller);
        try IAccessControl(address(token)).renounceRole(role, caller) {
            ok = true;
        } catch {}
        _checkAllowed("renounceRole", caller, ok, allowed);
        if (ok) model.setGranted(role, caller, false);
    }

    function beginHandover(uint256 callerSeed, uint256 newSeed) external {
        address caller = _caller(callerSeed, DEFAULT_ADMIN);
        address newTokenizer = newSeed % 2 == 0 ? model.actor(1) : _actor(newSeed >> 1);
        bool allowed = model.holds(DEFAULT_ADMIN, caller);
        bool ok;
        vm.prank(caller);
        try IAccessControlDefaultAdminRules(address(token)).beginDefaultAdminTransfer(newTokenizer) {
            ok = true;
        } catch {}
        _checkAllowed("beginDefaultAdminTransfer", caller, ok, allowed);
        if (ok) model.setPendingTokenizer(newTokenizer);
    }

    /// @notice Tried by the tokenizer one time in eight, else by any actor.
    function cancelHandover(uint256 callerSeed) external {
        address caller = callerSeed % 8 == 0 ? model.tokenizer() : _actor(callerSeed >> 3);
        bool allowed = model.holds(DEFAULT_ADMIN, caller);
        bool ok;
        vm.prank(caller);
        try IAccessControlDefaultAdminRules(address(token)).cancelDefaultAdminTransfer() {
            ok = true;
        } catch {}
        _checkAllowed("cancelDefaultAdminTransfer", caller, ok, allowed);
        if (ok) model.setPendingTokenizer(address(0));
    }

    /// @notice The proposed key accepts (tried by it one time in two), a second after at the earliest.
    function acceptHandover(uint256 callerSeed) external {
        address pending = model.pendingTokenizer();
        address caller = callerSeed % 2 == 0 && pending != address(0) ? pending : _actor(callerSeed >> 1);
        bool allowed = caller == pending && pending != address(0);
        vm.warp(block.timestamp + 1);
        bool ok;
        vm.prank(caller);
        try IAccessControlDefaultAdminRules(address(token)).acceptDefaultAdminTransfer() {
            ok = true;
        } catch {}
        _checkAllowed("acceptDefaultAdminTransfer", caller, ok, allowed);
        if (!ok) return;
        model.setTokenizer(caller);
        if (ISecurityToken(address(token)).tokenizer() != caller) _fail(model.ROLE_MATRIX(), "handover not applied");
    }

    function changeHandoverDelay(uint256 callerSeed, uint256 delaySeed) external {
        address caller = _caller(callerSeed, DEFAULT_ADMIN);
        uint48 delay = uint48(_bound(delaySeed, 0, 2 days));
        bool allowed = model.holds(DEFAULT_ADMIN, caller);
        bool ok;
        vm.prank(caller);
        try IAccessControlDefaultAdminRules(address(token)).changeDefaultAdminDelay(delay) {
            ok = true;
        } catch {}
        _checkAllowed("changeDefaultAdminDelay", caller, ok, allowed);
    }

    // ───────────────────────────── upgrades ─────────────────────────────

    /// @notice Replaces an upgrade already scheduled only one time in four, so that some reach their delay.
    function scheduleUpgrade(uint256 callerSeed, uint256 proxySeed, uint256 implementationSeed) external {
        address caller = _issuer(callerSeed);
        address proxy = _proxy(proxySeed);
        (address scheduled,) = DelayedUpgrades(proxy).scheduledUpgrade();
        if (scheduled != address(0) && implementationSeed % 4 != 0) return;
        address implementation = model.implementation(proxy, implementationSeed);
        bool allowed = model.holds(DEFAULT_ADMIN, caller);
        bool ok;
        vm.prank(caller);
        try DelayedUpgrades(proxy).scheduleUpgrade(implementation) {
            ok = true;
        } catch {}
        _checkAllowed("scheduleUpgrade", caller, ok, allowed);
        if (ok) model.setUpgrade(proxy, implementation, block.timestamp + UPGRADE_DELAY);
    }

    /// @notice Tried by the tokenizer one time in eight, else by any actor.
    function cancelUpgrade(uint256 callerSeed, uint256 proxySeed) external {
        address caller = callerSeed % 8 == 0 ? model.tokenizer() : _actor(callerSeed >> 3);
        address proxy = _proxy(proxySeed);
        bool allowed = model.holds(DEFAULT_ADMIN, caller);
        bool ok;
        vm.prank(caller);
        try DelayedUpgrades(proxy).cancelUpgrade() {
            ok = true;
        } catch {}
        _checkAllowed("cancelUpgrade", caller, ok, allowed);
        if (ok) model.clearUpgrade(proxy);
    }

    /// @notice Executes the scheduled upgrade (or tries one to the other implementation, never scheduled).
    function executeUpgrade(uint256 callerSeed, uint256 proxySeed, bool scheduled) external {
        address caller = _issuer(callerSeed);
        address proxy = _proxy(proxySeed);
        InvariantModel.ScheduledUpgrade memory expected = model.scheduledUpgrade(proxy);
        (address implementation,) = DelayedUpgrades(proxy).scheduledUpgrade();
        if (!scheduled || implementation == address(0)) {
            implementation = model.implementation(
                proxy, DelayedUpgrades(proxy).implementation() == model.implementation(proxy, 0) ? 1 : 0
            );
        }
        bool allowed = model.holds(DEFAULT_ADMIN, caller);
        bool ok;
        vm.prank(caller);
        try DelayedUpgrades(proxy).upgradeToAndCall(implementation, "") {
            ok = true;
        } catch {}
        _checkAllowed("upgradeToAndCall", caller, ok, allowed);
        if (!ok) return;
        if (
            expected.implementation != implementation || block.timestamp < expected.readyAt
                || !factory.isPublished(implementation) || DelayedUpgrades(proxy).implementation() != implementation
        ) _fail(model.ROLE_MATRIX(), "an upgrade ran unscheduled, early or unpublished");
        model.clearUpgrade(proxy);
    }

    /// @notice The factory owner makes one of the two implementation pairs current (publishing it again).
    function publishImplementations(uint256 callerSeed, uint256 pairSeed) external {
        address caller = callerSeed % 2 == 0 ? model.platform() : _actor(callerSeed >> 1);
        uint256 pair = pairSeed % 2;
        address tokenImplementation = model.implementation(address(token), pair);
        address escrowImplementation = model.implementation(address(escrow), pair);
        bool allowed = caller == model.platform();
        bool ok;
        vm.prank(caller);
        try factory.publishImplementations(tokenImplementation, escrowImplementation) {
            ok = true;
        } catch {}
        _checkAllowed("publishImplementations", caller, ok, allowed);
    }

    function withdrawImplementation(uint256 callerSeed, uint256 implementationSeed) external {
        address caller = callerSeed % 2 == 0 ? model.platform() : _actor(callerSeed >> 1);
        address implementation = model.implementation(_proxy(implementationSeed), implementationSeed >> 1);
        bool allowed = caller == model.platform();
        bool ok;
        vm.prank(caller);
        try factory.withdrawImplementation(implementation) {
            ok = true;
        } catch {}
        _checkAllowed("withdrawImplementation", caller, ok, allowed);
    }

    // ───────────────────────────── what no actor may call ─────────────────────────────

    /// @notice The escrow's hooks on the token, the factory's binding of the escrow, and a second initialization of
    ///         either proxy: no actor, whatever its roles, ever gets through.
    function callReserved(uint256 callerSeed, uint256 functionSeed, uint256 amountSeed) external {
        address caller = _actor(callerSeed);
        uint256 amount = _bound(amountSeed, 1, 1_000);
        uint256 which = functionSeed % 6;
        ISecurityToken.TokenConfig memory config = ISecurityToken.TokenConfig("Again", "AGN", 0, 0, address(usd));
        address[] memory none = new address[](0);
        bool ok;
        vm.prank(caller);
        if (which == 0) {
            try token.reserveSupply(amount) {
                ok = true;
            } catch {}
        } else if (which == 1) {
            try token.releaseReservedSupply(amount) {
                ok = true;
            } catch {}
        } else if (which == 2) {
            try token.mintReserved(caller, amount) {
                ok = true;
            } catch {}
        } else if (which == 3) {
            try escrow.bindToken(caller) {
                ok = true;
            } catch {}
        } else if (which == 4) {
            try escrow.initialize() {
                ok = true;
            } catch {}
        } else {
            try token.initialize(config, caller, caller, none, new bytes32[](0), new uint256[](0)) {
                ok = true;
            } catch {}
        }
        _checkAllowed("escrow or factory only", caller, ok, false);
    }

    // ───────────────────────────── the payment token ─────────────────────────────

    /// @notice Half the time no fee, else up to 5 %.
    function setPaymentFee(uint256 feeSeed) external {
        usd.setFee(feeSeed % 2 == 0 ? 0 : uint16(_bound(feeSeed >> 1, 1, 500)));
    }

    /// @notice Blacklists (one time in four) or clears an actor, the token or the escrow at the payment token.
    function setPaymentBlacklisted(uint256 targetSeed, uint256 statusSeed) external {
        uint256 pick = targetSeed % 8;
        address target = pick == 0 ? address(token) : pick == 1 ? address(escrow) : _actor(targetSeed >> 3);
        usd.setBlacklisted(target, statusSeed % 4 == 0);
    }

    function _proxy(uint256 seed) private view returns (address) {
        return seed % 2 == 0 ? address(token) : address(escrow);
    }
}
