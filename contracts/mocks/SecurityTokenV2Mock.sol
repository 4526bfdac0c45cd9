// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {SecurityToken} from "../tokenization/SecurityToken.sol";

/// @title SecurityTokenV2Mock
/// @notice Test-only next version of SecurityToken: the same storage and code plus one view, to show that a token
///         upgraded to it keeps every balance, freeze, binding, recovery, dividend and reservation.
/// @dev Defines no initializer of its own: proxies upgraded to it are initialized already, and a new proxy of it runs
///      the inherited `initialize`, which initializes every parent.
/// @custom:oz-upgrades-unsafe-allow missing-initializer
/// @custom:oz-upgrades-from SecurityToken
contract SecurityTokenV2Mock is SecurityToken {
    /// @notice The version of the implementation.
    function version() external pure returns (string memory) {
        return "2";
    }
}
