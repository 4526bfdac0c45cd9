// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

/// @title Multicall3
/// @notice A minimal stand-in for the canonical Multicall3 (0xcA11bde05977b3631167028862bE2a173976CA11) that local
///         chains lack. Its runtime code is installed at the canonical address on the chains `npm start` runs, so
///         tools that diagnose through Multicall3 (the x402 facilitator explains failed payments with it) work locally.
contract Multicall3 {
    struct Call {
        address target;
        bytes callData;
    }

    struct Call3 {
        address target;
        bool allowFailure;
        bytes callData;
    }

    struct Result {
        bool success;
        bytes returnData;
    }

    /// @notice A call that was required to succeed failed.
    error CallFailed(uint256 index);

    /// @notice Runs each call; reverts on a failed call only when `requireSuccess`.
    /// @param requireSuccess Whether every call must succeed.
    /// @param calls Targets and calldata.
    /// @return returnData One result per call.
    function tryAggregate(bool requireSuccess, Call[] calldata calls) public returns (Result[] memory returnData) {
        returnData = new Result[](calls.length);
        for (uint256 i; i < calls.length; ++i) {
            (bool success, bytes memory ret) = calls[i].target.call(calls[i].callData);
            if (requireSuccess && !success) revert CallFailed(i);
            returnData[i] = Result(success, ret);
        }
    }

    /// @notice Runs each call; reverts when a call that does not allow failure fails.
    /// @param calls Targets, failure policy and calldata.
    /// @return returnData One result per call.
    function aggregate3(Call3[] calldata calls) public returns (Result[] memory returnData) {
        returnData = new Result[](calls.length);
        for (uint256 i; i < calls.length; ++i) {
            (bool success, bytes memory ret) = calls[i].target.call(calls[i].callData);
            if (!success && !calls[i].allowFailure) revert CallFailed(i);
            returnData[i] = Result(success, ret);
        }
    }
}
