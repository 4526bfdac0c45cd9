// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {StoEscrow} from "../tokenization/StoEscrow.sol";

/// @title StoEscrowV2Mock
/// @notice Test-only next version of StoEscrow: the same storage and code plus one view, to show that an escrow
///         upgraded to it keeps its offerings and positions.
/// @dev Defines no initializer of its own: proxies upgraded to it are initialized already, and a new proxy of it runs
///      the inherited `initialize`, which initializes every parent.
/// @custom:oz-upgrades-unsafe-allow missing-initializer
/// @custom:oz-upgrades-from StoEscrow
contract StoEscrowV2Mock is StoEscrow {
    /// @notice The version of the implementation.
    function version() external pure returns (string memory) {
        return "2";
    }
}
