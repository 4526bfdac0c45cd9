// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {AccessControlEnumerable} from "@openzeppelin/contracts/access/extensions/AccessControlEnumerable.sol";
import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";
import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {IERC165} from "@openzeppelin/contracts/utils/introspection/IERC165.sol";
import {IERC7943Fungible} from "../tokenization/interfaces/IERC7943Fungible.sol";

/// @title RegulatedTokenMock
/// @notice TEST ONLY. A minimal ERC-7943 fungible regulated asset for the RAMS tests: send and receive whitelists,
///         frozen amounts, forced transfers, role-gated mint and burn. It knows nothing about RAMS.
/// @dev Every role is given to `admin` at deployment. Not for production use.
contract RegulatedTokenMock is ERC20, AccessControlEnumerable, IERC7943Fungible {
    /// @notice May mint.
    bytes32 public constant MINTER_ROLE = keccak256("MINTER_ROLE");
    /// @notice May burn its own tokens.
    bytes32 public constant BURNER_ROLE = keccak256("BURNER_ROLE");
    /// @notice May set frozen amounts.
    bytes32 public constant FREEZING_ROLE = keccak256("FREEZING_ROLE");
    /// @notice May change the whitelists.
    bytes32 public constant WHITELIST_ROLE = keccak256("WHITELIST_ROLE");
    /// @notice May force transfers.
    bytes32 public constant FORCE_TRANSFER_ROLE = keccak256("FORCE_TRANSFER_ROLE");

    mapping(address => bool) private _maySend;
    mapping(address => bool) private _mayReceive;
    mapping(address => uint256) private _frozenAmount;

    /// @notice The send whitelist entry of `account` changed.
    /// @param account The account.
    /// @param status The new entry.
    event SendWhitelisted(address indexed account, bool status);
    /// @notice The receive whitelist entry of `account` changed.
    /// @param account The account.
    /// @param status The new entry.
    event ReceiveWhitelisted(address indexed account, bool status);

    /// @param name_ Token name.
    /// @param symbol_ Token symbol.
    /// @param admin Receives the admin role and every operational role.
    constructor(string memory name_, string memory symbol_, address admin) ERC20(name_, symbol_) {
        _grantRole(DEFAULT_ADMIN_ROLE, admin);
        _grantRole(MINTER_ROLE, admin);
        _grantRole(BURNER_ROLE, admin);
        _grantRole(FREEZING_ROLE, admin);
        _grantRole(WHITELIST_ROLE, admin);
        _grantRole(FORCE_TRANSFER_ROLE, admin);
    }

    /// @notice Sets whether `account` may send. WHITELIST_ROLE only.
    /// @param account The account.
    /// @param status True to allow.
    function changeSendWhitelist(address account, bool status) external onlyRole(WHITELIST_ROLE) {
        _maySend[account] = status;
        emit SendWhitelisted(account, status);
    }

    /// @notice Sets whether `account` may receive. WHITELIST_ROLE only.
    /// @param account The account.
    /// @param status True to allow.
    function changeReceiveWhitelist(address account, bool status) external onlyRole(WHITELIST_ROLE) {
        _mayReceive[account] = status;
        emit ReceiveWhitelisted(account, status);
    }

    /// @notice Mints `amount` to `to`, which must be allowed to receive. MINTER_ROLE only.
    /// @param to Receiver.
    /// @param amount Amount.
    function mint(address to, uint256 amount) external onlyRole(MINTER_ROLE) {
        _mint(to, amount);
    }

    /// @notice Burns `amount` of the caller's tokens; the caller must be allowed to send. BURNER_ROLE only.
    /// @param amount Amount.
    function burn(uint256 amount) external onlyRole(BURNER_ROLE) {
        _burn(msg.sender, amount);
    }

    /// @inheritdoc IERC7943Fungible
    /// @dev FREEZING_ROLE only.
    function setFrozenTokens(address account, uint256 amount) external onlyRole(FREEZING_ROLE) returns (bool result) {
        _frozenAmount[account] = amount;
        emit Frozen(account, amount);
        return true;
    }

    /// @inheritdoc IERC7943Fungible
    /// @dev FORCE_TRANSFER_ROLE only. Ignores the sender whitelist and frozen amounts (lowering the frozen amount when
    ///      frozen tokens are taken); the receiver must still be allowed to receive.
    function forcedTransfer(
        address from,
        address to,
        uint256 amount
    ) external onlyRole(FORCE_TRANSFER_ROLE) returns (bool result) {
        if (from == address(0)) revert ERC20InvalidSender(address(0));
        if (to == address(0)) revert ERC20InvalidReceiver(address(0));
        if (!_mayReceive[to]) revert ERC7943CannotReceive(to);
        _releaseFrozenIfNeeded(from, amount);
        ERC20._update(from, to, amount);
        emit ForcedTransfer(from, to, amount);
        return true;
    }

    /// @notice Test helper with a dynamic argument before the amount: swap(a, t, amount). Does nothing.
    /// @param a Unused.
    /// @param t Unused.
    /// @param amount Unused; sits at argument index 2.
    function swap(uint256 a, uint256[] calldata t, uint256 amount) external {}

    /// @inheritdoc IERC7943Fungible
    function canSend(address account) public view returns (bool allowed) {
        return _maySend[account];
    }

    /// @inheritdoc IERC7943Fungible
    function canReceive(address account) public view returns (bool allowed) {
        return _mayReceive[account];
    }

    /// @inheritdoc IERC7943Fungible
    function getFrozenTokens(address account) public view returns (uint256 amount) {
        return _frozenAmount[account];
    }

    /// @inheritdoc IERC7943Fungible
    function canTransfer(address from, address to, uint256 amount) external view returns (bool allowed) {
        return amount <= _unfrozen(from) && _maySend[from] && _mayReceive[to];
    }

    /// @notice ERC-165: IERC7943Fungible, IERC20, and the AccessControlEnumerable interfaces.
    /// @param interfaceId The interface id to test.
    /// @return True when supported.
    function supportsInterface(
        bytes4 interfaceId
    ) public view override(AccessControlEnumerable, IERC165) returns (bool) {
        return
            interfaceId == type(IERC7943Fungible).interfaceId ||
            interfaceId == type(IERC20).interfaceId ||
            super.supportsInterface(interfaceId);
    }

    /// @dev Transfers check, in order: balance, unfrozen balance, sender whitelist, receiver whitelist. Mints check
    ///      the receiver; burns check the sender and release frozen tokens that are burnt.
    function _update(address from, address to, uint256 amount) internal override {
        if (from != address(0) && to != address(0)) {
            uint256 balance = balanceOf(from);
            if (balance < amount) revert ERC20InsufficientBalance(from, balance, amount);
            uint256 unfrozen = _unfrozen(from);
            if (amount > unfrozen) revert ERC7943InsufficientUnfrozenBalance(from, amount, unfrozen);
            if (!_maySend[from]) revert ERC7943CannotSend(from);
            if (!_mayReceive[to]) revert ERC7943CannotReceive(to);
        } else if (from == address(0)) {
            if (!_mayReceive[to]) revert ERC7943CannotReceive(to);
        } else {
            if (!_maySend[from]) revert ERC7943CannotSend(from);
            _releaseFrozenIfNeeded(from, amount);
        }
        super._update(from, to, amount);
    }

    function _unfrozen(address account) private view returns (uint256) {
        uint256 balance = balanceOf(account);
        uint256 frozen = _frozenAmount[account];
        return balance > frozen ? balance - frozen : 0;
    }

    /// @dev When an authority takes more than the unfrozen part, the frozen amount shrinks by the difference.
    function _releaseFrozenIfNeeded(address account, uint256 amount) private {
        uint256 unfrozen = _unfrozen(account);
        if (amount > unfrozen && amount <= balanceOf(account)) {
            uint256 frozen = _frozenAmount[account] - (amount - unfrozen);
            _frozenAmount[account] = frozen;
            emit Frozen(account, frozen);
        }
    }
}
