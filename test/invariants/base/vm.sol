// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

/// @title Vm
/// @notice The few Foundry cheatcodes this suite uses, called on forge's cheatcode address (the first 20 bytes of
///         keccak256("hevm cheat code")). Written here rather than taken from forge-std, which is not installed.
interface Vm {
    /// @notice The next call made by the calling contract has `msgSender` as its msg.sender.
    function prank(address msgSender) external;

    /// @notice Sets block.timestamp.
    function warp(uint256 newTimestamp) external;

    /// @notice Names `account` in traces and counterexamples.
    function label(address account, string calldata newLabel) external;
}

Vm constant vm = Vm(0x7109709ECfa91a80626fF3989D68f67F5b1DD12D);
