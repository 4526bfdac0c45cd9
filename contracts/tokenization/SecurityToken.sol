// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {ERC20Upgradeable} from "@openzeppelin/contracts-upgradeable/token/ERC20/ERC20Upgradeable.sol";
import {PausableUpgradeable} from "@openzeppelin/contracts-upgradeable/utils/PausableUpgradeable.sol";
import {AccessControlUpgradeable} from "@openzeppelin/contracts-upgradeable/access/AccessControlUpgradeable.sol";
import {AccessControlDefaultAdminRulesUpgradeable} from "@openzeppelin/contracts-upgradeable/access/extensions/AccessControlDefaultAdminRulesUpgradeable.sol";
import {IAccessControl} from "@openzeppelin/contracts/access/IAccessControl.sol";
import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {IERC20Metadata} from "@openzeppelin/contracts/token/ERC20/extensions/IERC20Metadata.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {SafeCast} from "@openzeppelin/contracts/utils/math/SafeCast.sol";
import {ReentrancyGuardTransient} from "@openzeppelin/contracts/utils/ReentrancyGuardTransient.sol";
import {IERC165} from "@openzeppelin/contracts/utils/introspection/IERC165.sol";
import {DelayedUpgrades} from "../upgrades/DelayedUpgrades.sol";
import {ISecurityToken} from "./interfaces/ISecurityToken.sol";
import {IERC1404} from "./interfaces/IERC1404.sol";
import {IERC7943Fungible} from "./interfaces/IERC7943Fungible.sol";
import {TransferRestrictions} from "./TransferRestrictions.sol";

/// @title SecurityToken
/// @notice Permissioned ERC-20 for one tokenized asset, deployed behind an ERC-1967 proxy by the TokenFactory and
///         upgradeable only to an implementation the factory publishes, after a delay every holder can see
///         ({DelayedUpgrades}). Whitelist enforced on both sides of every transfer, each wallet bound to its investor,
///         optional supply cap with supply reserved for the escrow, payment-token dividends (magnified dividend per
///         share, ERC-1726), and issuer controls: ERC-7943 frozen amounts and forced transfers, whole-address freezes,
///         pause, a delayed and cancellable wallet recovery between wallets of one investor, ERC-1404 restriction
///         codes, and roles.
/// @dev Balances and supply are OpenZeppelin's: every move goes through {ERC20Upgradeable._update} — holder moves via
///      the {_update} override, which checks them first; forced moves and recoveries call it directly past the checks.
///      The tokenizer is the default admin (AccessControlDefaultAdminRules: a two-step handover, after which the old key
///      holds nothing) and holds every other role implicitly ({hasRole}).
contract SecurityToken is
    ERC20Upgradeable,
    PausableUpgradeable,
    AccessControlDefaultAdminRulesUpgradeable,
    ReentrancyGuardTransient,
    DelayedUpgrades,
    ISecurityToken
{
    using SafeERC20 for IERC20;
    using SafeCast for uint256;
    using SafeCast for int256;

    /// @notice Scale of the dividend per share, so that small distributions over a large supply do not round to 0.
    uint256 public constant MAGNITUDE = 2 ** 128;
    /// @notice Bounds of the recovery delay.
    uint48 public constant MIN_RECOVERY_DELAY = 1 days;
    uint48 public constant MAX_RECOVERY_DELAY = 30 days;
    uint48 private constant DEFAULT_RECOVERY_DELAY = 2 days;

    /// @inheritdoc ISecurityToken
    bytes32 public constant MINTER_ROLE = keccak256("MINTER_ROLE");
    /// @inheritdoc ISecurityToken
    bytes32 public constant WHITELISTER_ROLE = keccak256("WHITELISTER_ROLE");
    /// @inheritdoc ISecurityToken
    bytes32 public constant FREEZER_ROLE = keccak256("FREEZER_ROLE");
    /// @inheritdoc ISecurityToken
    bytes32 public constant ENFORCER_ROLE = keccak256("ENFORCER_ROLE");
    /// @inheritdoc ISecurityToken
    bytes32 public constant RECOVERY_ROLE = keccak256("RECOVERY_ROLE");
    /// @inheritdoc ISecurityToken
    bytes32 public constant PAUSER_ROLE = keccak256("PAUSER_ROLE");

    /// @dev ERC-7943's Last Call draft named the eligibility view `canTransact`; clients written against it find it.
    bytes4 private constant ERC7943_LAST_CALL_INTERFACE_ID =
        IERC7943Fungible.forcedTransfer.selector ^
            IERC7943Fungible.setFrozenTokens.selector ^
            ISecurityToken.canTransact.selector ^
            IERC7943Fungible.getFrozenTokens.selector ^
            IERC7943Fungible.canTransfer.selector;

    // Holder flags.
    uint8 private constant WHITELISTED = 1;
    uint8 private constant ADDRESS_FROZEN = 2;
    /// @dev Set while the frozen amount is not 0, so transfers read `frozenTokens` only for accounts that have one.
    uint8 private constant HAS_FROZEN_TOKENS = 4;
    /// @dev An account may send and receive when, of these two flags, only WHITELISTED is set.
    uint8 private constant ELIGIBILITY = WHITELISTED | ADDRESS_FROZEN;

    /// @custom:storage-location erc7201:tak.storage.SecurityToken
    struct SecurityTokenStorage {
        address escrow;
        uint8 decimals;
        uint48 recoveryDelay;
        address paymentToken;
        uint256 supplyCap;
        uint256 reservedSupply;
        /// @dev Kept within uint248 by `distributeDividends`.
        uint256 magnifiedDividendPerShare;
        /// @dev Part of `amount * MAGNITUDE` that did not divide evenly by the supply; added to the next distribution.
        uint256 carriedRemainder;
        uint256 totalDividendsDistributed;
        mapping(address account => uint8) flags;
        mapping(address account => uint256) frozenTokens;
        mapping(address account => bytes32) investorOf;
        mapping(address account => int256) corrections;
        mapping(address account => uint256) withdrawn;
        mapping(address lostWallet => PendingRecovery) recoveries;
    }

    // keccak256(abi.encode(uint256(keccak256("tak.storage.SecurityToken")) - 1)) & ~bytes32(uint256(0xff))
    bytes32 private constant STORAGE_LOCATION = 0x3d84837072fa8b84686cf1595d92074381e41d57d6d973cac095df6e84ef3100;

    modifier onlyEscrow() {
        if (msg.sender != _s().escrow) revert NotEscrow(msg.sender);
        _;
    }

    /// @notice Locks the implementation: only proxies can be initialized.
    /// @custom:oz-upgrades-unsafe-allow constructor
    constructor() {
        _disableInitializers();
    }

    /// @inheritdoc ISecurityToken
    function initialize(
        TokenConfig calldata config,
        address tokenizer_,
        address escrow_,
        address[] calldata initialHolders,
        bytes32[] calldata investorIds,
        uint256[] calldata preMints
    ) external initializer {
        if (tokenizer_ == address(0) || escrow_ == address(0) || config.paymentToken == address(0)) {
            revert ZeroAddress();
        }
        if (config.paymentToken.code.length == 0) revert InvalidPaymentToken(config.paymentToken);
        if (config.decimals > 18) revert InvalidDecimals(config.decimals);
        if (initialHolders.length != preMints.length) revert LengthMismatch(initialHolders.length, preMints.length);
        if (initialHolders.length != investorIds.length) {
            revert LengthMismatch(initialHolders.length, investorIds.length);
        }
        __ERC20_init(config.name, config.symbol);
        __Pausable_init();
        __AccessControlDefaultAdminRules_init(0, tokenizer_);
        __DelayedUpgrades_init(msg.sender);

        SecurityTokenStorage storage $ = _s();
        $.escrow = escrow_;
        $.decimals = config.decimals;
        $.recoveryDelay = DEFAULT_RECOVERY_DELAY;
        $.paymentToken = config.paymentToken;
        $.supplyCap = config.supplyCap;

        for (uint256 i; i < initialHolders.length; ++i) {
            _setWhitelisted(initialHolders[i], true);
            if (investorIds[i] != bytes32(0)) _bind(initialHolders[i], investorIds[i]);
            if (preMints[i] != 0) _mintCapped(initialHolders[i], preMints[i]);
        }
    }

    // ───────────────────────────── metadata and configuration ─────────────────────────────

    /// @inheritdoc ERC20Upgradeable
    function decimals() public view override(ERC20Upgradeable, IERC20Metadata) returns (uint8) {
        return _s().decimals;
    }

    /// @inheritdoc ISecurityToken
    function tokenizer() public view returns (address) {
        return defaultAdmin();
    }

    /// @inheritdoc ISecurityToken
    function escrow() external view returns (address) {
        return _s().escrow;
    }

    /// @inheritdoc ISecurityToken
    function paymentToken() external view returns (address) {
        return _s().paymentToken;
    }

    /// @inheritdoc ISecurityToken
    function supplyCap() external view returns (uint256) {
        return _s().supplyCap;
    }

    /// @inheritdoc ISecurityToken
    function reservedSupply() external view returns (uint256) {
        return _s().reservedSupply;
    }

    // ───────────────────────────── whitelist and investors ─────────────────────────────

    /// @inheritdoc ISecurityToken
    function isWhitelisted(address account) public view returns (bool) {
        return _s().flags[account] & WHITELISTED != 0;
    }

    /// @inheritdoc ISecurityToken
    function investorOf(address wallet) external view returns (bytes32) {
        return _s().investorOf[wallet];
    }

    /// @inheritdoc ISecurityToken
    function setWhitelisted(address account, bool status) external onlyRole(WHITELISTER_ROLE) {
        _setWhitelisted(account, status);
    }

    /// @inheritdoc ISecurityToken
    function setWhitelistedBatch(
        address[] calldata accounts,
        bool[] calldata statuses
    ) external onlyRole(WHITELISTER_ROLE) {
        if (accounts.length != statuses.length) revert LengthMismatch(accounts.length, statuses.length);
        for (uint256 i; i < accounts.length; ++i) {
            _setWhitelisted(accounts[i], statuses[i]);
        }
    }

    /// @inheritdoc ISecurityToken
    function whitelistInvestors(
        address[] calldata wallets,
        bytes32[] calldata investorIds
    ) external onlyRole(WHITELISTER_ROLE) {
        if (wallets.length != investorIds.length) revert LengthMismatch(wallets.length, investorIds.length);
        for (uint256 i; i < wallets.length; ++i) {
            _setWhitelisted(wallets[i], true);
            if (investorIds[i] != bytes32(0)) _bind(wallets[i], investorIds[i]);
        }
    }

    /// @dev Emits on every call, also when the status does not change, so each request leaves a receipt trace.
    function _setWhitelisted(address account, bool status) private {
        if (account == address(0)) revert ZeroAddress();
        mapping(address => uint8) storage flags = _s().flags;
        flags[account] = status ? flags[account] | WHITELISTED : flags[account] & ~WHITELISTED;
        emit WhitelistUpdated(account, status);
    }

    /// @dev A wallet may move to another investor only while it holds nothing: otherwise binding it to an accomplice's
    ///      investor id would open a recovery of what it holds.
    function _bind(address wallet, bytes32 investorId) private {
        SecurityTokenStorage storage $ = _s();
        bytes32 current = $.investorOf[wallet];
        if (current == investorId) return;
        if (current != bytes32(0) && _holdsAnything(wallet)) revert WalletInUse(wallet, current);
        $.investorOf[wallet] = investorId;
        emit InvestorBound(wallet, investorId, msg.sender);
    }

    function _holdsAnything(address wallet) private view returns (bool) {
        SecurityTokenStorage storage $ = _s();
        return
            balanceOf(wallet) != 0 ||
            $.frozenTokens[wallet] != 0 ||
            withdrawableDividendOf(wallet) != 0 ||
            $.recoveries[wallet].newWallet != address(0);
    }

    // ───────────────────────────── ERC-7943 and ERC-1404 views ─────────────────────────────

    /// @inheritdoc IERC7943Fungible
    /// @dev Whitelisted and not frozen as a whole address.
    function canSend(address account) public view returns (bool) {
        return _s().flags[account] & ELIGIBILITY == WHITELISTED;
    }

    /// @inheritdoc IERC7943Fungible
    /// @dev The same rule as {canSend}: the whitelist and the address freeze apply to both directions.
    function canReceive(address account) public view returns (bool) {
        return _s().flags[account] & ELIGIBILITY == WHITELISTED;
    }

    /// @inheritdoc ISecurityToken
    function canTransact(address account) external view returns (bool) {
        return canSend(account);
    }

    /// @inheritdoc IERC7943Fungible
    function canTransfer(address from, address to, uint256 amount) external view returns (bool) {
        return detectTransferRestriction(from, to, amount) == TransferRestrictions.SUCCESS;
    }

    /// @inheritdoc IERC7943Fungible
    function getFrozenTokens(address account) external view returns (uint256) {
        return _s().frozenTokens[account];
    }

    /// @inheritdoc ISecurityToken
    function isFrozen(address account) external view returns (bool) {
        return _s().flags[account] & ADDRESS_FROZEN != 0;
    }

    /// @inheritdoc IERC1404
    /// @dev Checks in the order the token enforces them, so the code names the error a transfer would revert with:
    ///      `from` 0 is an issuance (pause, receiver and cap), `to` 0 a burn (sender, balance, frozen tokens). Codes
    ///      are in {TransferRestrictions}. Never reverts.
    function detectTransferRestriction(address from, address to, uint256 value) public view returns (uint8) {
        SecurityTokenStorage storage $ = _s();
        if (paused()) return TransferRestrictions.PAUSED;
        if (from != address(0)) {
            uint8 senderFlags = $.flags[from];
            if (senderFlags & WHITELISTED == 0) return TransferRestrictions.SENDER_NOT_WHITELISTED;
            if (senderFlags & ADDRESS_FROZEN != 0) return TransferRestrictions.SENDER_FROZEN;
        }
        if (to != address(0) || from == address(0)) {
            uint8 receiverFlags = $.flags[to];
            if (receiverFlags & WHITELISTED == 0) return TransferRestrictions.RECEIVER_NOT_WHITELISTED;
            if (receiverFlags & ADDRESS_FROZEN != 0) return TransferRestrictions.RECEIVER_FROZEN;
        }
        if (from == address(0)) {
            return value > _issuanceRoom() ? TransferRestrictions.SUPPLY_CAP_EXCEEDED : TransferRestrictions.SUCCESS;
        }
        uint256 balance = balanceOf(from);
        if (value > balance) return TransferRestrictions.INSUFFICIENT_BALANCE;
        if (value > _unfrozen(balance, $.frozenTokens[from])) {
            return TransferRestrictions.INSUFFICIENT_UNFROZEN_BALANCE;
        }
        return TransferRestrictions.SUCCESS;
    }

    /// @inheritdoc IERC1404
    function messageForTransferRestriction(uint8 code) external pure returns (string memory) {
        return TransferRestrictions.message(code);
    }

    /// @dev What may still be minted: up to the cap net of reserved supply, or up to uint248 without a cap.
    function _issuanceRoom() private view returns (uint256) {
        SecurityTokenStorage storage $ = _s();
        uint256 cap = $.supplyCap;
        uint256 supply = totalSupply();
        uint256 committed = supply + $.reservedSupply;
        if (cap == 0) return type(uint248).max - supply;
        return cap > committed ? cap - committed : 0;
    }

    function _unfrozen(uint256 balance, uint256 frozen) private pure returns (uint256) {
        return balance > frozen ? balance - frozen : 0;
    }

    /// @notice ERC-165: ERC-7943 (Final and Last Call draft), ERC-1404, ERC-20 and AccessControl.
    function supportsInterface(
        bytes4 interfaceId
    ) public view override(AccessControlDefaultAdminRulesUpgradeable, IERC165) returns (bool) {
        return
            interfaceId == type(IERC7943Fungible).interfaceId ||
            interfaceId == ERC7943_LAST_CALL_INTERFACE_ID ||
            interfaceId == type(IERC1404).interfaceId ||
            interfaceId == type(IERC20).interfaceId ||
            super.supportsInterface(interfaceId);
    }

    // ───────────────────────────── supply ─────────────────────────────

    /// @inheritdoc ISecurityToken
    function mint(address to, uint256 amount) external onlyRole(MINTER_ROLE) {
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
        SecurityTokenStorage storage $ = _s();
        uint256 reserved = $.reservedSupply + amount;
        _checkCap(totalSupply() + reserved);
        $.reservedSupply = reserved;
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
        SecurityTokenStorage storage $ = _s();
        reserved = $.reservedSupply;
        if (amount > reserved) revert ReservationExceeded(reserved, amount);
        unchecked {
            reserved -= amount;
        }
        $.reservedSupply = reserved;
    }

    function _mintCapped(address to, uint256 amount) private {
        _checkCap(totalSupply() + _s().reservedSupply + amount);
        _mint(to, amount);
    }

    function _checkCap(uint256 requestedSupply) private view {
        uint256 cap = _s().supplyCap;
        if (cap != 0 && requestedSupply > cap) revert SupplyCapExceeded(cap, requestedSupply);
    }

    /// @dev Every holder move (transfer, transferFrom, burn) and every issuance passes here, checked in this order:
    ///      pause; for a move the sender's eligibility, the receiver's, the balance and the unfrozen balance; for an
    ///      issuance the receiver's eligibility. Then OpenZeppelin's `_update` writes the balances and the supply.
    function _update(address from, address to, uint256 value) internal override {
        _requireNotPaused();
        mapping(address => uint8) storage flags = _s().flags;
        if (from == address(0)) {
            if (flags[to] & ELIGIBILITY != WHITELISTED) revert ERC7943CannotReceive(to);
            // Keeps the supply, and so every balance and the dividend arithmetic, within uint248.
            if (totalSupply() + value > type(uint248).max) revert SafeCast.SafeCastOverflowedUintDowncast(248, totalSupply() + value);
        } else {
            uint8 fromFlags = flags[from];
            // Eligibility first, so a refused transfer names the refused account whatever the balance.
            if (fromFlags & ELIGIBILITY != WHITELISTED) revert ERC7943CannotSend(from);
            if (to != address(0) && flags[to] & ELIGIBILITY != WHITELISTED) revert ERC7943CannotReceive(to);
            if (fromFlags & HAS_FROZEN_TOKENS != 0) {
                uint256 fromBalance = balanceOf(from);
                if (fromBalance < value) revert ERC20InsufficientBalance(from, fromBalance, value);
                uint256 unfrozen = _unfrozen(fromBalance, _s().frozenTokens[from]);
                if (value > unfrozen) revert ERC7943InsufficientUnfrozenBalance(from, value, unfrozen);
            }
        }
        _moveUnchecked(from, to, value);
    }

    /// @dev The one place balances change: dividend corrections keep past dividends with the account that held the
    ///      tokens (skipped until the first distribution), then OpenZeppelin's `_update`.
    function _moveUnchecked(address from, address to, uint256 value) private {
        SecurityTokenStorage storage $ = _s();
        uint256 pps = $.magnifiedDividendPerShare;
        if (pps != 0) {
            int256 correction = (pps * value).toInt256();
            if (from != address(0)) $.corrections[from] += correction;
            if (to != address(0)) $.corrections[to] -= correction;
        }
        super._update(from, to, value);
    }

    // ───────────────────────────── dividends ─────────────────────────────

    /// @inheritdoc ISecurityToken
    /// @dev Pulls first and distributes what arrived (at most `amount`): a fee-on-transfer payment token delivers less
    ///      than it was asked for, and crediting `amount` would promise holders more than the token holds.
    function distributeDividends(uint256 amount) external nonReentrant onlyRole(DEFAULT_ADMIN_ROLE) {
        if (amount == 0) revert ZeroAmount();
        uint256 supply = totalSupply();
        if (supply == 0) revert NoSupply();

        SecurityTokenStorage storage $ = _s();
        IERC20 paymentToken_ = IERC20($.paymentToken);
        uint256 before = paymentToken_.balanceOf(address(this));
        paymentToken_.safeTransferFrom(msg.sender, address(this), amount);
        uint256 received = paymentToken_.balanceOf(address(this)) - before;
        if (received > amount) received = amount;
        if (received == 0) revert ZeroAmount();

        uint256 magnified = received * MAGNITUDE + $.carriedRemainder;
        uint256 pps = $.magnifiedDividendPerShare + magnified / supply;
        $.magnifiedDividendPerShare = uint256(pps.toUint248());
        $.carriedRemainder = magnified % supply;
        $.totalDividendsDistributed += received;
        emit DividendsDistributed(msg.sender, received, pps);
    }

    /// @inheritdoc ISecurityToken
    /// @dev A holder removed from the whitelist (and not frozen) may still claim what it earned while it held the
    ///      tokens: paying a dividend moves no token, and an issuer that must stop a payment freezes the address.
    function claimDividends() external nonReentrant whenNotPaused returns (uint256 amount) {
        SecurityTokenStorage storage $ = _s();
        if ($.flags[msg.sender] & ADDRESS_FROZEN != 0) revert DividendsHeld(msg.sender);
        amount = withdrawableDividendOf(msg.sender);
        if (amount == 0) revert NothingToClaim(msg.sender);
        $.withdrawn[msg.sender] += amount;
        emit DividendClaimed(msg.sender, amount);

        IERC20($.paymentToken).safeTransfer(msg.sender, amount);
    }

    /// @inheritdoc ISecurityToken
    function withdrawableDividendOf(address holder) public view returns (uint256) {
        return accumulativeDividendOf(holder) - _s().withdrawn[holder];
    }

    /// @inheritdoc ISecurityToken
    function withdrawnDividendOf(address holder) external view returns (uint256) {
        return _s().withdrawn[holder];
    }

    /// @inheritdoc ISecurityToken
    function accumulativeDividendOf(address holder) public view returns (uint256) {
        return _magnifiedEntitlement(holder).toUint256() / MAGNITUDE;
    }

    /// @inheritdoc ISecurityToken
    function totalDividendsDistributed() external view returns (uint256) {
        return _s().totalDividendsDistributed;
    }

    function _magnifiedEntitlement(address holder) private view returns (int256) {
        SecurityTokenStorage storage $ = _s();
        return ($.magnifiedDividendPerShare * balanceOf(holder)).toInt256() + $.corrections[holder];
    }

    // ───────────────────────────── roles ─────────────────────────────

    /// @notice Whether `account` holds `role`. The tokenizer (default admin) holds every other role without a grant.
    function hasRole(
        bytes32 role,
        address account
    ) public view override(AccessControlUpgradeable, IAccessControl) returns (bool) {
        return super.hasRole(role, account) || (role != DEFAULT_ADMIN_ROLE && account == defaultAdmin());
    }

    /// @notice Grants `role` to `account`. Reverts when it already holds it, and for the tokenizer, which holds every
    ///         role; DEFAULT_ADMIN_ROLE moves only by the two-step handover.
    function grantRole(
        bytes32 role,
        address account
    ) public override(AccessControlDefaultAdminRulesUpgradeable) {
        if (role != DEFAULT_ADMIN_ROLE) {
            if (account == defaultAdmin()) revert TokenizerHoldsEveryRole(account);
            if (hasRole(role, account)) revert RoleAlreadyHeld(role, account);
        }
        super.grantRole(role, account);
    }

    /// @notice Revokes `role` from `account`. Reverts when it does not hold it, and for the tokenizer, which cannot lose
    ///         its roles but by handing over.
    function revokeRole(
        bytes32 role,
        address account
    ) public override(AccessControlDefaultAdminRulesUpgradeable) {
        if (role != DEFAULT_ADMIN_ROLE) {
            if (account == defaultAdmin()) revert TokenizerHoldsEveryRole(account);
            if (!hasRole(role, account)) revert RoleNotHeld(role, account);
        }
        super.revokeRole(role, account);
    }

    /// @notice Gives up `role`. Reverts when the caller does not hold it (DEFAULT_ADMIN_ROLE included), and for the
    ///         tokenizer's implicit roles.
    function renounceRole(
        bytes32 role,
        address account
    ) public override(AccessControlDefaultAdminRulesUpgradeable) {
        if (role != DEFAULT_ADMIN_ROLE && account == defaultAdmin()) revert TokenizerHoldsEveryRole(account);
        if (!hasRole(role, account)) revert RoleNotHeld(role, account);
        super.renounceRole(role, account);
    }

    /// @dev The new tokenizer holds every role implicitly. Roles it was granted as an agent before are revoked here:
    ///      while it is the tokenizer it could not revoke or renounce them (TokenizerHoldsEveryRole), and after a later
    ///      handover the old key would still hold them.
    function _acceptDefaultAdminTransfer() internal override {
        super._acceptDefaultAdminTransfer();
        address admin = defaultAdmin();
        bytes32[6] memory roles = [MINTER_ROLE, WHITELISTER_ROLE, FREEZER_ROLE, ENFORCER_ROLE, RECOVERY_ROLE, PAUSER_ROLE];
        for (uint256 i; i < roles.length; ++i) {
            if (AccessControlUpgradeable.hasRole(roles[i], admin)) _revokeRole(roles[i], admin);
        }
    }

    /// @inheritdoc DelayedUpgrades
    function upgradeKind() public pure override returns (bytes32) {
        return keccak256("tak.SecurityToken");
    }

    /// @dev Upgrades are the tokenizer's.
    function _checkUpgrader() internal view override {
        _checkRole(DEFAULT_ADMIN_ROLE);
    }

    // ───────────────────────────── pause ─────────────────────────────

    /// @inheritdoc ISecurityToken
    function pause() external onlyRole(PAUSER_ROLE) {
        _pause();
    }

    /// @inheritdoc ISecurityToken
    function unpause() external onlyRole(PAUSER_ROLE) {
        _unpause();
    }

    /// @inheritdoc ISecurityToken
    function paused() public view override(PausableUpgradeable, ISecurityToken) returns (bool) {
        return super.paused();
    }

    // ───────────────────────────── freezes ─────────────────────────────

    /// @inheritdoc ISecurityToken
    /// @dev Emits on every call, also when the status does not change.
    function setAddressFrozen(address account, bool frozen) external onlyRole(FREEZER_ROLE) {
        if (account == address(0)) revert ZeroAddress();
        _setAddressFrozen(account, frozen);
    }

    function _setAddressFrozen(address account, bool frozen) private {
        mapping(address => uint8) storage flags = _s().flags;
        flags[account] = frozen ? flags[account] | ADDRESS_FROZEN : flags[account] & ~ADDRESS_FROZEN;
        emit AddressFrozen(account, frozen, msg.sender);
    }

    /// @inheritdoc IERC7943Fungible
    /// @dev FREEZER_ROLE. Any amount, also above the balance (it then withholds what the account receives later).
    function setFrozenTokens(address account, uint256 amount) external onlyRole(FREEZER_ROLE) returns (bool) {
        _setFrozenTokens(account, amount);
        return true;
    }

    /// @inheritdoc ISecurityToken
    /// @dev Relative, so two agents freezing at once do not overwrite each other (ERC-7943's delta extension).
    function freezePartialTokens(address account, uint256 amount) external onlyRole(FREEZER_ROLE) {
        if (amount == 0) revert ZeroAmount();
        _setFrozenTokens(account, _s().frozenTokens[account] + amount);
    }

    /// @inheritdoc ISecurityToken
    function unfreezePartialTokens(address account, uint256 amount) external onlyRole(FREEZER_ROLE) {
        if (amount == 0) revert ZeroAmount();
        uint256 frozen = _s().frozenTokens[account];
        if (amount > frozen) revert InsufficientFrozenTokens(account, frozen, amount);
        unchecked {
            _setFrozenTokens(account, frozen - amount);
        }
    }

    function _setFrozenTokens(address account, uint256 amount) private {
        if (account == address(0)) revert ZeroAddress();
        SecurityTokenStorage storage $ = _s();
        $.frozenTokens[account] = amount;
        $.flags[account] = amount != 0 ? $.flags[account] | HAS_FROZEN_TOKENS : $.flags[account] & ~HAS_FROZEN_TOKENS;
        emit Frozen(account, amount);
    }

    // ───────────────────────────── forced transfer ─────────────────────────────

    /// @inheritdoc IERC7943Fungible
    /// @dev ENFORCER_ROLE. Ignores the pause, the sender's eligibility and its frozen amount (lowered by what is taken
    ///      beyond the unfrozen part, `Frozen` emitted before `Transfer`); the receiver must be allowed to receive.
    ///      Supply, reservations and every holder's dividend entitlement are unchanged, as in a transfer.
    function forcedTransfer(address from, address to, uint256 amount) external onlyRole(ENFORCER_ROLE) returns (bool) {
        if (from == address(0)) revert ERC20InvalidSender(address(0));
        if (to == address(0)) revert ERC20InvalidReceiver(address(0));
        if (amount == 0) revert ZeroAmount();
        if (from == to) revert ERC7943CannotTransfer(from, to, amount);
        if (!canReceive(to)) revert ERC7943CannotReceive(to);
        _forcedMove(from, to, amount);
        return true;
    }

    /// @dev Lowers the sender's frozen amount by what is taken beyond its unfrozen part, then moves past the checks.
    function _forcedMove(address from, address to, uint256 value) private {
        uint256 fromBalance = balanceOf(from);
        if (fromBalance < value) revert ERC20InsufficientBalance(from, fromBalance, value);
        uint256 frozen = _s().frozenTokens[from];
        uint256 unfrozen = _unfrozen(fromBalance, frozen);
        // value - unfrozen <= frozen: value is within the balance.
        if (value > unfrozen) _setFrozenTokens(from, frozen - (value - unfrozen));
        _moveUnchecked(from, to, value);
        emit ForcedTransfer(from, to, value);
    }

    // ───────────────────────────── recovery ─────────────────────────────

    /// @inheritdoc ISecurityToken
    function recoveryDelay() external view returns (uint48) {
        return _s().recoveryDelay;
    }

    /// @inheritdoc ISecurityToken
    function setRecoveryDelay(uint48 delay) external onlyRole(DEFAULT_ADMIN_ROLE) {
        if (delay < MIN_RECOVERY_DELAY || delay > MAX_RECOVERY_DELAY) revert InvalidRecoveryDelay(delay);
        _s().recoveryDelay = delay;
        emit RecoveryDelaySet(delay);
    }

    /// @inheritdoc ISecurityToken
    function pendingRecovery(address lostWallet) external view returns (PendingRecovery memory) {
        return _s().recoveries[lostWallet];
    }

    /// @inheritdoc ISecurityToken
    function requestRecovery(address lostWallet, address newWallet) external onlyRole(RECOVERY_ROLE) {
        SecurityTokenStorage storage $ = _s();
        _checkRecoverable(lostWallet, newWallet);
        PendingRecovery storage pending = $.recoveries[lostWallet];
        if (pending.newWallet != address(0)) revert RecoveryPending(lostWallet, pending.newWallet);
        uint48 executableAt = uint48(block.timestamp) + $.recoveryDelay;
        $.recoveries[lostWallet] = PendingRecovery(newWallet, executableAt);
        emit RecoveryRequested(lostWallet, newWallet, executableAt, msg.sender);
    }

    /// @inheritdoc ISecurityToken
    function cancelRecovery(address lostWallet) external {
        if (msg.sender != lostWallet && !hasRole(RECOVERY_ROLE, msg.sender)) revert NotAllowedToCancel(msg.sender);
        SecurityTokenStorage storage $ = _s();
        address newWallet = $.recoveries[lostWallet].newWallet;
        if (newWallet == address(0)) revert NoRecoveryPending(lostWallet);
        delete $.recoveries[lostWallet];
        emit RecoveryCancelled(lostWallet, newWallet, msg.sender);
    }

    /// @inheritdoc ISecurityToken
    /// @dev Checked again at execution: the same investor, something to recover, the new wallet allowed to receive.
    ///      The heir's magnified entitlement grows by exactly the lost wallet's, and its withdrawn total by the lost
    ///      wallet's, so no dividend is created or lost. Works while paused. `Frozen` events precede `Transfer`.
    function executeRecovery(address lostWallet) external nonReentrant {
        SecurityTokenStorage storage $ = _s();
        PendingRecovery memory pending = $.recoveries[lostWallet];
        address newWallet = pending.newWallet;
        if (newWallet == address(0)) revert NoRecoveryPending(lostWallet);
        if (msg.sender != newWallet) _checkRole(RECOVERY_ROLE);
        if (block.timestamp < pending.executableAt) revert RecoveryNotReady(lostWallet, pending.executableAt);
        _checkRecoverable(lostWallet, newWallet);
        delete $.recoveries[lostWallet];

        uint256 balance = balanceOf(lostWallet);
        uint256 frozen = $.frozenTokens[lostWallet];
        bool addressFrozen = $.flags[lostWallet] & ADDRESS_FROZEN != 0;
        // The move lowers the lost wallet's frozen amount by what it takes; whatever it left is cleared here, and the
        // whole amount frozen before is frozen on the heir below.
        if (balance != 0) _forcedMove(lostWallet, newWallet, balance);
        if ($.frozenTokens[lostWallet] != 0) _setFrozenTokens(lostWallet, 0);
        if (addressFrozen) {
            // The heir holds no tokens (_checkRecoverable): the freeze moves whole, dividends held with it.
            _setAddressFrozen(lostWallet, false);
            _setAddressFrozen(newWallet, true);
        }
        if (frozen != 0) _setFrozenTokens(newWallet, $.frozenTokens[newWallet] + frozen);

        int256 entitlement = $.corrections[lostWallet]; // the balance is 0 now: this is all of it, magnified
        if (entitlement != 0) {
            $.corrections[newWallet] += entitlement;
            delete $.corrections[lostWallet];
        }
        uint256 withdrawn = $.withdrawn[lostWallet];
        if (withdrawn != 0) {
            $.withdrawn[newWallet] += withdrawn;
            delete $.withdrawn[lostWallet];
        }
        _setWhitelisted(lostWallet, false);
        emit RecoverySuccess(lostWallet, newWallet, msg.sender);
    }

    function _checkRecoverable(address lostWallet, address newWallet) private view {
        if (lostWallet == newWallet || lostWallet == address(0) || newWallet == address(0)) {
            revert InvalidRecovery(lostWallet, newWallet);
        }
        SecurityTokenStorage storage $ = _s();
        bytes32 investor = $.investorOf[lostWallet];
        if (investor == bytes32(0) || $.investorOf[newWallet] != investor) revert NotSameInvestor(lostWallet, newWallet);
        if (!canReceive(newWallet)) revert ERC7943CannotReceive(newWallet);
        // An address freeze moves whole or not at all: never onto tokens it did not cover, never off held dividends.
        if ($.flags[lostWallet] & ADDRESS_FROZEN != 0 && balanceOf(newWallet) != 0) {
            revert FrozenWalletIntoHolder(lostWallet, newWallet);
        }
        if (balanceOf(lostWallet) == 0 && $.frozenTokens[lostWallet] == 0 && withdrawableDividendOf(lostWallet) == 0) {
            revert NothingToRecover(lostWallet);
        }
    }

    function _s() private pure returns (SecurityTokenStorage storage $) {
        assembly ("memory-safe") {
            $.slot := STORAGE_LOCATION
        }
    }
}
