// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {IAgentExecutor} from "../rams/interfaces/IAgentExecutor.sol";

/// @title ReenteringTarget
/// @notice TEST ONLY. A call target whose `poke` calls back into an executor's `execute`, to show that the executor
///         refuses reentrancy. Any revert of the inner call is passed up unchanged.
contract ReenteringTarget {
    /// @notice The executor `poke` calls back into.
    IAgentExecutor public executor;

    /// @notice Sets the executor to call back into.
    /// @param executor_ The executor.
    function setExecutor(IAgentExecutor executor_) external {
        executor = executor_;
    }

    /// @notice Calls `executor.execute(this, poke())`, bubbling up any revert.
    function poke() external {
        executor.execute(address(this), abi.encodeCall(this.poke, ()));
    }
}
