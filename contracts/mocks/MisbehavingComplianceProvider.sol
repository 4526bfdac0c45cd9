// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

/// @title MisbehavingComplianceProvider
/// @notice TEST ONLY. A compliance provider that answers `checkPrincipal` as it is told: eligible (so a mandate can be
///         granted with it), then, once switched, not eligible, reverting, answering too few bytes, or answering a first
///         word that is neither 0 nor 1. Tests use it to show that the registry's
///         execution gate treats every answer but a well-formed "eligible" as "not eligible" and never reverts in
///         `canExecute`.
contract MisbehavingComplianceProvider {
    /// @notice How `checkPrincipal` answers.
    enum Mode {
        Eligible,
        NotEligible,
        Revert,
        ShortAnswer,
        NotABool
    }

    /// @notice The current way of answering.
    Mode public mode;

    /// @notice The way of answering changed.
    /// @param mode The new mode.
    event ModeSet(Mode mode);

    /// @notice The revert `checkPrincipal` raises in the Revert mode.
    error Refused();

    /// @notice Sets how `checkPrincipal` answers; anyone may call it (test only).
    /// @param mode_ The new mode.
    function setMode(Mode mode_) external {
        mode = mode_;
        emit ModeSet(mode_);
    }

    /// @notice Answers as the mode says, whatever the principal and identity reference.
    /// @return eligible, reason and expiresAt in the well-formed modes; something else otherwise.
    function checkPrincipal(address, bytes32) external view returns (bool, uint8, uint48) {
        Mode m = mode;
        if (m == Mode.Eligible) return (true, 0, 0);
        if (m == Mode.NotEligible) return (false, 2, 0);
        if (m == Mode.Revert) revert Refused();
        assembly ("memory-safe") {
            switch m
            case 3 {
                // ShortAnswer: one word saying "true", not the three words of the answer
                let p := mload(0x40)
                mstore(p, 1)
                return(p, 0x20)
            }
            default {
                // NotABool: three words, the first one 2
                let p := mload(0x40)
                mstore(p, 2)
                mstore(add(p, 0x20), 0)
                mstore(add(p, 0x40), 0)
                return(p, 0x60)
            }
        }
    }
}
