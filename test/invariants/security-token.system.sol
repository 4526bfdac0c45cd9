// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {Math} from "@openzeppelin/contracts/utils/math/Math.sol";
import {Strings} from "@openzeppelin/contracts/utils/Strings.sol";
import {SecurityToken} from "../../contracts/tokenization/SecurityToken.sol";
import {StoEscrow} from "../../contracts/tokenization/StoEscrow.sol";
import {TokenFactory} from "../../contracts/tokenization/TokenFactory.sol";
import {ISecurityToken} from "../../contracts/tokenization/interfaces/ISecurityToken.sol";
import {IStoEscrow} from "../../contracts/tokenization/interfaces/IStoEscrow.sol";
import {ITokenFactory} from "../../contracts/tokenization/interfaces/ITokenFactory.sol";
import {vm} from "./base/vm.sol";
import {HostilePaymentToken} from "./mocks/hostile-payment-token.sol";
import {InvariantModel} from "./model.sol";
import {System} from "./handlers/handler-base.sol";
import {AdminHandler} from "./handlers/admin-handler.sol";
import {HolderHandler} from "./handlers/holder-handler.sol";
import {IssuerHandler} from "./handlers/issuer-handler.sol";
import {OfferingHandler} from "./handlers/offering-handler.sol";
import {RecoveryHandler} from "./handlers/recovery-handler.sol";

/// @title SecurityTokenSystem
/// @notice A security token and its offering escrow created by the real TokenFactory behind ERC-1967 proxies (two
///         published implementation pairs to upgrade between), a hostile payment token, fifteen actors with their
///         roles and investor bindings, the model and the handlers that drive them; and the named checks the
///         invariant suite runs after every call.
abstract contract SecurityTokenSystem {
    using Strings for uint256;

    uint256 internal constant SUPPLY_CAP = 1_000_000;

    InvariantModel internal model;
    ISecurityToken internal token;
    IStoEscrow internal escrow;
    TokenFactory internal factory;
    HostilePaymentToken internal usd;

    HolderHandler internal holders;
    IssuerHandler internal issuer;
    RecoveryHandler internal recovery;
    OfferingHandler internal offerings;
    AdminHandler internal admin;

    function _deploySystem() internal {
        model = new InvariantModel();
        usd = new HostilePaymentToken(address(0xFEE));
        address[15] memory actors = _actors();
        _deploy(actors);
        _grantRoles(actors);
        _registerActors(actors);

        System memory s = System(token, escrow, factory, usd, model);
        holders = new HolderHandler(s);
        issuer = new IssuerHandler(s);
        recovery = new RecoveryHandler(s);
        offerings = new OfferingHandler(s);
        admin = new AdminHandler(s);
        model.addHandler(address(holders));
        model.addHandler(address(issuer));
        model.addHandler(address(recovery));
        model.addHandler(address(offerings));
        model.addHandler(address(admin));
    }

    // ───────────────────────────── the checks ─────────────────────────────

    /// @dev `invariant_supplyEqualsSumOfBalances` (security-token.invariants.t.sol says what it means).
    function _checkSupplyEqualsSumOfBalances() internal view {
        uint256 sum = token.balanceOf(address(token)) + token.balanceOf(address(escrow));
        for (uint256 i; i < model.actorCount(); ++i) {
            sum += token.balanceOf(model.actor(i));
        }
        require(sum == token.totalSupply(), string.concat("sum of balances ", sum.toString(), " != supply"));
    }

    /// @dev `invariant_supplyPlusReservedWithinCap` (security-token.invariants.t.sol says what it means).
    function _checkSupplyPlusReservedWithinCap() internal view {
        uint256 committed = token.totalSupply() + token.reservedSupply();
        require(committed <= token.supplyCap(), string.concat("supply + reserved = ", committed.toString()));
    }

    /// @dev `invariant_tokenHoldsEveryUnclaimedDividend` (security-token.invariants.t.sol says what it means).
    function _checkTokenHoldsEveryUnclaimedDividend() internal view {
        uint256 owed;
        for (uint256 i; i < model.actorCount(); ++i) {
            owed += token.withdrawableDividendOf(model.actor(i));
        }
        uint256 held = usd.balanceOf(address(token));
        require(held >= owed, string.concat("token holds ", held.toString(), " of ", owed.toString(), " owed"));
        _requireNone(model.DIVIDENDS_HELD());
    }

    /// @dev `invariant_entitlementsMoveOnlyByRecovery` (security-token.invariants.t.sol says what it means).
    function _checkEntitlementsMoveOnlyByRecovery() internal view {
        for (uint256 i; i < model.actorCount(); ++i) {
            address a = model.actor(i);
            uint256 entitled = token.accumulativeDividendOf(a);
            uint256 expected = model.expectedEntitlement(a);
            require(
                entitled == expected,
                string.concat(model.nameOf(a), " entitled to ", entitled.toString(), ", model ", expected.toString())
            );
            require(token.withdrawnDividendOf(a) == model.withdrawn(a), string.concat(model.nameOf(a), " withdrawn"));
        }
        _requireNone(model.ENTITLEMENTS());
    }

    /// @dev `invariant_restrictionCodePredictsOutcome` (security-token.invariants.t.sol says what it means).
    function _checkRestrictionCodePredictsOutcome() internal view {
        _requireNone(model.RESTRICTION_CODE());
    }

    /// @dev `invariant_escrowReservationsEqualTokensOwed` (security-token.invariants.t.sol says what it means).
    function _checkEscrowReservationsEqualTokensOwed() internal view {
        uint256 owed;
        for (uint256 id = 1; id <= escrow.currentOfferingId(); ++id) {
            IStoEscrow.Offering memory o = escrow.offering(id);
            uint256 sold;
            uint256 unclaimed;
            for (uint256 i; i < model.actorCount(); ++i) {
                address a = model.actor(i);
                uint256 tokens = escrow.tokensOwed(id, a);
                sold += tokens;
                if (!escrow.claimed(id, a)) unclaimed += tokens;
            }
            require(sold == o.tokensSold, string.concat("offering ", id.toString(), " sold != its positions"));
            if (!o.closed) owed += o.tokenAmount;
            else if (o.succeeded) owed += unclaimed;
        }
        uint256 reserved = token.reservedSupply();
        require(reserved == owed, string.concat("reserved ", reserved.toString(), " != owed ", owed.toString()));
    }

    /// @dev `invariant_escrowSolvent` (security-token.invariants.t.sol says what it means).
    function _checkEscrowSolvent() internal view {
        uint256 owed;
        for (uint256 id = 1; id <= escrow.currentOfferingId(); ++id) {
            owed += _escrowOwes(id);
        }
        uint256 held = usd.balanceOf(address(escrow));
        require(held >= owed, string.concat("escrow holds ", held.toString(), " of ", owed.toString(), " owed"));
    }

    /// @dev `invariant_noRoleExceedsItsGrant` (security-token.invariants.t.sol says what it means).
    function _checkNoRoleExceedsItsGrant() internal view {
        _requireNone(model.ROLE_MATRIX());
        require(token.tokenizer() == model.tokenizer(), "the tokenizer is not the one the handover made");
    }

    /// @dev `invariant_frozenMeansFrozen` (security-token.invariants.t.sol says what it means).
    function _checkFrozenMeansFrozen() internal view {
        _requireNone(model.FROZEN());
    }

    /// @dev `invariant_recoveryOnlyWithinInvestor` (security-token.invariants.t.sol says what it means).
    function _checkRecoveryOnlyWithinInvestor() internal view {
        _requireNone(model.RECOVERY());
        for (uint256 i; i < model.actorCount(); ++i) {
            address lost = model.actor(i);
            require(
                token.pendingRecovery(lost).newWallet == model.pendingRecovery(lost).newWallet,
                string.concat("recovery of ", model.nameOf(lost), " not as requested")
            );
        }
    }

    /// @dev `invariant_offeringPaysItsInvestor` (security-token.invariants.t.sol says what it means).
    function _checkOfferingPaysItsInvestor() internal view {
        _requireNone(model.OFFERING_OWNERSHIP());
    }

    // ───────────────────────────── helpers ─────────────────────────────

    function _escrowOwes(uint256 id) private view returns (uint256 owed) {
        IStoEscrow.Offering memory o = escrow.offering(id);
        if (!o.closed) return o.raised;
        if (o.succeeded && !o.proceedsWithdrawn) owed = o.proceeds;
        for (uint256 i; i < model.actorCount(); ++i) {
            address a = model.actor(i);
            if (escrow.claimed(id, a)) continue;
            uint256 paid = escrow.invested(id, a);
            if (!o.succeeded) {
                owed += paid;
            } else {
                uint256 tokens = escrow.tokensOwed(id, a);
                uint256 cost = tokens == 0 ? 0 : Math.mulDiv(tokens, o.hardCap, o.tokenAmount, Math.Rounding.Ceil);
                owed += paid - cost;
            }
        }
    }

    function _requireNone(bytes32 key) private view {
        uint256 count = model.violations(key);
        require(count == 0, string.concat(count.toString(), " violation(s), first: ", model.firstViolation(key)));
    }

    // ───────────────────────────── setup ─────────────────────────────

    /// @dev 0 the tokenizer, 1 the key it may hand over to, 2-7 role holders, 8-12 five wallets of three investors,
    ///      13 an outsider, 14 the platform (the factory's owner).
    function _actors() private pure returns (address[15] memory a) {
        for (uint256 i; i < 15; ++i) {
            a[i] = address(uint160(0x1000 + i));
        }
    }

    function _deploy(address[15] memory a) private {
        address platform = a[14];
        factory = new TokenFactory(address(new SecurityToken()), address(new StoEscrow()), platform);
        address tokenImplementationA = factory.tokenImplementation();
        address escrowImplementationA = factory.escrowImplementation();
        address tokenImplementationB = address(new SecurityToken());
        address escrowImplementationB = address(new StoEscrow());
        vm.prank(platform);
        factory.publishImplementations(tokenImplementationB, escrowImplementationB);
        vm.prank(platform);
        factory.publishImplementations(tokenImplementationA, escrowImplementationA);

        address[] memory holders = new address[](5);
        bytes32[] memory ids = new bytes32[](5);
        uint256[] memory preMints = new uint256[](5);
        (holders[0], ids[0], preMints[0]) = (a[8], "investor-a", 1_000);
        (holders[1], ids[1], preMints[1]) = (a[9], "investor-a", 0);
        (holders[2], ids[2], preMints[2]) = (a[10], "investor-b", 500);
        (holders[3], ids[3], preMints[3]) = (a[11], "investor-b", 0);
        (holders[4], ids[4], preMints[4]) = (a[12], "investor-c", 200);
        ITokenFactory.TokenizationParams memory params = ITokenFactory.TokenizationParams(
            "Invariant Share", "INV", 0, SUPPLY_CAP, address(usd), holders, ids, preMints
        );
        vm.prank(a[0]);
        (address token_, address escrow_) = factory.newTokenization(params);
        token = ISecurityToken(token_);
        escrow = IStoEscrow(escrow_);

        model.setImplementations(token_, tokenImplementationA, tokenImplementationB);
        model.setImplementations(escrow_, escrowImplementationA, escrowImplementationB);
    }

    function _grantRoles(address[15] memory a) private {
        bytes32[6] memory roles = [
            token.MINTER_ROLE(),
            token.WHITELISTER_ROLE(),
            token.FREEZER_ROLE(),
            token.ENFORCER_ROLE(),
            token.RECOVERY_ROLE(),
            token.PAUSER_ROLE()
        ];
        for (uint256 i; i < roles.length; ++i) {
            vm.prank(a[0]);
            SecurityToken(address(token)).grantRole(roles[i], a[2 + i]);
            model.designate(roles[i], a[2 + i]);
        }
    }

    function _registerActors(address[15] memory a) private {
        string[15] memory names = [
            "tokenizer",
            "next tokenizer",
            "minter",
            "whitelister",
            "freezer",
            "enforcer",
            "recovery agent",
            "pauser",
            "alice wallet 1",
            "alice wallet 2",
            "bob wallet 1",
            "bob wallet 2",
            "carol wallet 1",
            "outsider",
            "platform"
        ];
        model.setToken(token, a[0], a[14]);
        for (uint256 i; i < 15; ++i) {
            model.addActor(a[i], names[i], token.investorOf(a[i]));
            vm.label(a[i], names[i]);
        }
        vm.label(address(token), "token proxy");
        vm.label(address(escrow), "escrow proxy");
        vm.label(address(factory), "factory");
        vm.label(address(usd), "payment token");
    }
}
