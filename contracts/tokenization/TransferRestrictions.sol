// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

/// @title TransferRestrictions
/// @notice The ERC-1404 restriction codes of SecurityToken and their messages. A code names the first rule a transfer
///         breaks, in the order the token checks them: pause, sender, receiver, balance, frozen tokens, supply cap.
library TransferRestrictions {
    uint8 internal constant SUCCESS = 0;
    uint8 internal constant PAUSED = 1;
    uint8 internal constant SENDER_NOT_WHITELISTED = 2;
    uint8 internal constant RECEIVER_NOT_WHITELISTED = 3;
    uint8 internal constant SENDER_FROZEN = 4;
    uint8 internal constant RECEIVER_FROZEN = 5;
    uint8 internal constant INSUFFICIENT_BALANCE = 6;
    uint8 internal constant INSUFFICIENT_UNFROZEN_BALANCE = 7;
    uint8 internal constant SUPPLY_CAP_EXCEEDED = 8;

    /// @notice The message of `code`; codes this token never returns answer "Unknown restriction code".
    function message(uint8 code) internal pure returns (string memory) {
        if (code == SUCCESS) return "No restriction";
        if (code == PAUSED) return "Transfers of this token are paused";
        if (code == SENDER_NOT_WHITELISTED) return "The sender is not whitelisted";
        if (code == RECEIVER_NOT_WHITELISTED) return "The receiver is not whitelisted";
        if (code == SENDER_FROZEN) return "The sender's address is frozen";
        if (code == RECEIVER_FROZEN) return "The receiver's address is frozen";
        if (code == INSUFFICIENT_BALANCE) return "The amount exceeds the sender's balance";
        if (code == INSUFFICIENT_UNFROZEN_BALANCE) return "The amount exceeds the sender's unfrozen balance";
        if (code == SUPPLY_CAP_EXCEEDED) return "Minting the amount would exceed the supply cap";
        return "Unknown restriction code";
    }
}
