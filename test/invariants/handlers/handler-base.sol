// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {Strings} from "@openzeppelin/contracts/utils/Strings.sol";
import {ISecurityToken} from "../../../contracts/tokenization/interfaces/ISecurityToken.sol";
import {IStoEscrow} from "../../../contracts/tokenization/interfaces/IStoEscrow.sol";
import {TokenFactory} from "../../../contracts/tokenization/TokenFactory.sol";
import {HostilePaymentToken} from "../mocks/hostile-payment-token.sol";
import {InvariantModel} from "../model.sol";
import {vm} from "../base/vm.sol";

/// @notice The deployed system every handler drives.
struct System {
    ISecurityToken token;
    IStoEscrow escrow;
    TokenFactory factory;
    HostilePaymentToken usd;
    InvariantModel model;
}

/// @title HandlerBase
/// @notice What the handlers share: the system, bounded choices of actors and amounts from the fuzzer's raw words,
///         and the two checks most actions end with (the role matrix and the restriction code's prediction).
/// @dev A handler never reverts: every call into the system is a try/catch, so a refused call is an outcome the
///      handler checks, and `fail_on_revert` catches a handler that breaks.
abstract contract HandlerBase {
    using Strings for uint256;

    /// @dev Wallets 8..13 of the model's actors: investors' wallets and an outsider, the usual holders.
    uint256 internal constant FIRST_WALLET = 8;
    uint256 internal constant WALLETS = 6;

    bytes32 internal constant DEFAULT_ADMIN = bytes32(0);
    bytes32 internal constant MINTER = keccak256("MINTER_ROLE");
    bytes32 internal constant WHITELISTER = keccak256("WHITELISTER_ROLE");
    bytes32 internal constant FREEZER = keccak256("FREEZER_ROLE");
    bytes32 internal constant ENFORCER = keccak256("ENFORCER_ROLE");
    bytes32 internal constant RECOVERY = keccak256("RECOVERY_ROLE");
    bytes32 internal constant PAUSER = keccak256("PAUSER_ROLE");

    ISecurityToken internal immutable token;
    IStoEscrow internal immutable escrow;
    TokenFactory internal immutable factory;
    HostilePaymentToken internal immutable usd;
    InvariantModel internal immutable model;

    constructor(System memory s) {
        token = s.token;
        escrow = s.escrow;
        factory = s.factory;
        usd = s.usd;
        model = s.model;
    }

    // ───────────────────────────── bounded choices ─────────────────────────────

    /// @dev `seed` mapped into [lo, hi] (lo when hi < lo).
    function _bound(uint256 seed, uint256 lo, uint256 hi) internal pure returns (uint256) {
        if (hi <= lo) return lo;
        uint256 span = hi - lo;
        return span == type(uint256).max ? seed : lo + (seed % (span + 1));
    }

    function _actor(uint256 seed) internal view returns (address) {
        return model.actor(seed % model.actorCount());
    }

    /// @dev Three times in four one of the wallets, else any actor (role holders may hold tokens too).
    function _holder(uint256 seed) internal view returns (address) {
        if (seed % 4 != 0) return model.actor(FIRST_WALLET + ((seed >> 2) % WALLETS));
        return _actor(seed >> 2);
    }

    /// @dev Three times in four an actor holding tokens (from a random starting point), else `_holder`: a move
    ///      needs a sender with something to move.
    function _sender(uint256 seed) internal view returns (address) {
        if (seed % 4 != 0) {
            uint256 count = model.actorCount();
            for (uint256 i; i < count; ++i) {
                address a = model.actor(((seed >> 2) % count + i) % count);
                if (token.balanceOf(a) != 0) return a;
            }
        }
        return _holder(seed >> 2);
    }

    /// @dev Who tries a restricted action: the tokenizer, the role's first holder, or any actor (twice as likely).
    function _caller(uint256 seed, bytes32 role) internal view returns (address) {
        uint256 pick = seed % 4;
        if (pick == 0) return model.tokenizer();
        if (pick == 1 && model.designated(role) != address(0)) return model.designated(role);
        return _actor(seed >> 2);
    }

    /// @dev Another wallet the model binds to the same investor as `wallet` (itself when there is none).
    function _sibling(address wallet) internal view returns (address) {
        bytes32 investor = model.investorOf(wallet);
        for (uint256 i; i < WALLETS; ++i) {
            address other = model.actor(FIRST_WALLET + i);
            if (other != wallet && investor != bytes32(0) && model.investorOf(other) == investor) return other;
        }
        return wallet;
    }

    /// @dev The tokenizer three times in four, else any actor: for what moves only when the tokenizer acts (offerings,
    ///      upgrades), so that the space holds long stories as well as refused attempts.
    function _issuer(uint256 seed) internal view returns (address) {
        return seed % 4 != 0 ? model.tokenizer() : _actor(seed >> 2);
    }

    function _role(uint256 seed) internal pure returns (bytes32) {
        bytes32[7] memory roles = [DEFAULT_ADMIN, MINTER, WHITELISTER, FREEZER, ENFORCER, RECOVERY, PAUSER];
        return roles[seed % roles.length];
    }

    /// @dev Gives `holder` `amount` of the payment token unless it is blacklisted there (then it keeps what it has).
    function _fund(address holder, uint256 amount) internal {
        if (amount == 0 || usd.blacklisted(holder)) return;
        usd.mint(holder, amount);
    }

    // ───────────────────────────── checks ─────────────────────────────

    /// @dev The role matrix: a call that succeeded must have been allowed by the model's grants.
    function _checkAllowed(string memory action, address caller, bool ok, bool allowed) internal {
        if (!ok) return;
        model.succeeded(bytes32(bytes(action)));
        if (!allowed) {
            model.fail(model.ROLE_MATRIX(), string.concat(action, " succeeded for ", model.nameOf(caller)));
        }
    }

    /// @dev ERC-1404: code 0 (SUCCESS) exactly when the move went through.
    function _checkPrediction(string memory action, uint8 code, bool ok, address from, address to, uint256 amount)
        internal
    {
        if ((code == 0) == ok) return;
        model.fail(
            model.RESTRICTION_CODE(),
            string.concat(
                action,
                " of ",
                amount.toString(),
                " from ",
                model.nameOf(from),
                " to ",
                model.nameOf(to),
                ok ? " succeeded" : " failed",
                " with code ",
                uint256(code).toString()
            )
        );
    }

    function _fail(bytes32 key, string memory detail) internal {
        model.fail(key, detail);
    }
}
