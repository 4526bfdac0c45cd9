// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {IImplementationRegistry} from "../../upgrades/IImplementationRegistry.sol";

/// @title ITokenFactory
/// @notice Creates a security token and its offering escrow in one call, each behind an ERC-1967 proxy of the
///         implementations currently published, and keeps the list of published implementations tokens and escrows
///         may be upgraded to.
interface ITokenFactory is IImplementationRegistry {
    /// @notice What the tokenizer chooses for a new token.
    struct TokenizationParams {
        string name;
        string symbol;
        uint8 decimals;
        /// @dev 0 means no cap.
        uint256 supplyCap;
        address paymentToken;
        address[] initialHolders;
        /// @dev The investor each initial holder is bound to (0: unbound); same length as `initialHolders`.
        bytes32[] initialInvestorIds;
        uint256[] preMints;
    }

    /// @notice An implementation address is zero, or not a contract.
    error InvalidImplementation(address implementation);
    /// @notice The implementation new tokenizations use cannot be withdrawn.
    error ImplementationInUse(address implementation);

    /// @notice Emitted once per tokenization; a receipt alone identifies the token, its escrow and its tokenizer.
    event TokenCreated(address indexed token, address indexed tokenizer, address indexed escrow, string symbol);
    /// @notice New tokenizations use these implementations from now on, and existing ones may upgrade to them.
    event ImplementationsPublished(address indexed tokenImplementation, address indexed escrowImplementation);
    /// @notice `implementation` may no longer be upgraded to (a scheduled upgrade to it can no longer be executed).
    event ImplementationWithdrawn(address indexed implementation);

    /// @notice Deploys and initializes a token (tokenizer = caller) and its escrow; premints to the initial holders.
    function newTokenization(TokenizationParams calldata params) external returns (address token, address escrow);
    /// @notice The token implementation new tokenizations use.
    function tokenImplementation() external view returns (address);
    /// @notice The escrow implementation new tokenizations use.
    function escrowImplementation() external view returns (address);
    /// @notice Makes a new version current and publishes it for upgrades. Owner only.
    function publishImplementations(address tokenImplementation_, address escrowImplementation_) external;
    /// @notice Withdraws a published implementation that is not current. Owner only.
    function withdrawImplementation(address implementation) external;
}
