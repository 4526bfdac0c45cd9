// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {IERC165} from "@openzeppelin/contracts/utils/introspection/IERC165.sol";

/// @title IERC7943Fungible
/// @notice ERC-7943 ("uRWA", status Final) for ERC-20 based regulated assets: account eligibility, transfer checks that
///         count frozen tokens, frozen amounts and forced transfers. ERC-165 interface id 0x3edbb4c4.
interface IERC7943Fungible is IERC165 {
    /// @notice `amount` was moved from `from` to `to` by an authorized agent, without the holder's consent.
    event ForcedTransfer(address indexed from, address indexed to, uint256 amount);
    /// @notice The frozen amount of `account` is now `amount` (absolute, not a change).
    event Frozen(address indexed account, uint256 amount);

    /// @notice `account` may not send tokens.
    error ERC7943CannotSend(address account);
    /// @notice `account` may not receive tokens.
    error ERC7943CannotReceive(address account);
    /// @notice The transfer breaks a rule of the token other than eligibility and frozen amounts.
    error ERC7943CannotTransfer(address from, address to, uint256 amount);
    /// @notice `amount` is within the balance of `account` but above its unfrozen part, `unfrozen`.
    error ERC7943InsufficientUnfrozenBalance(address account, uint256 amount, uint256 unfrozen);

    /// @notice Moves `amount` from `from` to `to` without the holder's consent. Restricted; reverts on failure.
    function forcedTransfer(address from, address to, uint256 amount) external returns (bool result);
    /// @notice Sets (overwrites) the frozen amount of `account`; may exceed its balance. Restricted.
    function setFrozenTokens(address account, uint256 amount) external returns (bool result);
    /// @notice Whether `account` may send tokens (account-level: no amount or counterparty involved).
    function canSend(address account) external view returns (bool allowed);
    /// @notice Whether `account` may receive tokens (account-level).
    function canReceive(address account) external view returns (bool allowed);
    /// @notice The frozen amount of `account`; may exceed its balance.
    function getFrozenTokens(address account) external view returns (uint256 amount);
    /// @notice Whether `from` may transfer `amount` to `to` now, frozen tokens and every permissioned rule included.
    function canTransfer(address from, address to, uint256 amount) external view returns (bool allowed);
}
