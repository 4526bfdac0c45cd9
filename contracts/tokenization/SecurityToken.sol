// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";
import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {IERC20Metadata} from "@openzeppelin/contracts/token/ERC20/extensions/IERC20Metadata.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {SafeCast} from "@openzeppelin/contracts/utils/math/SafeCast.sol";
import {ReentrancyGuardTransient} from "@openzeppelin/contracts/utils/ReentrancyGuardTransient.sol";
import {AccessControl} from "@openzeppelin/contracts/access/AccessControl.sol";
import {IERC165} from "@openzeppelin/contracts/utils/introspection/IERC165.sol";
import {ISecurityToken} from "./interfaces/ISecurityToken.sol";
import {IERC1404} from "./interfaces/IERC1404.sol";
import {IERC7943Fungible} from "./interfaces/IERC7943Fungible.sol";
import {TransferRestrictions} from "./TransferRestrictions.sol";

/// @title SecurityToken
/// @notice Permissioned ERC-20 for one tokenized asset, used through EIP-1167 clones made by the TokenFactory.
///         Whitelist enforced on both sides of every transfer, optional supply cap with supply reserved for the
///         escrow, payment-token dividends (magnified dividend per share, ERC-1726), and issuer controls: ERC-7943
///         frozen amounts and forced transfers, whole-address freezes, pause, wallet recovery (as ERC-3643 has them),
///         ERC-1404 restriction codes, and agent roles granted by the tokenizer.
/// @dev Balances do not live in OpenZeppelin's private `_balances`: `_update` is overridden to keep each balance in
///      the same storage slot as its whitelist and freeze flags, and the pause flag shares a slot with the dividend
///      per share, so a transfer reads no more slots than before these controls existed (OpenZeppelin's Pausable
///      would add a cold read to every transfer). OpenZeppelin's `_balances`, `_totalSupply`, `_name` and `_symbol`
///      stay unused. The tokenizer holds every role implicitly ({hasRole}): it can never be locked out, and
///      creating a token writes no role.
contract SecurityToken is ERC20, AccessControl, ReentrancyGuardTransient, ISecurityToken {
    using SafeERC20 for IERC20;
    using SafeCast for uint256;
    using SafeCast for int256;

    /// @notice Scale of the dividend per share, so that small distributions over a large supply do not round to 0.
    uint256 public constant MAGNITUDE = 2 ** 128;

    /// @notice `initialize` was already called (or this is the implementation, which is locked).
    error AlreadyInitialized();

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
    /// @dev Set while the frozen amount is not 0, so transfers read `_frozenTokens` only for accounts that have one.
    uint8 private constant HAS_FROZEN_TOKENS = 4;
    /// @dev An account may send and receive when, of these two flags, only WHITELISTED is set.
    uint8 private constant ELIGIBILITY = WHITELISTED | ADDRESS_FROZEN;

    /// @dev Balance and flags share one slot. Balances are bounded by the total supply, itself kept within uint248
    ///      by `_update`.
    struct Holder {
        uint248 balance;
        uint8 flags;
    }

    /// @dev Everything a transfer reads besides the two holders, in one slot. The dividend per share is kept within
    ///      uint248 by `distributeDividends`.
    struct TransferState {
        uint248 magnifiedDividendPerShare;
        bool paused;
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

    TransferState private _state;
    /// @dev Part of `amount * MAGNITUDE` that did not divide evenly by the supply; added to the next distribution.
    uint256 private _carriedRemainder;
    uint256 private _totalDividendsDistributed;
    mapping(address account => int256) private _corrections;
    mapping(address account => uint256) private _withdrawn;

    mapping(address account => uint256) private _frozenTokens;

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
        return _holders[account].flags & WHITELISTED != 0;
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
        Holder storage holder = _holders[account];
        holder.flags = status ? holder.flags | WHITELISTED : holder.flags & ~WHITELISTED;
        emit WhitelistUpdated(account, status);
    }

    // ───────────────────────────── ERC-7943 and ERC-1404 views ─────────────────────────────

    /// @inheritdoc IERC7943Fungible
    /// @dev Whitelisted and not frozen as a whole address.
    function canSend(address account) public view returns (bool) {
        return _holders[account].flags & ELIGIBILITY == WHITELISTED;
    }

    /// @inheritdoc IERC7943Fungible
    /// @dev The same rule as {canSend}: the whitelist and the address freeze apply to both directions.
    function canReceive(address account) public view returns (bool) {
        return _holders[account].flags & ELIGIBILITY == WHITELISTED;
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
        return _frozenTokens[account];
    }

    /// @inheritdoc ISecurityToken
    function isFrozen(address account) external view returns (bool) {
        return _holders[account].flags & ADDRESS_FROZEN != 0;
    }

    /// @inheritdoc IERC1404
    /// @dev Checks in the order the token enforces them, so the code names the error a transfer would revert with:
    ///      `from` 0 is an issuance (receiver and cap), `to` 0 a burn (sender, balance, frozen tokens). Codes are in
    ///      {TransferRestrictions}. Never reverts.
    function detectTransferRestriction(address from, address to, uint256 value) public view returns (uint8) {
        if (from != address(0)) {
            if (_state.paused) return TransferRestrictions.PAUSED;
            uint8 senderFlags = _holders[from].flags;
            if (senderFlags & WHITELISTED == 0) return TransferRestrictions.SENDER_NOT_WHITELISTED;
            if (senderFlags & ADDRESS_FROZEN != 0) return TransferRestrictions.SENDER_FROZEN;
        }
        if (to != address(0) || from == address(0)) {
            uint8 receiverFlags = _holders[to].flags;
            if (receiverFlags & WHITELISTED == 0) return TransferRestrictions.RECEIVER_NOT_WHITELISTED;
            if (receiverFlags & ADDRESS_FROZEN != 0) return TransferRestrictions.RECEIVER_FROZEN;
        }
        if (from == address(0)) {
            return value > _issuanceRoom() ? TransferRestrictions.SUPPLY_CAP_EXCEEDED : TransferRestrictions.SUCCESS;
        }
        uint256 balance = _holders[from].balance;
        if (value > balance) return TransferRestrictions.INSUFFICIENT_BALANCE;
        if (value > _unfrozen(balance, _frozenTokens[from])) return TransferRestrictions.INSUFFICIENT_UNFROZEN_BALANCE;
        return TransferRestrictions.SUCCESS;
    }

    /// @inheritdoc IERC1404
    function messageForTransferRestriction(uint8 code) external pure returns (string memory) {
        return TransferRestrictions.message(code);
    }

    /// @dev What the tokenizer may still mint: up to the cap net of reserved supply, or up to uint248 without a cap.
    function _issuanceRoom() private view returns (uint256) {
        uint256 cap = _supplyCap;
        uint256 committed = _supply + _reservedSupply;
        if (cap == 0) return type(uint248).max - _supply;
        return cap > committed ? cap - committed : 0;
    }

    function _unfrozen(uint256 balance, uint256 frozen) private pure returns (uint256) {
        return balance > frozen ? balance - frozen : 0;
    }

    /// @notice ERC-165: ERC-7943 (Final and Last Call draft), ERC-1404, ERC-20 and AccessControl.
    function supportsInterface(bytes4 interfaceId) public view override(AccessControl, IERC165) returns (bool) {
        return
            interfaceId == type(IERC7943Fungible).interfaceId ||
            interfaceId == ERC7943_LAST_CALL_INTERFACE_ID ||
            interfaceId == type(IERC1404).interfaceId ||
            interfaceId == type(IERC20).interfaceId ||
            super.supportsInterface(interfaceId);
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

    /// @dev Replaces OpenZeppelin's balance bookkeeping (see the contract notes). A holder's move (transfer,
    ///      transferFrom, burn) checks, in this order: pause, the sender's eligibility, the receiver's, the balance,
    ///      the unfrozen balance; an issuance checks the receiver. Dividend corrections keep past dividends with the
    ///      account that held the tokens; they are skipped until the first distribution. Forced moves bypass this
    ///      function ({_forcedMove}).
    function _update(address from, address to, uint256 value) internal override {
        TransferState storage state = _state;
        // Both fields in one read, before any branch.
        (uint256 pps, bool paused) = (state.magnifiedDividendPerShare, state.paused);
        if (from == address(0)) {
            if (_holders[to].flags & ELIGIBILITY != WHITELISTED) revert ERC7943CannotReceive(to);
            // Keeps the supply, and so every balance, within uint248.
            _supply = (_supply + value).toUint248();
        } else {
            if (paused) revert EnforcedPause();
            Holder storage sender = _holders[from];
            (uint256 fromBalance, uint8 fromFlags) = (sender.balance, sender.flags);
            // Eligibility first, so a refused transfer names the refused account whatever the balance.
            if (fromFlags & ELIGIBILITY != WHITELISTED) revert ERC7943CannotSend(from);
            if (to != address(0) && _holders[to].flags & ELIGIBILITY != WHITELISTED) revert ERC7943CannotReceive(to);
            if (fromBalance < value) revert ERC20InsufficientBalance(from, fromBalance, value);
            if (fromFlags & HAS_FROZEN_TOKENS != 0) {
                uint256 unfrozen = _unfrozen(fromBalance, _frozenTokens[from]);
                if (value > unfrozen) revert ERC7943InsufficientUnfrozenBalance(from, value, unfrozen);
            }
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
        uint256 pps = uint256(_state.magnifiedDividendPerShare) + magnified / supply;
        _state.magnifiedDividendPerShare = pps.toUint248();
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
        int256 magnified = (uint256(_state.magnifiedDividendPerShare) * _holders[holder].balance).toInt256() +
            _corrections[holder];
        return magnified.toUint256() / MAGNITUDE;
    }

    /// @inheritdoc ISecurityToken
    function totalDividendsDistributed() external view returns (uint256) {
        return _totalDividendsDistributed;
    }

    // ───────────────────────────── roles ─────────────────────────────

    /// @notice Whether `account` holds `role`. The tokenizer holds every role, DEFAULT_ADMIN_ROLE included, without a
    ///         grant: it grants and revokes agents' roles and cannot lose its own.
    function hasRole(bytes32 role, address account) public view override returns (bool) {
        return account == _tokenizer || super.hasRole(role, account);
    }

    // ───────────────────────────── pause ─────────────────────────────

    /// @inheritdoc ISecurityToken
    function pause() external onlyRole(PAUSER_ROLE) {
        if (_state.paused) revert EnforcedPause();
        _state.paused = true;
        emit Paused(msg.sender);
    }

    /// @inheritdoc ISecurityToken
    function unpause() external onlyRole(PAUSER_ROLE) {
        if (!_state.paused) revert ExpectedPause();
        _state.paused = false;
        emit Unpaused(msg.sender);
    }

    /// @inheritdoc ISecurityToken
    function paused() external view returns (bool) {
        return _state.paused;
    }

    // ───────────────────────────── freezes ─────────────────────────────

    /// @inheritdoc ISecurityToken
    /// @dev Emits on every call, also when the status does not change.
    function setAddressFrozen(address account, bool frozen) external onlyRole(FREEZER_ROLE) {
        if (account == address(0)) revert ZeroAddress();
        Holder storage holder = _holders[account];
        holder.flags = frozen ? holder.flags | ADDRESS_FROZEN : holder.flags & ~ADDRESS_FROZEN;
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
        _setFrozenTokens(account, _frozenTokens[account] + amount);
    }

    /// @inheritdoc ISecurityToken
    function unfreezePartialTokens(address account, uint256 amount) external onlyRole(FREEZER_ROLE) {
        if (amount == 0) revert ZeroAmount();
        uint256 frozen = _frozenTokens[account];
        if (amount > frozen) revert InsufficientFrozenTokens(account, frozen, amount);
        unchecked {
            _setFrozenTokens(account, frozen - amount);
        }
    }

    function _setFrozenTokens(address account, uint256 amount) private {
        if (account == address(0)) revert ZeroAddress();
        _frozenTokens[account] = amount;
        Holder storage holder = _holders[account];
        holder.flags = amount != 0 ? holder.flags | HAS_FROZEN_TOKENS : holder.flags & ~HAS_FROZEN_TOKENS;
        emit Frozen(account, amount);
    }

    // ───────────────────────────── forced transfer and recovery ─────────────────────────────

    /// @inheritdoc IERC7943Fungible
    /// @dev ENFORCER_ROLE. Ignores the pause, the sender's eligibility and its frozen amount (lowered by what is taken
    ///      beyond the unfrozen part, `Frozen` emitted before `Transfer`); the receiver must be allowed to receive.
    ///      Supply, reservations and every holder's dividend entitlement are unchanged, as in a transfer.
    function forcedTransfer(address from, address to, uint256 amount) external onlyRole(ENFORCER_ROLE) returns (bool) {
        if (from == address(0)) revert ERC20InvalidSender(address(0));
        if (to == address(0)) revert ERC20InvalidReceiver(address(0));
        if (amount == 0) revert ZeroAmount();
        if (from == to) revert ERC7943CannotTransfer(from, to, amount);
        if (_holders[to].flags & ELIGIBILITY != WHITELISTED) revert ERC7943CannotReceive(to);
        _forcedMove(from, to, amount);
        emit ForcedTransfer(from, to, amount);
        return true;
    }

    function _forcedMove(address from, address to, uint256 value) private {
        Holder storage sender = _holders[from];
        uint256 fromBalance = sender.balance;
        if (fromBalance < value) revert ERC20InsufficientBalance(from, fromBalance, value);
        if (sender.flags & HAS_FROZEN_TOKENS != 0) {
            uint256 frozen = _frozenTokens[from];
            uint256 unfrozen = _unfrozen(fromBalance, frozen);
            // value - unfrozen <= frozen: value is within the balance.
            if (value > unfrozen) _setFrozenTokens(from, frozen - (value - unfrozen));
        }
        unchecked {
            sender.balance = uint248(fromBalance - value);
            _holders[to].balance += uint248(value);
        }
        uint256 pps = _state.magnifiedDividendPerShare;
        if (pps != 0) {
            int256 correction = (pps * value).toInt256();
            _corrections[from] += correction;
            _corrections[to] -= correction;
        }
        emit Transfer(from, to, value);
    }

    /// @inheritdoc ISecurityToken
    /// @dev The heir's entitlement grows by exactly the lost wallet's (whole payment-token units: the lost wallet's
    ///      sub-unit remainder stays in the contract as dust), and its withdrawn total by the lost wallet's, so the
    ///      sum of withdrawable dividends is unchanged. Works while paused. `Frozen` events precede `Transfer`.
    function recoveryAddress(address lostWallet, address newWallet) external onlyRole(RECOVERY_ROLE) returns (bool) {
        if (lostWallet == newWallet || lostWallet == address(0) || newWallet == address(0)) {
            revert InvalidRecovery(lostWallet, newWallet);
        }
        Holder storage heir = _holders[newWallet];
        if (heir.flags & ELIGIBILITY != WHITELISTED) revert ERC7943CannotReceive(newWallet);
        Holder storage lost = _holders[lostWallet];
        (uint256 balance, uint8 lostFlags) = (lost.balance, lost.flags);
        uint256 frozen = _frozenTokens[lostWallet];
        uint256 entitlement = accumulativeDividendOf(lostWallet);
        uint256 withdrawn = _withdrawn[lostWallet];
        if (balance == 0 && frozen == 0 && entitlement == withdrawn) revert NothingToRecover(lostWallet);

        if (frozen != 0) {
            _setFrozenTokens(lostWallet, 0);
            _setFrozenTokens(newWallet, _frozenTokens[newWallet] + frozen);
        }
        _corrections[newWallet] +=
            (entitlement * MAGNITUDE).toInt256() -
            (uint256(_state.magnifiedDividendPerShare) * balance).toInt256();
        delete _corrections[lostWallet];
        if (withdrawn != 0) {
            _withdrawn[newWallet] += withdrawn;
            delete _withdrawn[lostWallet];
        }
        delete _holders[lostWallet];
        unchecked {
            heir.balance += uint248(balance);
        }
        if (balance != 0) emit Transfer(lostWallet, newWallet, balance);

        if (lostFlags & ADDRESS_FROZEN != 0) {
            heir.flags |= ADDRESS_FROZEN;
            emit AddressFrozen(lostWallet, false, msg.sender);
            emit AddressFrozen(newWallet, true, msg.sender);
        }
        emit WhitelistUpdated(lostWallet, false);
        emit RecoverySuccess(lostWallet, newWallet, msg.sender);
        return true;
    }
}
