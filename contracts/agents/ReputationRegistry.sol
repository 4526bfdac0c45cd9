// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {IIdentityRegistry} from "./interfaces/IIdentityRegistry.sol";
import {IReputationRegistry} from "./interfaces/IReputationRegistry.sol";

/// @title ReputationRegistry
/// @notice ERC-8004 Reputation Registry: clients rate agents of one identity registry with signed fixed-point
///         values and two tags, may revoke their own ratings, and anyone may attach responses.
///         Plain deployment of the ERC-8004 reference ABI: no proxy, no upgrade path, no admin; the identity
///         registry is fixed by the constructor. Functions, events, revert strings and the summary arithmetic match
///         the reference contract (erc-8004/erc-8004-contracts, ReputationRegistryUpgradeable, "2.0.0").
/// @dev Feedback indexes are 1-based per (agentId, client). A client is listed in `getClients` on its first feedback
///      (its last index going from 0 to 1) and a responder on its first response to an entry (its count going from
///      0 to 1), so no separate "seen" flags are stored.
///      Built for the legacy code generator (no viaIR): NewFeedback is emitted from a helper that takes endpoint and
///      feedbackURI in memory, getSummary and readAllFeedback carry their state in memory structs (Filter, Tally,
///      FeedbackList) filled by helpers, and readAllFeedback takes its list and tags in memory.
contract ReputationRegistry is IReputationRegistry {
    /// @dev One stored rating; endpoint, URI and hash are only in the NewFeedback event.
    struct Feedback {
        int128 value;
        uint8 valueDecimals;
        bool isRevoked;
        string tag1;
        string tag2;
    }

    /// @dev Tag filter of the read functions; an empty tag matches anything.
    struct Filter {
        bool anyTag1;
        bool anyTag2;
        bytes32 tag1Hash;
        bytes32 tag2Hash;
        bool includeRevoked;
    }

    /// @dev Running totals of `getSummary`: sum of the values scaled to 18 decimals, number of entries and how
    ///      often each valueDecimals (0 to 18) occurs.
    struct Tally {
        int256 sumWad;
        uint64 count;
        uint64[19] decimalsFrequency;
    }

    /// @dev The parallel arrays returned by `readAllFeedback`.
    struct FeedbackList {
        address[] clients;
        uint64[] feedbackIndexes;
        int128[] values;
        uint8[] valueDecimals;
        string[] tag1s;
        string[] tag2s;
        bool[] revokedStatuses;
    }

    /// @dev Largest accepted |value|.
    int128 private constant MAX_ABS_VALUE = 1e38;
    /// @dev Largest accepted valueDecimals; also the precision of the summary's internal sum.
    uint8 private constant MAX_DECIMALS = 18;

    /// @dev The identity registry whose agents are rated.
    address private immutable _identityRegistry;

    /// @dev agentId => client => 1-based index => rating.
    mapping(uint256 agentId => mapping(address client => mapping(uint64 index => Feedback))) private _feedback;
    /// @dev agentId => client => number of ratings given (= last index).
    mapping(uint256 agentId => mapping(address client => uint64)) private _lastIndex;
    /// @dev agentId => clients in order of first rating.
    mapping(uint256 agentId => address[]) private _clients;
    /// @dev agentId => client => index => responder => number of responses.
    mapping(uint256 agentId => mapping(address client => mapping(uint64 index => mapping(address responder => uint64))))
        private _responseCount;
    /// @dev agentId => client => index => responders in order of first response.
    mapping(uint256 agentId => mapping(address client => mapping(uint64 index => address[]))) private _responders;

    /// @param identityRegistry_ The identity registry whose agents are rated; not zero ("bad identity").
    constructor(address identityRegistry_) {
        require(identityRegistry_ != address(0), "bad identity");
        _identityRegistry = identityRegistry_;
    }

    /// @inheritdoc IReputationRegistry
    function getIdentityRegistry() external view returns (address) {
        return _identityRegistry;
    }

    // ------------------------------------------------------------------ writes

    /// @inheritdoc IReputationRegistry
    /// @dev Reverts "too many decimals", "value too large", ERC721NonexistentToken (from the identity registry) or
    ///      "Self-feedback not allowed" (caller is the owner, an operator or the approved address of the agent).
    function giveFeedback(
        uint256 agentId,
        int128 value,
        uint8 valueDecimals,
        string calldata tag1,
        string calldata tag2,
        string calldata endpoint,
        string calldata feedbackURI,
        bytes32 feedbackHash
    ) external {
        uint64 feedbackIndex = _storeFeedback(agentId, value, valueDecimals, tag1, tag2);
        _emitNewFeedback(agentId, feedbackIndex, value, valueDecimals, tag1, tag2, endpoint, feedbackURI, feedbackHash);
    }

    /// @inheritdoc IReputationRegistry
    /// @dev Reverts "index must be > 0", "index out of bounds" (also for another client's entry) or "Already revoked".
    function revokeFeedback(uint256 agentId, uint64 feedbackIndex) external {
        require(feedbackIndex > 0, "index must be > 0");
        require(feedbackIndex <= _lastIndex[agentId][msg.sender], "index out of bounds");
        Feedback storage entry = _feedback[agentId][msg.sender][feedbackIndex];
        require(!entry.isRevoked, "Already revoked");
        entry.isRevoked = true;
        emit FeedbackRevoked(agentId, msg.sender, feedbackIndex);
    }

    /// @inheritdoc IReputationRegistry
    /// @dev Reverts "index must be > 0", "Empty URI" or "index out of bounds", in that order.
    function appendResponse(
        uint256 agentId,
        address clientAddress,
        uint64 feedbackIndex,
        string calldata responseURI,
        bytes32 responseHash
    ) external {
        require(feedbackIndex > 0, "index must be > 0");
        require(bytes(responseURI).length > 0, "Empty URI");
        require(feedbackIndex <= _lastIndex[agentId][clientAddress], "index out of bounds");

        uint64 previous = _responseCount[agentId][clientAddress][feedbackIndex][msg.sender]++;
        if (previous == 0) _responders[agentId][clientAddress][feedbackIndex].push(msg.sender);

        emit ResponseAppended(agentId, clientAddress, feedbackIndex, msg.sender, responseURI, responseHash);
    }

    // ------------------------------------------------------------------ reads

    /// @inheritdoc IReputationRegistry
    function getLastIndex(uint256 agentId, address clientAddress) external view returns (uint64) {
        return _lastIndex[agentId][clientAddress];
    }

    /// @inheritdoc IReputationRegistry
    /// @dev Reverts "index must be > 0" or "index out of bounds".
    function readFeedback(
        uint256 agentId,
        address clientAddress,
        uint64 feedbackIndex
    ) external view returns (int128 value, uint8 valueDecimals, string memory tag1, string memory tag2, bool isRevoked) {
        require(feedbackIndex > 0, "index must be > 0");
        require(feedbackIndex <= _lastIndex[agentId][clientAddress], "index out of bounds");
        Feedback storage entry = _feedback[agentId][clientAddress][feedbackIndex];
        return (entry.value, entry.valueDecimals, entry.tag1, entry.tag2, entry.isRevoked);
    }

    /// @inheritdoc IReputationRegistry
    /// @dev Reverts "clientAddresses required" for an empty list. Each value is scaled to 18 decimals and summed;
    ///      the sum is divided by the count (truncating toward zero), then divided down to the most frequent
    ///      decimals (truncating toward zero; the lowest decimals win a tie) and narrowed to int128 without a range
    ///      check, as the reference does. A client listed twice is counted twice. No entry gives (0, 0, 0).
    function getSummary(
        uint256 agentId,
        address[] calldata clientAddresses,
        string calldata tag1,
        string calldata tag2
    ) external view returns (uint64 count, int128 summaryValue, uint8 summaryValueDecimals) {
        require(clientAddresses.length > 0, "clientAddresses required");
        Tally memory tally = _tally(agentId, clientAddresses, _filter(tag1, tag2, false));
        if (tally.count == 0) return (0, 0, 0);

        count = tally.count;
        summaryValueDecimals = _mostFrequent(tally.decimalsFrequency);
        int256 averageWad = tally.sumWad / int256(uint256(count));
        summaryValue = int128(averageWad / int256(10 ** uint256(MAX_DECIMALS - summaryValueDecimals)));
    }

    /// @inheritdoc IReputationRegistry
    /// @dev Entries come client by client (in the order of the list, or of first feedback when the list is empty),
    ///      then by increasing index.
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
        )
    {
        if (clientAddresses.length == 0) clientAddresses = _clients[agentId];
        FeedbackList memory list = _collect(agentId, clientAddresses, _filter(tag1, tag2, includeRevoked));
        return (
            list.clients,
            list.feedbackIndexes,
            list.values,
            list.valueDecimals,
            list.tag1s,
            list.tag2s,
            list.revokedStatuses
        );
    }

    /// @inheritdoc IReputationRegistry
    /// @dev Revoked entries count like any other; a specific `feedbackIndex` is not range-checked (0 responses
    ///      beyond the last index). A responder listed twice in `responders` is counted twice.
    function getResponseCount(
        uint256 agentId,
        address clientAddress,
        uint64 feedbackIndex,
        address[] calldata responders
    ) external view returns (uint64 count) {
        if (clientAddress == address(0)) {
            address[] storage clients = _clients[agentId];
            for (uint256 i; i < clients.length; ++i) {
                count += _countClientResponses(agentId, clients[i], responders);
            }
        } else if (feedbackIndex == 0) {
            count = _countClientResponses(agentId, clientAddress, responders);
        } else {
            count = _countResponses(agentId, clientAddress, feedbackIndex, responders);
        }
    }

    /// @inheritdoc IReputationRegistry
    function getClients(uint256 agentId) external view returns (address[] memory) {
        return _clients[agentId];
    }

    /// @inheritdoc IReputationRegistry
    function getVersion() external pure returns (string memory) {
        return "2.0.0";
    }

    // ------------------------------------------------------------------ internals

    /// @dev Validates and stores a rating by the caller; returns its 1-based index.
    function _storeFeedback(
        uint256 agentId,
        int128 value,
        uint8 valueDecimals,
        string calldata tag1,
        string calldata tag2
    ) private returns (uint64 feedbackIndex) {
        require(valueDecimals <= MAX_DECIMALS, "too many decimals");
        require(value >= -MAX_ABS_VALUE && value <= MAX_ABS_VALUE, "value too large");
        // isAuthorizedOrOwner reverts with ERC721NonexistentToken for an unknown agent; that error bubbles up.
        require(
            !IIdentityRegistry(_identityRegistry).isAuthorizedOrOwner(msg.sender, agentId),
            "Self-feedback not allowed"
        );

        feedbackIndex = ++_lastIndex[agentId][msg.sender];
        Feedback storage entry = _feedback[agentId][msg.sender][feedbackIndex];
        entry.value = value;
        entry.valueDecimals = valueDecimals;
        entry.tag1 = tag1;
        entry.tag2 = tag2;
        if (feedbackIndex == 1) _clients[agentId].push(msg.sender);
    }

    /// @dev Emits NewFeedback. Split out of `giveFeedback`, with `endpoint` and `feedbackURI` copied to memory (one
    ///      stack slot each instead of two), so the event fits the legacy code generator's 16-slot stack reach.
    function _emitNewFeedback(
        uint256 agentId,
        uint64 feedbackIndex,
        int128 value,
        uint8 valueDecimals,
        string calldata tag1,
        string calldata tag2,
        string memory endpoint,
        string memory feedbackURI,
        bytes32 feedbackHash
    ) private {
        emit NewFeedback(
            agentId,
            msg.sender,
            feedbackIndex,
            value,
            valueDecimals,
            tag1,
            tag1,
            tag2,
            endpoint,
            feedbackURI,
            feedbackHash
        );
    }

    /// @dev Builds the tag/revocation filter of the read functions.
    function _filter(
        string memory tag1,
        string memory tag2,
        bool includeRevoked
    ) private pure returns (Filter memory filter) {
        filter.anyTag1 = bytes(tag1).length == 0;
        filter.anyTag2 = bytes(tag2).length == 0;
        filter.tag1Hash = keccak256(bytes(tag1));
        filter.tag2Hash = keccak256(bytes(tag2));
        filter.includeRevoked = includeRevoked;
    }

    /// @dev Whether a stored entry passes `filter`.
    function _matches(Feedback storage entry, Filter memory filter) private view returns (bool) {
        if (entry.isRevoked && !filter.includeRevoked) return false;
        if (!filter.anyTag1 && keccak256(bytes(entry.tag1)) != filter.tag1Hash) return false;
        if (!filter.anyTag2 && keccak256(bytes(entry.tag2)) != filter.tag2Hash) return false;
        return true;
    }

    /// @dev Sum (at 18 decimals), count and decimals frequencies of the listed clients' matching entries.
    function _tally(
        uint256 agentId,
        address[] calldata clientList,
        Filter memory filter
    ) private view returns (Tally memory tally) {
        for (uint256 i; i < clientList.length; ++i) {
            uint64 last = _lastIndex[agentId][clientList[i]];
            mapping(uint64 => Feedback) storage entries = _feedback[agentId][clientList[i]];
            for (uint64 j = 1; j <= last; ++j) {
                Feedback storage entry = entries[j];
                if (!_matches(entry, filter)) continue;
                uint8 decimals = entry.valueDecimals;
                tally.sumWad += int256(entry.value) * int256(10 ** uint256(MAX_DECIMALS - decimals));
                ++tally.decimalsFrequency[decimals];
                ++tally.count;
            }
        }
    }

    /// @dev The decimals with the highest frequency; the lowest such decimals on a tie.
    function _mostFrequent(uint64[19] memory decimalsFrequency) private pure returns (uint8 mode) {
        uint64 best;
        for (uint8 d; d <= MAX_DECIMALS; ++d) {
            if (decimalsFrequency[d] > best) {
                best = decimalsFrequency[d];
                mode = d;
            }
        }
    }

    /// @dev Two passes over the clients' entries: count the matches, then fill arrays of exactly that length.
    function _collect(
        uint256 agentId,
        address[] memory clientList,
        Filter memory filter
    ) private view returns (FeedbackList memory list) {
        uint256 total;
        for (uint256 i; i < clientList.length; ++i) {
            uint64 last = _lastIndex[agentId][clientList[i]];
            mapping(uint64 => Feedback) storage entries = _feedback[agentId][clientList[i]];
            for (uint64 j = 1; j <= last; ++j) {
                if (_matches(entries[j], filter)) ++total;
            }
        }

        list.clients = new address[](total);
        list.feedbackIndexes = new uint64[](total);
        list.values = new int128[](total);
        list.valueDecimals = new uint8[](total);
        list.tag1s = new string[](total);
        list.tag2s = new string[](total);
        list.revokedStatuses = new bool[](total);

        uint256 next;
        for (uint256 i; i < clientList.length; ++i) {
            next = _appendClient(agentId, clientList[i], filter, list, next);
        }
    }

    /// @dev Writes one client's matching entries into `list` from position `next`; returns the next free position.
    function _appendClient(
        uint256 agentId,
        address client,
        Filter memory filter,
        FeedbackList memory list,
        uint256 next
    ) private view returns (uint256) {
        uint64 last = _lastIndex[agentId][client];
        mapping(uint64 => Feedback) storage entries = _feedback[agentId][client];
        for (uint64 j = 1; j <= last; ++j) {
            Feedback storage entry = entries[j];
            if (!_matches(entry, filter)) continue;
            list.clients[next] = client;
            list.feedbackIndexes[next] = j;
            list.values[next] = entry.value;
            list.valueDecimals[next] = entry.valueDecimals;
            list.tag1s[next] = entry.tag1;
            list.tag2s[next] = entry.tag2;
            list.revokedStatuses[next] = entry.isRevoked;
            ++next;
        }
        return next;
    }

    /// @dev Responses to every entry of one client.
    function _countClientResponses(
        uint256 agentId,
        address client,
        address[] calldata responders
    ) private view returns (uint64 count) {
        uint64 last = _lastIndex[agentId][client];
        for (uint64 j = 1; j <= last; ++j) {
            count += _countResponses(agentId, client, j, responders);
        }
    }

    /// @dev Responses to one entry, from `responders` or, when empty, from everyone who responded.
    function _countResponses(
        uint256 agentId,
        address client,
        uint64 feedbackIndex,
        address[] calldata responders
    ) private view returns (uint64 count) {
        mapping(address => uint64) storage perResponder = _responseCount[agentId][client][feedbackIndex];
        if (responders.length == 0) {
            address[] storage all = _responders[agentId][client][feedbackIndex];
            for (uint256 k; k < all.length; ++k) count += perResponder[all[k]];
        } else {
            for (uint256 k; k < responders.length; ++k) count += perResponder[responders[k]];
        }
    }
}
