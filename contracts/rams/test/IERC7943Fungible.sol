// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {IERC165} from "@openzeppelin/contracts/utils/introspection/IERC165.sol";

/// @title IERC7943Fungible
/// @notice ERC-7943 ("uRWA") interface for fungible regulated assets, as used by the RAMS tests.
/// @dev TEST SUPPORT ONLY: declared here for the test mock; nothing in production imports it.
interface IERC7943Fungible is IERC165 {
    /// @notice Tokens were moved by the asset's authority, bypassing the holder.
    /// @param from Holder the tokens were taken from.
    /// @param to Receiver.
    /// @param amount Amount moved.
    event ForcedTransfer(address indexed from, address indexed to, uint256 amount);

    /// @notice The frozen amount of `account` was set.
    /// @param account The holder.
    /// @param amount The frozen amount after the change.
    event Frozen(address indexed account, uint256 amount);

    /// @notice `account` may not send.
    /// @param account The account.
    error ERC7943CannotSend(address account);
    /// @notice `account` may not receive.
    /// @param account The account.
    error ERC7943CannotReceive(address account);
    /// @notice The transfer breaks another rule of the asset.
    /// @param from Sender.
    /// @param to Receiver.
    /// @param amount Amount.
    error ERC7943CannotTransfer(address from, address to, uint256 amount);
    /// @notice The amount is covered by the balance but not by its unfrozen part.
    /// @param account The holder.
    /// @param amount Amount requested.
    /// @param unfrozen Unfrozen balance.
    error ERC7943InsufficientUnfrozenBalance(address account, uint256 amount, uint256 unfrozen);

    /// @notice Moves tokens from `from` to `to` without the holder's consent.
    /// @param from Holder.
    /// @param to Receiver.
    /// @param amount Amount.
    /// @return result True on success.
    function forcedTransfer(address from, address to, uint256 amount) external returns (bool result);

    /// @notice Sets (overwrites) the frozen amount of `account`.
    /// @param account The holder.
    /// @param amount The frozen amount; may exceed the balance.
    /// @return result True on success.
    function setFrozenTokens(address account, uint256 amount) external returns (bool result);

    /// @notice Whether `account` may send.
    /// @param account The account.
    /// @return allowed True when allowed.
    function canSend(address account) external view returns (bool allowed);

    /// @notice Whether `account` may receive.
    /// @param account The account.
    /// @return allowed True when allowed.
    function canReceive(address account) external view returns (bool allowed);

    /// @notice The frozen amount of `account`.
    /// @param account The account.
    /// @return amount The frozen amount; may exceed the balance.
    function getFrozenTokens(address account) external view returns (uint256 amount);

    /// @notice Whether a transfer would currently pass the asset's rules, frozen tokens included.
    /// @param from Sender.
    /// @param to Receiver.
    /// @param amount Amount.
    /// @return allowed True when allowed.
    function canTransfer(address from, address to, uint256 amount) external view returns (bool allowed);
}
