// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";

/// @title BlacklistingERC20
/// @notice Test-only payment token with a USDC-style blacklist: a blacklisted address can neither send nor receive.
///         By default a refused transfer reverts (`Blacklisted`); with `failSilently` set, `transfer` and
///         `transferFrom` return false instead, as some older tokens do.
contract BlacklistingERC20 is ERC20 {
    /// @notice Whether `account` is blacklisted.
    mapping(address account => bool) public isBlacklisted;

    /// @notice Whether a refused transfer returns false instead of reverting.
    bool public failSilently;

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

    /// @notice Makes refused transfers return false (true) or revert (false). Unrestricted: tests only.
    function setFailSilently(bool silent) external {
        failSilently = silent;
    }

    /// @inheritdoc ERC20
    function transfer(address to, uint256 value) public override returns (bool) {
        if (failSilently && (isBlacklisted[msg.sender] || isBlacklisted[to])) return false;
        return super.transfer(to, value);
    }

    /// @inheritdoc ERC20
    function transferFrom(address from, address to, uint256 value) public override returns (bool) {
        if (failSilently && (isBlacklisted[from] || isBlacklisted[to])) return false;
        return super.transferFrom(from, to, value);
    }

    function _update(address from, address to, uint256 value) internal override {
        if (isBlacklisted[from]) revert Blacklisted(from);
        if (isBlacklisted[to]) revert Blacklisted(to);
        super._update(from, to, value);
    }
}
