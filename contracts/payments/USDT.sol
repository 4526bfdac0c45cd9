// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";
import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";

/// @title USDT
/// @notice Stand-in for Tether USD on local chains and testnets: a plain 6-decimal ERC-20 that the owner mints.
contract USDT is ERC20, Ownable {
    /// @notice Deploys the token; the deployer becomes the owner (the only minter).
    constructor() ERC20("Tether USD", "USDT") Ownable(msg.sender) {}

    /// @notice Token decimals, as for Tether USD.
    function decimals() public pure override returns (uint8) {
        return 6;
    }

    /// @notice Mints `amount` to `to`.
    /// @param to The recipient.
    /// @param amount The amount in base units (6 decimals).
    function mint(address to, uint256 amount) external onlyOwner {
        _mint(to, amount);
    }
}
