// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {Initializable} from "@openzeppelin/contracts-upgradeable/proxy/utils/Initializable.sol";
import {UUPSUpgradeable} from "@openzeppelin/contracts-upgradeable/proxy/utils/UUPSUpgradeable.sol";
import {ERC1967Utils} from "@openzeppelin/contracts/proxy/ERC1967/ERC1967Utils.sol";
import {IImplementationRegistry} from "./IImplementationRegistry.sol";

/// @title DelayedUpgrades
/// @notice UUPS upgrades (ERC-1967) that holders can see coming: the upgrader schedules an implementation the registry
///         publishes, everyone sees `UpgradeScheduled` with the time it becomes possible, and only after
///         `UPGRADE_DELAY` may the upgrader execute it (`upgradeToAndCall`), provided the registry still publishes it.
///         The upgrader may cancel a scheduled upgrade at any time; the registry cancels it in effect by withdrawing
///         the implementation.
/// @dev The inheriting contract says who the upgrader is ({_checkUpgrader}). Storage is namespaced (ERC-7201).
abstract contract DelayedUpgrades is Initializable, UUPSUpgradeable {
    /// @notice How long a scheduled upgrade waits before it may be executed.
    uint48 public constant UPGRADE_DELAY = 7 days;

    /// @custom:storage-location erc7201:tak.storage.DelayedUpgrades
    struct DelayedUpgradesStorage {
        IImplementationRegistry registry;
        address scheduled;
        uint48 readyAt;
    }

    // keccak256(abi.encode(uint256(keccak256("tak.storage.DelayedUpgrades")) - 1)) & ~bytes32(uint256(0xff))
    bytes32 private constant STORAGE_LOCATION = 0x8facddbe892cb51bf712decf288e7a6b98aaf8872ba34b1ea05d64afabee1900;

    /// @notice `implementation` was scheduled by `by`; it may be executed from `readyAt` on.
    event UpgradeScheduled(address indexed implementation, uint48 readyAt, address indexed by);
    /// @notice The scheduled upgrade to `implementation` was cancelled by `by`.
    event UpgradeCancelled(address indexed implementation, address indexed by);

    /// @notice The registry does not publish `implementation`.
    error UpgradeNotPublished(address implementation);
    /// @notice No upgrade is scheduled, or another implementation than `implementation` is.
    error UpgradeNotScheduled(address implementation);
    /// @notice The scheduled upgrade may be executed only from `readyAt` on.
    error UpgradeNotReady(uint48 readyAt);
    /// @notice The registry given at initialization is the zero address.
    error ZeroRegistry();
    /// @notice `implementation` is not of this proxy's kind (say, an escrow implementation scheduled on a token).
    error WrongImplementationKind(address implementation);

    function __DelayedUpgrades_init(address registry_) internal onlyInitializing {
        if (registry_ == address(0)) revert ZeroRegistry();
        _upgradesStorage().registry = IImplementationRegistry(registry_);
    }

    /// @notice Schedules an upgrade to `newImplementation` (published by the registry), executable after
    ///         `UPGRADE_DELAY`. Replaces any upgrade scheduled before. Upgrader only.
    function scheduleUpgrade(address newImplementation) external {
        _checkUpgrader();
        DelayedUpgradesStorage storage $ = _upgradesStorage();
        if (!$.registry.isPublished(newImplementation)) revert UpgradeNotPublished(newImplementation);
        _checkKind(newImplementation);
        uint48 readyAt = uint48(block.timestamp) + UPGRADE_DELAY;
        $.scheduled = newImplementation;
        $.readyAt = readyAt;
        emit UpgradeScheduled(newImplementation, readyAt, msg.sender);
    }

    /// @notice Cancels the scheduled upgrade. Upgrader only.
    function cancelUpgrade() external {
        _checkUpgrader();
        DelayedUpgradesStorage storage $ = _upgradesStorage();
        address scheduled = $.scheduled;
        if (scheduled == address(0)) revert UpgradeNotScheduled(address(0));
        delete $.scheduled;
        delete $.readyAt;
        emit UpgradeCancelled(scheduled, msg.sender);
    }

    /// @notice The scheduled upgrade (zero address when none) and when it may be executed.
    function scheduledUpgrade() external view returns (address scheduled, uint48 readyAt) {
        DelayedUpgradesStorage storage $ = _upgradesStorage();
        return ($.scheduled, $.readyAt);
    }

    /// @notice The registry whose published implementations this proxy may be upgraded to.
    function implementationRegistry() public view returns (address) {
        return address(_upgradesStorage().registry);
    }

    /// @notice The implementation this proxy runs (ERC-1967 slot).
    function implementation() external view returns (address) {
        return ERC1967Utils.getImplementation();
    }

    /// @dev {upgradeToAndCall} passes here: the upgrader, the implementation scheduled, its delay over, and still
    ///      published. The schedule is consumed.
    function _authorizeUpgrade(address newImplementation) internal override {
        _checkUpgrader();
        DelayedUpgradesStorage storage $ = _upgradesStorage();
        if ($.scheduled != newImplementation || newImplementation == address(0)) {
            revert UpgradeNotScheduled(newImplementation);
        }
        if (block.timestamp < $.readyAt) revert UpgradeNotReady($.readyAt);
        if (!$.registry.isPublished(newImplementation)) revert UpgradeNotPublished(newImplementation);
        delete $.scheduled;
        delete $.readyAt;
    }

    /// @notice What this contract is, for upgrades: an implementation answering another kind is refused.
    function upgradeKind() public pure virtual returns (bytes32);

    /// @dev Reverts unless the caller may schedule, cancel and execute upgrades.
    function _checkUpgrader() internal view virtual;

    function _checkKind(address newImplementation) private view {
        try DelayedUpgrades(newImplementation).upgradeKind() returns (bytes32 kind) {
            if (kind == upgradeKind()) return;
        } catch {}
        revert WrongImplementationKind(newImplementation);
    }

    function _upgradesStorage() private pure returns (DelayedUpgradesStorage storage $) {
        assembly ("memory-safe") {
            $.slot := STORAGE_LOCATION
        }
    }
}
