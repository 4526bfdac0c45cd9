// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";

/// @title ReentrantERC20
/// @notice Test-only hostile payment token: once armed, every balance move calls back `callbackTarget` with `callbackData` and
///         bubbles any revert, to prove the reentrancy guards of the contracts that move it.
contract ReentrantERC20 is ERC20 {
    /// @notice Contract called back on every transfer while armed.
    address public callbackTarget;
    /// @notice Calldata of the callback.
    bytes public callbackData;

    /// @notice Deploys the token unarmed.
    constructor() ERC20("Reentrant", "REE") {}

    /// @notice Mints `amount` to `to`. Unrestricted: tests only.
    function mint(address to, uint256 amount) external {
        _mint(to, amount);
    }

    /// @notice Arms (non-zero `target_`) or disarms the callback.
    function arm(address target_, bytes calldata data_) external {
        callbackTarget = target_;
        callbackData = data_;
    }

    function _update(address from, address to, uint256 value) internal override {
        super._update(from, to, value);
        address t = callbackTarget;
        if (t != address(0) && from != address(0)) {
            (bool ok, bytes memory ret) = t.call(callbackData);
            if (!ok) {
                assembly ("memory-safe") {
                    revert(add(ret, 0x20), mload(ret))
                }
            }
        }
    }
}
