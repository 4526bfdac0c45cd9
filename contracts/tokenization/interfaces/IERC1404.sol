// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

/// @title IERC1404
/// @notice ERC-1404 (Simple Restricted Token Standard): why a transfer would fail, as a code and a message, before
///         anyone signs it. Code 0 means no restriction.
interface IERC1404 {
    /// @notice The restriction that would stop `value` moving from `from` to `to` now; 0 when none.
    function detectTransferRestriction(address from, address to, uint256 value) external view returns (uint8 code);
    /// @notice A human-readable explanation of `code`.
    function messageForTransferRestriction(uint8 code) external view returns (string memory message);
}
