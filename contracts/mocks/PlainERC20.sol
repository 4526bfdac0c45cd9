// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";

/// @title PlainERC20
/// @notice Unmodified OpenZeppelin ERC-20 with a constructor premint: the gas baseline of the benchmark.
contract PlainERC20 is ERC20 {
    /// @param holder Receives the premint.
    /// @param amount Premint amount.
    constructor(address holder, uint256 amount) ERC20("Plain", "PLAIN") {
        _mint(holder, amount);
    }
}
