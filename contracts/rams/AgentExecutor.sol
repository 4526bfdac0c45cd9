// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";
import {ReentrancyGuardTransient} from "@openzeppelin/contracts/utils/ReentrancyGuardTransient.sol";
import {IAgentExecutor} from "./interfaces/IAgentExecutor.sol";
import {IAgentMandate} from "./interfaces/IAgentMandate.sol";

/// @title AgentExecutor
/// @notice ERC-8226 executor venue for one principal. The principal gives this contract its token approvals; an agent
///         calls `execute`, and the call is forwarded only if the principal's mandate for that agent allows the
///         action (the selector) at the amount found in the calldata. Each forwarded call is recorded in the registry.
/// @dev The registry must grant this contract RECORDER_ROLE: it is neither the asset nor the principal. Forwarded
///      calls are made by this contract, so allowances and approvals involved are this contract's, not the agent's.
///      The registry's `canExecute` also asks the principal's compliance provider (this project's registry), so an
///      agent of a principal revoked there is refused here with CannotExecute. The reentrancy lock is kept in
///      transient storage (OpenZeppelin's ReentrancyGuardTransient; the reference uses the storage-slot guard): same
///      error, about 1 900 gas less per execution.
contract AgentExecutor is IAgentExecutor, Ownable, ReentrancyGuardTransient {
    /// @notice How a selector is gated.
    /// @param supported Whether the selector may be executed at all.
    /// @param hasAmount Whether an amount is read from the calldata; when false the action is gated at amount 0.
    /// @param amountIndex Position (0-based) of the uint256 amount among the call's arguments.
    struct ActionSpec {
        bool supported;
        bool hasAmount;
        uint8 amountIndex;
    }

    /// @notice The RAMS registry consulted and updated on every execution.
    IAgentMandate public immutable rams;
    /// @notice The principal whose mandates this executor enforces.
    address public immutable principal;

    /// @notice The gating rule of each selector; an unregistered selector reads as unsupported.
    mapping(bytes4 selector => ActionSpec) public actions;

    /// @notice A selector's gating rule was set by the owner.
    /// @param selector The selector.
    /// @param supported Whether it may be executed.
    /// @param hasAmount Whether its amount is read from the calldata.
    /// @param amountIndex The argument position of the amount.
    event ActionSet(bytes4 indexed selector, bool supported, bool hasAmount, uint8 amountIndex);

    /// @notice The selector of the forwarded call is not registered as supported.
    /// @param selector The selector.
    error UnsupportedAction(bytes4 selector);
    /// @notice The calldata is shorter than a selector, or too short to hold the registered amount argument.
    error InvalidData();
    /// @notice The registry's `canExecute` refused this execution.
    /// @param agent The caller.
    /// @param target The call's target.
    /// @param selector The call's selector.
    /// @param amount The amount read from the calldata (0 for an action registered without amount).
    error CannotExecute(address agent, address target, bytes4 selector, uint256 amount);
    /// @notice The forwarded call reverted.
    /// @param returnData The revert data of the forwarded call, unchanged.
    error CallFailed(bytes returnData);

    /// @param rams_ The RAMS registry.
    /// @param principal_ The principal this executor acts for.
    /// @param owner_ The account allowed to register actions with `setAction`.
    constructor(IAgentMandate rams_, address principal_, address owner_) Ownable(owner_) {
        rams = rams_;
        principal = principal_;
    }

    /// @notice Registers, changes or disables (`supported = false`) the gating rule of `selector`. Owner only.
    /// @dev The amount is read from the head word of argument `amountIndex`, at calldata offset 4 + 32*amountIndex;
    ///      that is right for any static uint256 argument, even after dynamic ones (whose head is only an offset).
    ///      WARNING: a selector that moves value registered with `hasAmount = false` is gated at amount 0, so it
    ///      BYPASSES both the per-transaction and the cumulative cap of the mandate while still executing with any
    ///      value. A wrong `amountIndex` gates the wrong number. Whoever owns this contract needs the same care as
    ///      an enforcer.
    /// @param selector The function selector.
    /// @param supported Whether the selector may be executed.
    /// @param hasAmount Whether an amount is read from the calldata (false: gated at amount 0, caps bypassed).
    /// @param amountIndex The 0-based argument position of the uint256 amount.
    function setAction(bytes4 selector, bool supported, bool hasAmount, uint8 amountIndex) external onlyOwner {
        actions[selector] = ActionSpec(supported, hasAmount, amountIndex);
        emit ActionSet(selector, supported, hasAmount, amountIndex);
    }

    /// @inheritdoc IAgentExecutor
    /// @dev Steps: InvalidData if `data` is shorter than 4 bytes; UnsupportedAction if the selector is not supported;
    ///      the amount is read from `data` (InvalidData if too short) or is 0; the action label is the selector
    ///      left-aligned in a bytes32; CannotExecute if `rams.canExecute(msg.sender, principal, target, action,
    ///      amount)` is false; `rams.recordExecution(...)`; then `target.call(data)`, CallFailed(revert data) on
    ///      failure. Not reentrant (ReentrancyGuardReentrantCall).
    function execute(address target, bytes calldata data) external nonReentrant returns (bytes memory) {
        if (data.length < 4) revert InvalidData();
        bytes4 selector = bytes4(data[:4]);
        ActionSpec memory spec = actions[selector];
        if (!spec.supported) revert UnsupportedAction(selector);

        uint256 amount;
        if (spec.hasAmount) {
            uint256 offset = 4 + 32 * uint256(spec.amountIndex);
            if (data.length < offset + 32) revert InvalidData();
            amount = uint256(bytes32(data[offset:offset + 32]));
        }

        bytes32 action = bytes32(selector);
        if (!rams.canExecute(msg.sender, principal, target, action, amount)) {
            revert CannotExecute(msg.sender, target, selector, amount);
        }
        rams.recordExecution(msg.sender, principal, action, amount);

        (bool ok, bytes memory returned) = target.call(data);
        if (!ok) revert CallFailed(returned);
        return returned;
    }
}
