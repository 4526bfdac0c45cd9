// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {ERC20Upgradeable} from "@openzeppelin/contracts-upgradeable/token/ERC20/ERC20Upgradeable.sol";
import {UUPSUpgradeable} from "@openzeppelin/contracts-upgradeable/proxy/utils/UUPSUpgradeable.sol";

/// @notice Gas baseline only: OpenZeppelin's ERC-20 behind an ERC-1967 proxy, nothing else, so the bench can tell what
///         the proxy costs a transfer from what the security token's rules cost.
contract PlainERC20Upgradeable is ERC20Upgradeable, UUPSUpgradeable {
    /// @custom:oz-upgrades-unsafe-allow constructor
    constructor() {
        _disableInitializers();
    }

    function initialize(address holder, uint256 supply) external initializer {
        __ERC20_init("Plain", "PLN");
        _mint(holder, supply);
    }

    function _authorizeUpgrade(address) internal pure override {
        revert("not upgradeable");
    }
}
