// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

/// @title InvariantTest
/// @notice What forge reads on an invariant test contract to choose what its fuzzer calls: the contracts
///         (`targetContracts`), and on each the functions (`targetSelectors`). forge calls these views by name and
///         decodes the shapes below; a test that names them calls only its handlers, never the system under test
///         directly. Our own code, written after the interface forge documents (forge-std is not installed).
abstract contract InvariantTest {
    /// @notice A contract and the functions of it the fuzzer may call.
    struct FuzzSelector {
        address addr;
        bytes4[] selectors;
    }

    address[] private _targetedContracts;
    FuzzSelector[] private _targetedSelectors;

    /// @notice Lets the fuzzer call `selectors` on `target` (and only those, once any target is named).
    function targetHandler(address target, bytes4[] memory selectors) internal {
        _targetedContracts.push(target);
        _targetedSelectors.push(FuzzSelector(target, selectors));
    }

    /// @notice Read by forge: the contracts the fuzzer calls.
    function targetContracts() public view returns (address[] memory) {
        return _targetedContracts;
    }

    /// @notice Read by forge: the functions of each targeted contract the fuzzer calls.
    function targetSelectors() public view returns (FuzzSelector[] memory) {
        return _targetedSelectors;
    }
}
