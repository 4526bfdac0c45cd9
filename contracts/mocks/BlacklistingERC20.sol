// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";

/// @title BlacklistingERC20
/// @notice Test-only payment token with a USDC-style blacklist: a blacklisted address can neither send nor receive.
contract BlacklistingERC20 is ERC20 {
    /// @notice Whether `account` is blacklisted.
    mapping(address account => bool) public isBlacklisted;

    /// @notice `account` is blacklisted: it may neither send nor receive.
    error Blacklisted(address account);

    /// @notice Deploys the token with an empty blacklist.
    constructor() ERC20("Blacklisting USD", "BUSD") {}

    /// @notice 6 decimals, like USDC.
    function decimals() public pure override returns (uint8) {
        return 6;
    }

    /// @notice Mints `amount` to `to`. Unrestricted: tests only.
    function mint(address to, uint256 amount) external {
        _mint(to, amount);
    }

    /// @notice Adds `account` to (true) or removes it from (false) the blacklist. Unrestricted: tests only.
    function setBlacklisted(address account, bool blacklisted) external {
        isBlacklisted[account] = blacklisted;
    }

    function _update(address from, address to, uint256 value) internal override {
        if (isBlacklisted[from]) revert Blacklisted(from);
        if (isBlacklisted[to]) revert Blacklisted(to);
        super._update(from, to, value);
    }
}
