// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";

/// @title FeeOnTransferERC20
/// @notice Test-only payment token that burns a fee on every transfer: the recipient receives the amount less
///         `feeBasisPoints` of it, the sender is debited the whole amount. Mints and burns are not charged.
contract FeeOnTransferERC20 is ERC20 {
    /// @notice The fee, in basis points of each transferred amount (rounded down).
    uint256 public immutable feeBasisPoints;

    /// @param feeBasisPoints_ The fee charged on every transfer, in basis points (at most 10,000).
    constructor(uint256 feeBasisPoints_) ERC20("Fee On Transfer", "FOT") {
        require(feeBasisPoints_ <= 10_000, "fee above 100%");
        feeBasisPoints = feeBasisPoints_;
    }

    /// @notice 6 decimals, like USDC.
    function decimals() public pure override returns (uint8) {
        return 6;
    }

    /// @notice Mints `amount` to `to`. Unrestricted: tests only.
    function mint(address to, uint256 amount) external {
        _mint(to, amount);
    }

    /// @dev The fee leaves the sender with the rest and is burned.
    function _update(address from, address to, uint256 value) internal override {
        if (from == address(0) || to == address(0)) {
            super._update(from, to, value);
            return;
        }
        uint256 fee = (value * feeBasisPoints) / 10_000;
        super._update(from, to, value - fee);
        if (fee != 0) super._update(from, address(0), fee);
    }
}
