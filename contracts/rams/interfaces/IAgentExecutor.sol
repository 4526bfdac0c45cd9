// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

/// @title IAgentExecutor (ERC-8226, optional companion interface)
/// @notice An account-side venue that forwards an agent's call only when the principal's RAMS mandate allows it.
/// @dev ERC-165 id: 0x1cff79cd (the selector of `execute`).
interface IAgentExecutor {
    /// @notice Forwards `data` to `target` on behalf of the caller (the agent), for the principal the implementer is
    ///         bound to. The action label is the selector of `data` and the gated amount is read from `data` itself,
    ///         so the value checked is the value that moves. Checks the mandate, records the use, then calls.
    /// @param target The contract to call; it must be the asset of the agent's mandate.
    /// @param data The full calldata to forward (selector and arguments).
    /// @return The return data of the forwarded call.
    function execute(address target, bytes calldata data) external returns (bytes memory);
}
