// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

/// @title IReputationRegistry
/// @notice The ERC-8004 ("Trustless Agents") Reputation Registry surface, with the signatures, events and return
///         types of the reference deployment (erc-8004/erc-8004-contracts, version "2.0.0").
interface IReputationRegistry {
    /// @notice A client rated an agent.
    /// @param agentId The rated agent.
    /// @param clientAddress The rating account.
    /// @param feedbackIndex 1-based index of this feedback among the client's feedback for the agent.
    /// @param value Signed fixed-point value.
    /// @param valueDecimals Decimals of `value` (0 to 18).
    /// @param indexedTag1 `tag1` as a topic (keccak256 of the tag).
    /// @param tag1 First tag in clear.
    /// @param tag2 Second tag.
    /// @param endpoint The agent endpoint the feedback is about (event only).
    /// @param feedbackURI Off-chain feedback document (event only).
    /// @param feedbackHash Hash of the feedback document (event only).
    event NewFeedback(
        uint256 indexed agentId,
        address indexed clientAddress,
        uint64 feedbackIndex,
        int128 value,
        uint8 valueDecimals,
        string indexed indexedTag1,
        string tag1,
        string tag2,
        string endpoint,
        string feedbackURI,
        bytes32 feedbackHash
    );

    /// @notice A client revoked one of its feedback entries.
    /// @param agentId The rated agent.
    /// @param clientAddress The client.
    /// @param feedbackIndex The revoked entry.
    event FeedbackRevoked(uint256 indexed agentId, address indexed clientAddress, uint64 indexed feedbackIndex);

    /// @notice Someone attached a response to a feedback entry.
    /// @param agentId The rated agent.
    /// @param clientAddress The client who gave the feedback.
    /// @param feedbackIndex The feedback entry.
    /// @param responder The account that responded.
    /// @param responseURI Off-chain response document.
    /// @param responseHash Hash of the response document.
    event ResponseAppended(
        uint256 indexed agentId,
        address indexed clientAddress,
        uint64 feedbackIndex,
        address indexed responder,
        string responseURI,
        bytes32 responseHash
    );

    /// @notice The identity registry whose agents are rated here.
    /// @return The identity registry address.
    function getIdentityRegistry() external view returns (address);

    /// @notice Rates `agentId` as the caller. The agent's owner and operators cannot rate it.
    /// @param agentId The agent; must exist.
    /// @param value Signed value, |value| <= 1e38.
    /// @param valueDecimals Decimals of `value`, at most 18.
    /// @param tag1 First tag (stored).
    /// @param tag2 Second tag (stored).
    /// @param endpoint Endpoint the feedback is about (event only).
    /// @param feedbackURI Off-chain feedback document (event only).
    /// @param feedbackHash Hash of the document (event only).
    function giveFeedback(
        uint256 agentId,
        int128 value,
        uint8 valueDecimals,
        string calldata tag1,
        string calldata tag2,
        string calldata endpoint,
        string calldata feedbackURI,
        bytes32 feedbackHash
    ) external;

    /// @notice Revokes the caller's own feedback entry; once only.
    /// @param agentId The rated agent.
    /// @param feedbackIndex The caller's 1-based entry index.
    function revokeFeedback(uint256 agentId, uint64 feedbackIndex) external;

    /// @notice Attaches a response to a feedback entry (revoked ones included). Anyone may respond.
    /// @param agentId The rated agent.
    /// @param clientAddress The client who gave the feedback.
    /// @param feedbackIndex The 1-based entry index.
    /// @param responseURI Off-chain response document, not empty.
    /// @param responseHash Hash of the response document.
    function appendResponse(
        uint256 agentId,
        address clientAddress,
        uint64 feedbackIndex,
        string calldata responseURI,
        bytes32 responseHash
    ) external;

    /// @notice Number of feedback entries `clientAddress` gave `agentId` (= its last 1-based index).
    /// @param agentId The rated agent.
    /// @param clientAddress The client.
    /// @return The last index, 0 when none.
    function getLastIndex(uint256 agentId, address clientAddress) external view returns (uint64);

    /// @notice Reads one stored feedback entry.
    /// @param agentId The rated agent.
    /// @param clientAddress The client.
    /// @param feedbackIndex The 1-based entry index.
    /// @return value The value.
    /// @return valueDecimals Its decimals.
    /// @return tag1 First tag.
    /// @return tag2 Second tag.
    /// @return isRevoked Whether the client revoked it.
    function readFeedback(
        uint256 agentId,
        address clientAddress,
        uint64 feedbackIndex
    ) external view returns (int128 value, uint8 valueDecimals, string memory tag1, string memory tag2, bool isRevoked);

    /// @notice Count and average of the non-revoked feedback of the listed clients matching the tags.
    /// @param agentId The rated agent.
    /// @param clientAddresses Clients to include; must not be empty.
    /// @param tag1 Required tag1, or "" for any.
    /// @param tag2 Required tag2, or "" for any.
    /// @return count Number of entries averaged.
    /// @return summaryValue Average, expressed with `summaryValueDecimals` decimals.
    /// @return summaryValueDecimals The most common decimals among the entries (lowest on a tie).
    function getSummary(
        uint256 agentId,
        address[] calldata clientAddresses,
        string calldata tag1,
        string calldata tag2
    ) external view returns (uint64 count, int128 summaryValue, uint8 summaryValueDecimals);

    /// @notice All feedback entries of the listed clients (every client when the list is empty) matching the tags.
    /// @param agentId The rated agent.
    /// @param clientAddresses Clients to include; empty means all clients of the agent.
    /// @param tag1 Required tag1, or "" for any.
    /// @param tag2 Required tag2, or "" for any.
    /// @param includeRevoked Whether revoked entries are returned.
    /// @return clients Client of each entry.
    /// @return feedbackIndexes 1-based index of each entry.
    /// @return values Value of each entry.
    /// @return valueDecimals Decimals of each entry.
    /// @return tag1s tag1 of each entry.
    /// @return tag2s tag2 of each entry.
    /// @return revokedStatuses Revoked flag of each entry.
    /// @dev The list and tags are `memory` (ABI-identical to `calldata`): one stack slot each instead of two keeps the
    ///      implementation within the legacy code generator's stack reach without `viaIR`.
    function readAllFeedback(
        uint256 agentId,
        address[] memory clientAddresses,
        string memory tag1,
        string memory tag2,
        bool includeRevoked
    )
        external
        view
        returns (
            address[] memory clients,
            uint64[] memory feedbackIndexes,
            int128[] memory values,
            uint8[] memory valueDecimals,
            string[] memory tag1s,
            string[] memory tag2s,
            bool[] memory revokedStatuses
        );

    /// @notice Number of responses appended. `clientAddress` 0 counts over every client and entry of the agent;
    ///         `feedbackIndex` 0 counts over every entry of `clientAddress`; otherwise one entry.
    /// @param agentId The rated agent.
    /// @param clientAddress The client, or the zero address for all.
    /// @param feedbackIndex The entry, or 0 for all of the client's entries.
    /// @param responders Only count responses from these accounts; empty counts every responder.
    /// @return count The number of responses.
    function getResponseCount(
        uint256 agentId,
        address clientAddress,
        uint64 feedbackIndex,
        address[] calldata responders
    ) external view returns (uint64 count);

    /// @notice Every account that ever gave `agentId` feedback, in order of first feedback.
    /// @param agentId The rated agent.
    /// @return The clients.
    function getClients(uint256 agentId) external view returns (address[] memory);

    /// @notice The version of the ERC-8004 reference ABI implemented.
    /// @return The version string.
    function getVersion() external pure returns (string memory);
}
