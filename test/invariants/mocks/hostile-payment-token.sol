// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";

/// @title HostilePaymentToken
/// @notice The payment token of the invariant suite: a 6-decimal ERC-20 that the fuzzer can turn into a
///         fee-on-transfer token (a fee in basis points taken from what the receiver gets, sent to a fee sink: the
///         sender is debited the full amount, as with USDT's dormant fee) and a blacklisting one (transfers from or
///         to a blacklisted address revert, as USDC's and USDT's do). Anyone may mint, set the fee and blacklist: the
///         handlers drive it.
contract HostilePaymentToken is ERC20 {
    /// @notice The largest fee the suite sets: 10 %.
    uint16 public constant MAX_FEE_BPS = 1_000;

    address public immutable feeSink;
    uint16 public feeBps;
    mapping(address account => bool) public blacklisted;

    error Blacklisted(address account);

    constructor(address feeSink_) ERC20("Hostile USD", "hUSD") {
        feeSink = feeSink_;
    }

    function decimals() public pure override returns (uint8) {
        return 6;
    }

    function mint(address to, uint256 amount) external {
        _mint(to, amount);
    }

    function setFee(uint16 bps) external {
        feeBps = bps > MAX_FEE_BPS ? MAX_FEE_BPS : bps;
    }

    function setBlacklisted(address account, bool status) external {
        blacklisted[account] = status;
    }

    function _update(address from, address to, uint256 value) internal override {
        if (blacklisted[from]) revert Blacklisted(from);
        if (blacklisted[to]) revert Blacklisted(to);
        uint256 fee = from == address(0) || to == address(0) ? 0 : (value * feeBps) / 10_000;
        super._update(from, to, value - fee);
        if (fee != 0) super._update(from, feeSink, fee);
    }
}
