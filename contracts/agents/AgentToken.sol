// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";
import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";

/// @title AgentToken
/// @notice Plain ERC-20 owned by an AI agent's wallet: the owner mints, any holder burns its own balance.
///         Used through EIP-1167 clones made by the AgentTokenFactory.
/// @dev Name, symbol and decimals live in this contract's storage (set by `initialize`), not in OpenZeppelin's
///      private `_name` / `_symbol`, which stay empty. The implementation is locked by its constructor and owned by
///      `address(1)`; a clone starts with empty storage (no owner) until `initialize` is called.
contract AgentToken is ERC20, Ownable {
    /// @notice `initialize` was already called (or this is the implementation, which is locked).
    error AlreadyInitialized();
    /// @notice The owner given to `initialize` is the zero address.
    error ZeroAddress();
    /// @notice More than 18 decimals were requested.
    error InvalidDecimals(uint8 decimals);

    // Packed into the slot of Ownable's `_owner`.
    uint8 private _decimals;
    bool private _initialized;

    string private _tokenName;
    string private _tokenSymbol;

    /// @notice Locks the implementation: only clones can be initialized.
    constructor() ERC20("", "") Ownable(address(1)) {
        _initialized = true;
    }

    /// @notice Sets up a fresh clone; callable once. Emits OwnershipTransferred and then always the ERC-20 creation
    ///         event `Transfer(address(0), owner_, premint)`, also with value 0 when nothing is preminted: a client
    ///         finds the token's address as the emitter of the first zero-address Transfer log of the creation
    ///         receipt.
    /// @param name_ Token name.
    /// @param symbol_ Token symbol.
    /// @param decimals_ Token decimals, at most 18.
    /// @param owner_ The agent's wallet: owner of the token and receiver of the premint.
    /// @param premint Amount minted to `owner_`, in base units; 0 mints nothing but still emits a zero-value Transfer.
    function initialize(
        string calldata name_,
        string calldata symbol_,
        uint8 decimals_,
        address owner_,
        uint256 premint
    ) external {
        if (_initialized) revert AlreadyInitialized();
        if (owner_ == address(0)) revert ZeroAddress();
        if (decimals_ > 18) revert InvalidDecimals(decimals_);

        _initialized = true;
        _decimals = decimals_;
        _tokenName = name_;
        _tokenSymbol = symbol_;
        _transferOwnership(owner_);
        // OpenZeppelin's _mint emits Transfer for any amount, 0 included.
        _mint(owner_, premint);
    }

    /// @notice Mints `amount` to `to`. Owner only.
    /// @param to Receiver of the new tokens.
    /// @param amount Amount in base units.
    function mint(address to, uint256 amount) external onlyOwner {
        _mint(to, amount);
    }

    /// @notice Burns `amount` of the caller's own balance.
    /// @param amount Amount in base units.
    function burn(uint256 amount) external {
        _burn(msg.sender, amount);
    }

    /// @inheritdoc ERC20
    function name() public view override returns (string memory) {
        return _tokenName;
    }

    /// @inheritdoc ERC20
    function symbol() public view override returns (string memory) {
        return _tokenSymbol;
    }

    /// @inheritdoc ERC20
    function decimals() public view override returns (uint8) {
        return _decimals;
    }
}
