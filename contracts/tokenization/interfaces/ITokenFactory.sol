// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

/// @title ITokenFactory
/// @notice Creates a security token and its offering escrow in one call (EIP-1167 clones).
interface ITokenFactory {
    /// @notice What the tokenizer chooses for a new token.
    struct TokenizationParams {
        string name;
        string symbol;
        uint8 decimals;
        /// @dev 0 means no cap.
        uint256 supplyCap;
        address paymentToken;
        address[] initialHolders;
        uint256[] preMints;
    }

    /// @notice Emitted once per tokenization; a receipt alone identifies the token, its escrow and its tokenizer.
    event TokenCreated(address indexed token, address indexed tokenizer, address indexed escrow, string symbol);

    /// @notice Clones and initializes a token (tokenizer = caller) and its escrow; premints to the initial holders.
    function newTokenization(TokenizationParams calldata params) external returns (address token, address escrow);
    function tokenImplementation() external view returns (address);
    function escrowImplementation() external view returns (address);
}
