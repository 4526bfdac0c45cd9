// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {ERC20Upgradeable} from "@openzeppelin/contracts-upgradeable/token/ERC20/ERC20Upgradeable.sol";
import {PausableUpgradeable} from "@openzeppelin/contracts-upgradeable/utils/PausableUpgradeable.sol";
import {AccessControlDefaultAdminRulesUpgradeable} from "@openzeppelin/contracts-upgradeable/access/extensions/AccessControlDefaultAdminRulesUpgradeable.sol";
import {DelayedUpgrades} from "../upgrades/DelayedUpgrades.sol";
import {ISecurityToken} from "../tokenization/interfaces/ISecurityToken.sol";

/// @title SecurityTokenBadLayoutMock
/// @notice Test-only implementation that must NOT pass as an upgrade of SecurityToken: the same bases and namespaces,
///         but a field inserted at the head of SecurityToken's namespaced struct, which would shift every field after
///         it (the escrow address would be read as `inserted`, balances of the investor bindings as frozen amounts...).
///         The storage-layout test shows OpenZeppelin's upgrades-core refusing it. Never deployed.
contract SecurityTokenBadLayoutMock is
    ERC20Upgradeable,
    PausableUpgradeable,
    AccessControlDefaultAdminRulesUpgradeable,
    DelayedUpgrades
{
    /// @custom:storage-location erc7201:tak.storage.SecurityToken
    struct SecurityTokenStorage {
        uint256 inserted;
        address escrow;
        uint8 decimals;
        uint48 recoveryDelay;
        address paymentToken;
        uint256 supplyCap;
        uint256 reservedSupply;
        uint256 magnifiedDividendPerShare;
        uint256 carriedRemainder;
        uint256 totalDividendsDistributed;
        mapping(address account => uint8) flags;
        mapping(address account => uint256) frozenTokens;
        mapping(address account => bytes32) investorOf;
        mapping(address account => int256) corrections;
        mapping(address account => uint256) withdrawn;
        mapping(address lostWallet => ISecurityToken.PendingRecovery) recoveries;
    }

    /// @custom:oz-upgrades-unsafe-allow constructor
    constructor() {
        _disableInitializers();
    }

    function upgradeKind() public pure override returns (bytes32) {
        return keccak256("tak.SecurityToken");
    }

    function _checkUpgrader() internal view override {
        _checkRole(DEFAULT_ADMIN_ROLE);
    }
}
