// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

/// @title WrongProxiableUUIDMock
/// @notice Test-only contract that answers ERC-1822's `proxiableUUID` with another slot than ERC-1967's
///         implementation slot: a UUPS proxy must refuse to upgrade to it (UUPSUnsupportedProxiableUUID).
contract WrongProxiableUUIDMock {
    /// @notice Not the ERC-1967 implementation slot.
    function proxiableUUID() external pure returns (bytes32) {
        return keccak256("not the ERC-1967 implementation slot");
    }
}
