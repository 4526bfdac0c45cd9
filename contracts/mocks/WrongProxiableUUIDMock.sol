// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

/// @title WrongProxiableUUIDMock
/// @notice Test-only contract that answers ERC-1822's `proxiableUUID` with another slot than ERC-1967's
///         implementation slot: a UUPS proxy must refuse to upgrade to it (UUPSUnsupportedProxiableUUID).
///         It claims to be a SecurityToken implementation (`upgradeKind`), so the kind check lets it through to the UUPS one.
contract WrongProxiableUUIDMock {
    /// @notice The SecurityToken's kind.
    function upgradeKind() external pure returns (bytes32) {
        return keccak256("tak.SecurityToken");
    }

    /// @notice Not the ERC-1967 implementation slot.
    function proxiableUUID() external pure returns (bytes32) {
        return keccak256("not the ERC-1967 implementation slot");
    }
}

/// @title KindOnlyMock
/// @notice Test-only contract that claims the SecurityToken's kind but is not UUPS (no `proxiableUUID`): a UUPS proxy must
///         refuse to upgrade to it (ERC1967InvalidImplementation).
contract KindOnlyMock {
    /// @notice The SecurityToken's kind.
    function upgradeKind() external pure returns (bytes32) {
        return keccak256("tak.SecurityToken");
    }
}
