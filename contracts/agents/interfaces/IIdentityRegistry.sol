// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

/// @title IIdentityRegistry
/// @notice The ERC-8004 ("Trustless Agents") Identity Registry surface, with the signatures, events and return types
///         of the reference deployment (erc-8004/erc-8004-contracts, version "2.0.0"). The ERC-721 functions and
///         events of the agent token itself come from OpenZeppelin's ERC721 in the implementing contract.
interface IIdentityRegistry {
    /// @notice One key/value pair given to `register(string,(string,bytes)[])`.
    /// @param metadataKey The key; "agentWallet" is reserved.
    /// @param metadataValue Raw bytes stored under the key.
    struct MetadataEntry {
        string metadataKey;
        bytes metadataValue;
    }

    /// @notice An agent was registered (emitted after the mint's Transfer).
    /// @param agentId The new agent's id (its ERC-721 token id).
    /// @param agentURI The registration-file URI given at registration ("" for `register()`).
    /// @param owner The registering account, owner of the new token.
    event Registered(uint256 indexed agentId, string agentURI, address indexed owner);

    /// @notice A metadata value of an agent was written or cleared (the reserved "agentWallet" key included).
    /// @param agentId The agent.
    /// @param indexedMetadataKey The key, as a topic (keccak256 of the key).
    /// @param metadataKey The key in clear.
    /// @param metadataValue The new value; empty when "agentWallet" is cleared.
    event MetadataSet(
        uint256 indexed agentId,
        string indexed indexedMetadataKey,
        string metadataKey,
        bytes metadataValue
    );

    /// @notice The agent URI (token URI) of an agent was replaced.
    /// @param agentId The agent.
    /// @param newURI The new agent URI.
    /// @param updatedBy The owner or operator who made the change.
    event URIUpdated(uint256 indexed agentId, string newURI, address indexed updatedBy);

    /// @notice Registers a new agent owned by the caller, with an empty agent URI.
    /// @return agentId The new agent's id.
    function register() external returns (uint256 agentId);

    /// @notice Registers a new agent owned by the caller.
    /// @param agentURI The registration-file URI (token URI).
    /// @return agentId The new agent's id.
    function register(string memory agentURI) external returns (uint256 agentId);

    /// @notice Registers a new agent owned by the caller and stores extra metadata.
    /// @param agentURI The registration-file URI (token URI).
    /// @param metadata Key/value pairs to store; the key "agentWallet" is refused.
    /// @return agentId The new agent's id.
    function register(string memory agentURI, MetadataEntry[] memory metadata) external returns (uint256 agentId);

    /// @notice Returns the raw metadata stored under `metadataKey` ("" when unset).
    /// @param agentId The agent.
    /// @param metadataKey The key; "agentWallet" returns the 20-byte packed wallet, or "" when cleared.
    /// @return The stored bytes.
    function getMetadata(uint256 agentId, string memory metadataKey) external view returns (bytes memory);

    /// @notice Stores `metadataValue` under `metadataKey`. Owner or approved operator only; "agentWallet" refused.
    /// @param agentId The agent.
    /// @param metadataKey The key.
    /// @param metadataValue The value.
    function setMetadata(uint256 agentId, string memory metadataKey, bytes memory metadataValue) external;

    /// @notice Replaces the agent URI. Owner or approved operator only.
    /// @param agentId The agent.
    /// @param newURI The new agent URI.
    function setAgentURI(uint256 agentId, string calldata newURI) external;

    /// @notice Returns the agent's verified payment wallet, or the zero address when none is set.
    /// @param agentId The agent.
    /// @return The wallet.
    function getAgentWallet(uint256 agentId) external view returns (address);

    /// @notice Sets the agent wallet to `newWallet`, which proves control with an EIP-712 `AgentWalletSet`
    ///         signature (ECDSA, else ERC-1271). Owner or approved operator only.
    /// @param agentId The agent.
    /// @param newWallet The new wallet, not zero.
    /// @param deadline Last valid timestamp of the signature, at most 5 minutes ahead of the block.
    /// @param signature The new wallet's signature.
    function setAgentWallet(uint256 agentId, address newWallet, uint256 deadline, bytes calldata signature) external;

    /// @notice Clears the agent wallet. Owner or approved operator only.
    /// @param agentId The agent.
    function unsetAgentWallet(uint256 agentId) external;

    /// @notice True when `spender` owns `agentId` or is approved for it (single-token or for all).
    /// @dev Reverts with ERC721NonexistentToken for an unknown agent.
    /// @param spender The account to check.
    /// @param agentId The agent.
    /// @return Whether `spender` may act for the agent.
    function isAuthorizedOrOwner(address spender, uint256 agentId) external view returns (bool);

    /// @notice The version of the ERC-8004 reference ABI implemented.
    /// @return The version string.
    function getVersion() external pure returns (string memory);
}
