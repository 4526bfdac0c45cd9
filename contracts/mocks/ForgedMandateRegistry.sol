// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

/// @title ForgedMandateRegistry
/// @notice TEST ONLY. Not an AgentMandate: it answers the reads a freeze checks (anyone is an enforcer, no agent is
///         frozen) and emits the registry's AgentFrozen event for whatever agent it is told, from any caller, also when
///         an executor calls it as an ERC-20 `transferFrom` target. Tests use it to show that such a contract is refused
///         as a registry and that its events never count as RAMS events.
contract ForgedMandateRegistry {
    /// @notice The registry's role name, answered like AgentMandate's.
    bytes32 public constant ENFORCER_ROLE = keccak256("ENFORCER_ROLE");

    /// @notice The same signature as AgentMandate's event.
    event AgentFrozen(address indexed agent, address indexed enforcer);

    /// @notice Everyone holds every role here.
    function hasRole(bytes32, address) external pure returns (bool) {
        return true;
    }

    /// @notice No agent is ever frozen here.
    function isFrozen(address) external pure returns (bool) {
        return false;
    }

    /// @notice Emits AgentFrozen for `agent`, whoever calls.
    function freezeAgent(address agent) external {
        emit AgentFrozen(agent, msg.sender);
    }

    /// @notice As an execution's target: emits AgentFrozen for `to` and reports success.
    function transferFrom(address, address to, uint256) external returns (bool) {
        emit AgentFrozen(to, msg.sender);
        return true;
    }
}
