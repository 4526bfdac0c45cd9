// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {IERC721Receiver} from "@openzeppelin/contracts/token/ERC721/IERC721Receiver.sol";
import {IdentityRegistry} from "../agents/IdentityRegistry.sol";

/// @title AgentRegistrarMock
/// @notice Test-only contract account that registers ERC-8004 agents and answers the ERC-721 receiver callback in a
///         configurable way. On acceptance it records what the registry already shows for the token, so tests can
///         see that the receiver check runs after the registration is complete.
contract AgentRegistrarMock is IERC721Receiver {
    /// @notice How `onERC721Received` answers.
    enum Mode {
        Accept,
        WrongMagic,
        RevertWithReason,
        RevertEmpty
    }

    /// @notice The registry this account registers with.
    IdentityRegistry public immutable registry;
    /// @notice Current callback behaviour.
    Mode public mode;
    /// @notice Token id seen by the last accepted callback.
    uint256 public seenTokenId;
    /// @notice tokenURI of that token at callback time.
    string public seenTokenURI;
    /// @notice Agent wallet of that token at callback time.
    address public seenAgentWallet;
    /// @notice Number of accepted callbacks.
    uint256 public callbacks;

    /// @param registry_ The identity registry.
    constructor(IdentityRegistry registry_) {
        registry = registry_;
    }

    /// @notice Sets the callback behaviour.
    /// @param mode_ New behaviour.
    function setMode(Mode mode_) external {
        mode = mode_;
    }

    /// @notice Registers an agent with `agentURI` as this contract.
    /// @param agentURI The agent URI.
    /// @return agentId The new agent id.
    function registerAgent(string calldata agentURI) external returns (uint256 agentId) {
        return registry.register(agentURI);
    }

    /// @notice Registers an agent without URI as this contract.
    /// @return agentId The new agent id.
    function registerAgentWithoutURI() external returns (uint256 agentId) {
        return registry.register();
    }

    /// @inheritdoc IERC721Receiver
    function onERC721Received(address, address, uint256 tokenId, bytes calldata) external returns (bytes4) {
        if (mode == Mode.WrongMagic) return 0xdeadbeef;
        if (mode == Mode.RevertWithReason) revert("registrar refuses");
        if (mode == Mode.RevertEmpty) revert();
        seenTokenId = tokenId;
        seenTokenURI = registry.tokenURI(tokenId);
        seenAgentWallet = registry.getAgentWallet(tokenId);
        ++callbacks;
        return IERC721Receiver.onERC721Received.selector;
    }
}
