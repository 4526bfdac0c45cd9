// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {Clones} from "@openzeppelin/contracts/proxy/Clones.sol";
import {AgentToken} from "./AgentToken.sol";

/// @title AgentTokenFactory
/// @notice Creates AgentTokens as EIP-1167 clones of a fixed implementation. The token is owned by the agent's
///         wallet given as an argument, not by the caller, so a relayer can send the transaction for the agent.
///         Open to anyone.
contract AgentTokenFactory {
    /// @notice The implementation address given to the constructor is zero.
    error ZeroAddress();
    /// @notice The token name is empty.
    error EmptyName();
    /// @notice The symbol does not match ^[A-Z0-9]{2,11}$.
    error InvalidSymbol(string symbol);

    /// @notice A token was created and initialized.
    /// @param token The new clone.
    /// @param agentWallet Owner of the token and receiver of the premint.
    /// @param creator The account that called the factory (the agent itself or a relayer).
    event AgentTokenCreated(
        address indexed token,
        address indexed agentWallet,
        address indexed creator,
        string name,
        string symbol,
        uint8 decimals,
        uint256 premint
    );

    uint256 private constant MIN_SYMBOL_LENGTH = 2;
    uint256 private constant MAX_SYMBOL_LENGTH = 11;

    /// @notice The locked AgentToken every token is a clone of.
    address public immutable implementation;

    /// @param implementation_ A deployed (locked) AgentToken.
    constructor(address implementation_) {
        if (implementation_ == address(0)) revert ZeroAddress();
        implementation = implementation_;
    }

    /// @notice Clones the implementation and initializes it with `agentWallet` as owner.
    /// @param name Token name, not empty.
    /// @param symbol Token symbol: 2 to 11 characters, A-Z and 0-9 only.
    /// @param decimals Token decimals, at most 18 (checked by the token).
    /// @param agentWallet Owner of the token and receiver of the premint, not zero (checked by the token).
    /// @param premint Amount minted to `agentWallet`, in base units; 0 mints nothing.
    /// @return token The new token.
    function createAgentToken(
        string calldata name,
        string calldata symbol,
        uint8 decimals,
        address agentWallet,
        uint256 premint
    ) external returns (address token) {
        if (bytes(name).length == 0) revert EmptyName();
        if (!_isValidSymbol(bytes(symbol))) revert InvalidSymbol(symbol);

        token = Clones.clone(implementation);
        AgentToken(token).initialize(name, symbol, decimals, agentWallet, premint);
        emit AgentTokenCreated(token, agentWallet, msg.sender, name, symbol, decimals, premint);
    }

    /// @dev True when `symbol` matches ^[A-Z0-9]{2,11}$.
    function _isValidSymbol(bytes calldata symbol) private pure returns (bool) {
        if (symbol.length < MIN_SYMBOL_LENGTH || symbol.length > MAX_SYMBOL_LENGTH) return false;
        for (uint256 i; i < symbol.length; ++i) {
            bytes1 c = symbol[i];
            if (!((c >= "A" && c <= "Z") || (c >= "0" && c <= "9"))) return false;
        }
        return true;
    }
}
