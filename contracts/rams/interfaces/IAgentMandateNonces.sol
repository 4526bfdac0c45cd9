// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

/// @title IAgentMandateNonces (this project's addition to an ERC-8226 registry)
/// @notice Lets a principal cancel the EIP-712 signatures it gave and has not seen used. ERC-8226 gives a principal no
///         way to withdraw a signature short of using its nonce for something else; here the principal moves its
///         nonce forward, and every signature carrying a lower nonce can no longer be submitted.
/// @dev Kept apart from IAgentMandate so that interface, its selectors and its ERC-165 id (0x44aef2f5) stay exactly
///      the ERC's. ERC-165 id: the selector of `invalidateNonces` (0x22f888e7).
interface IAgentMandateNonces {
    /// @notice `principal` moved its nonce forward: its signatures carrying a nonce below `newNonce` are void.
    /// @param principal The principal (the caller).
    /// @param previousNonce The nonce before the call.
    /// @param newNonce The nonce from now on.
    event NoncesInvalidated(address indexed principal, uint256 previousNonce, uint256 newNonce);

    /// @notice `newNonce` is not ahead of the current nonce, or further ahead than one call may move it.
    /// @param currentNonce The principal's nonce now.
    /// @param newNonce The nonce asked for.
    error InvalidNewNonce(uint256 currentNonce, uint256 newNonce);

    /// @notice Moves the caller's nonce to `newNonce`, voiding every signature it gave for a lower nonce. Only the
    ///         principal itself may call it (a contract principal calls it from its own code).
    /// @dev To void only the signatures made for the current nonce, pass `nonces(principal) + 1`; to void signatures
    ///      made ahead for later nonces as well, pass a nonce above the highest one signed.
    /// @param newNonce The next nonce; strictly above the current one and at most 2^64 - 1 above it.
    function invalidateNonces(uint256 newNonce) external;
}
