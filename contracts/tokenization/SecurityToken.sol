// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";
import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {IERC20Metadata} from "@openzeppelin/contracts/token/ERC20/extensions/IERC20Metadata.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {SafeCast} from "@openzeppelin/contracts/utils/math/SafeCast.sol";
import {ReentrancyGuardTransient} from "@openzeppelin/contracts/utils/ReentrancyGuardTransient.sol";
import {ISecurityToken} from "./interfaces/ISecurityToken.sol";

/// @title SecurityToken
/// @notice Permissioned ERC-20 for one tokenized asset, used through EIP-1167 clones made by the TokenFactory.
///         Whitelist enforced on both sides of every transfer, optional supply cap with supply reserved for the
///         escrow, ERC-7943 eligibility views and payment-token dividends (magnified dividend per share, ERC-1726).
/// @dev Balances do not live in OpenZeppelin's private `_balances`: `_update` is overridden to keep each balance in
///      the same storage slot as its whitelist flag, so a whitelisted transfer touches no more per-account slots
///      than a plain ERC-20 transfer. OpenZeppelin's `_balances`, `_totalSupply`, `_name` and `_symbol` stay unused.
contract SecurityToken is ERC20, ReentrancyGuardTransient, ISecurityToken {
    using SafeERC20 for IERC20;
    using SafeCast for uint256;
    using SafeCast for int256;

    /// @notice Scale of the dividend per share, so that small distributions over a large supply do not round to 0.
    uint256 public constant MAGNITUDE = 2 ** 128;

    /// @notice `initialize` was already called (or this is the implementation, which is locked).
    error AlreadyInitialized();

    /// @dev Balance and whitelist flag share one slot. Balances are bounded by the total supply, itself kept
    ///      within uint248 by `_update`.
    struct Holder {
        uint248 balance;
        bool whitelisted;
    }

    // Slot packing: tokenizer, decimals and the initialization flag are written in one SSTORE.
    address private _tokenizer;
    uint8 private _decimals;
    bool private _initialized;

    address private _escrow;
    address private _paymentToken;
    uint256 private _supplyCap;
    uint256 private _reservedSupply;
    uint256 private _supply;
    string private _tokenName;
    string private _tokenSymbol;

    mapping(address account => Holder) private _holders;

    uint256 private _magnifiedDividendPerShare;
    /// @dev Part of `amount * MAGNITUDE` that did not divide evenly by the supply; added to the next distribution.
    uint256 private _carriedRemainder;
    uint256 private _totalDividendsDistributed;
    mapping(address account => int256) private _corrections;
    mapping(address account => uint256) private _withdrawn;

    modifier onlyTokenizer() {
        if (msg.sender != _tokenizer) revert NotTokenizer(msg.sender);
        _;
    }

    modifier onlyEscrow() {
        if (msg.sender != _escrow) revert NotEscrow(msg.sender);
        _;
    }

    /// @notice Locks the implementation: only clones can be initialized.
    constructor() ERC20("", "") {
        _initialized = true;
    }

    /// @inheritdoc ISecurityToken
    function initialize(
        TokenConfig calldata config,
        address tokenizer_,
        address escrow_,
        address[] calldata initialHolders,
        uint256[] calldata preMints
    ) external {
        if (_initialized) revert AlreadyInitialized();
        if (tokenizer_ == address(0) || escrow_ == address(0) || config.paymentToken == address(0)) {
            revert ZeroAddress();
        }
        if (config.decimals > 18) revert InvalidDecimals(config.decimals);
        if (initialHolders.length != preMints.length) revert LengthMismatch(initialHolders.length, preMints.length);

        _tokenizer = tokenizer_;
        _decimals = config.decimals;
        _initialized = true;
        _escrow = escrow_;
        _paymentToken = config.paymentToken;
        if (config.supplyCap != 0) _supplyCap = config.supplyCap;
        _tokenName = config.name;
        _tokenSymbol = config.symbol;

        for (uint256 i; i < initialHolders.length; ++i) {
            _setWhitelisted(initialHolders[i], true);
            if (preMints[i] != 0) _mintCapped(initialHolders[i], preMints[i]);
        }
    }

    // ───────────────────────────── metadata and configuration ─────────────────────────────

    /// @inheritdoc ERC20
    function name() public view override(ERC20, IERC20Metadata) returns (string memory) {
        return _tokenName;
    }

    /// @inheritdoc ERC20
    function symbol() public view override(ERC20, IERC20Metadata) returns (string memory) {
        return _tokenSymbol;
    }

    /// @inheritdoc ERC20
    function decimals() public view override(ERC20, IERC20Metadata) returns (uint8) {
        return _decimals;
    }

    /// @inheritdoc ERC20
    function totalSupply() public view override(ERC20, IERC20) returns (uint256) {
        return _supply;
    }

    /// @inheritdoc ERC20
    function balanceOf(address account) public view override(ERC20, IERC20) returns (uint256) {
        return _holders[account].balance;
    }

    /// @inheritdoc ISecurityToken
    function tokenizer() external view returns (address) {
        return _tokenizer;
    }

    /// @inheritdoc ISecurityToken
    function escrow() external view returns (address) {
        return _escrow;
    }

    /// @inheritdoc ISecurityToken
    function paymentToken() external view returns (address) {
        return _paymentToken;
    }

    /// @inheritdoc ISecurityToken
    function supplyCap() external view returns (uint256) {
        return _supplyCap;
    }

    /// @inheritdoc ISecurityToken
    function reservedSupply() external view returns (uint256) {
        return _reservedSupply;
    }

    // ───────────────────────────── whitelist ─────────────────────────────

    /// @inheritdoc ISecurityToken
    function isWhitelisted(address account) public view returns (bool) {
        return _holders[account].whitelisted;
    }

    /// @inheritdoc ISecurityToken
    function setWhitelisted(address account, bool status) external onlyTokenizer {
        _setWhitelisted(account, status);
    }

    /// @inheritdoc ISecurityToken
    function setWhitelistedBatch(address[] calldata accounts, bool[] calldata statuses) external onlyTokenizer {
        if (accounts.length != statuses.length) revert LengthMismatch(accounts.length, statuses.length);
        for (uint256 i; i < accounts.length; ++i) {
            _setWhitelisted(accounts[i], statuses[i]);
        }
    }

    /// @dev Emits on every call, also when the status does not change, so each request leaves a receipt trace.
    function _setWhitelisted(address account, bool status) private {
        if (account == address(0)) revert ZeroAddress();
        _holders[account].whitelisted = status;
        emit WhitelistUpdated(account, status);
    }

    /// @inheritdoc ISecurityToken
    function canSend(address account) external view returns (bool) {
        return _holders[account].whitelisted;
    }

    /// @inheritdoc ISecurityToken
    function canReceive(address account) external view returns (bool) {
        return _holders[account].whitelisted;
    }

    /// @inheritdoc ISecurityToken
    function canTransfer(address from, address to, uint256 amount) external view returns (bool) {
        Holder storage sender = _holders[from];
        return sender.whitelisted && _holders[to].whitelisted && sender.balance >= amount;
    }

    // ───────────────────────────── supply ─────────────────────────────

    /// @inheritdoc ISecurityToken
    function mint(address to, uint256 amount) external onlyTokenizer {
        if (amount == 0) revert ZeroAmount();
        _mintCapped(to, amount);
    }

    /// @inheritdoc ISecurityToken
    function burn(uint256 amount) external {
        if (amount == 0) revert ZeroAmount();
        _burn(msg.sender, amount);
    }

    /// @inheritdoc ISecurityToken
    function reserveSupply(uint256 amount) external onlyEscrow {
        if (amount == 0) revert ZeroAmount();
        uint256 reserved = _reservedSupply + amount;
        _checkCap(_supply + reserved);
        _reservedSupply = reserved;
        emit SupplyReserved(amount, reserved);
    }

    /// @inheritdoc ISecurityToken
    function releaseReservedSupply(uint256 amount) external onlyEscrow {
        if (amount == 0) revert ZeroAmount();
        uint256 reserved = _spendReservation(amount);
        emit ReservationReleased(amount, reserved);
    }

    /// @inheritdoc ISecurityToken
    /// @dev The reservation already counts against the cap, so no cap check here; the Transfer event records it.
    function mintReserved(address to, uint256 amount) external onlyEscrow {
        if (amount == 0) revert ZeroAmount();
        _spendReservation(amount);
        _mint(to, amount);
    }

    function _spendReservation(uint256 amount) private returns (uint256 reserved) {
        reserved = _reservedSupply;
        if (amount > reserved) revert ReservationExceeded(reserved, amount);
        unchecked {
            reserved -= amount;
        }
        _reservedSupply = reserved;
    }

    function _mintCapped(address to, uint256 amount) private {
        _checkCap(_supply + _reservedSupply + amount);
        _mint(to, amount);
    }

    function _checkCap(uint256 requestedSupply) private view {
        uint256 cap = _supplyCap;
        if (cap != 0 && requestedSupply > cap) revert SupplyCapExceeded(cap, requestedSupply);
    }

    /// @dev Replaces OpenZeppelin's balance bookkeeping (see the contract notes). Enforces the whitelist on real
    ///      transfers and mints (burns need none) and keeps dividend corrections so past dividends stay with the
    ///      account that held the tokens; corrections are skipped until the first distribution.
    function _update(address from, address to, uint256 value) internal override {
        // Eligibility first, so a refused transfer names the refused account whatever the balance.
        if (to != address(0)) {
            if (from != address(0) && !_holders[from].whitelisted) revert ERC7943CannotSend(from);
            if (!_holders[to].whitelisted) revert ERC7943CannotReceive(to);
        }

        uint256 pps = _magnifiedDividendPerShare;
        if (from == address(0)) {
            // Keeps the supply, and so every balance, within uint248.
            _supply = (_supply + value).toUint248();
        } else {
            Holder storage sender = _holders[from];
            uint256 fromBalance = sender.balance;
            if (fromBalance < value) revert ERC20InsufficientBalance(from, fromBalance, value);
            unchecked {
                sender.balance = uint248(fromBalance - value);
            }
            if (pps != 0) _corrections[from] += (pps * value).toInt256();
        }

        if (to == address(0)) {
            unchecked {
                _supply -= value;
            }
        } else {
            unchecked {
                // Cannot overflow: a balance never exceeds the supply, which fits in uint248.
                _holders[to].balance += uint248(value);
            }
            if (pps != 0) _corrections[to] -= (pps * value).toInt256();
        }

        emit Transfer(from, to, value);
    }

    // ───────────────────────────── dividends ─────────────────────────────

    /// @inheritdoc ISecurityToken
    function distributeDividends(uint256 amount) external nonReentrant onlyTokenizer {
        if (amount == 0) revert ZeroAmount();
        uint256 supply = _supply;
        if (supply == 0) revert NoSupply();

        uint256 magnified = amount * MAGNITUDE + _carriedRemainder;
        uint256 pps = _magnifiedDividendPerShare + magnified / supply;
        _magnifiedDividendPerShare = pps;
        _carriedRemainder = magnified % supply;
        _totalDividendsDistributed += amount;
        emit DividendsDistributed(msg.sender, amount, pps);

        IERC20(_paymentToken).safeTransferFrom(msg.sender, address(this), amount);
    }

    /// @inheritdoc ISecurityToken
    function claimDividends() external nonReentrant returns (uint256 amount) {
        amount = withdrawableDividendOf(msg.sender);
        if (amount == 0) revert NothingToClaim(msg.sender);
        _withdrawn[msg.sender] += amount;
        emit DividendClaimed(msg.sender, amount);

        IERC20(_paymentToken).safeTransfer(msg.sender, amount);
    }

    /// @inheritdoc ISecurityToken
    function withdrawableDividendOf(address holder) public view returns (uint256) {
        return accumulativeDividendOf(holder) - _withdrawn[holder];
    }

    /// @inheritdoc ISecurityToken
    function withdrawnDividendOf(address holder) external view returns (uint256) {
        return _withdrawn[holder];
    }

    /// @inheritdoc ISecurityToken
    function accumulativeDividendOf(address holder) public view returns (uint256) {
        int256 magnified = (_magnifiedDividendPerShare * _holders[holder].balance).toInt256() + _corrections[holder];
        return magnified.toUint256() / MAGNITUDE;
    }

    /// @inheritdoc ISecurityToken
    function totalDividendsDistributed() external view returns (uint256) {
        return _totalDividendsDistributed;
    }
}
