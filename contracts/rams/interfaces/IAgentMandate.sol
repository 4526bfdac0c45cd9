// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {IERC165} from "@openzeppelin/contracts/utils/introspection/IERC165.sol";

/// @title IAgentMandate (ERC-8226, "RAMS" registry)
/// @notice A registry of mandates: a verified principal delegates to an agent a scoped (asset and action labels),
///         time-bounded and value-capped authority. Anything in the agent's execution path asks `canExecute` and
///         records use with `recordExecution`.
/// @dev ERC-165 id: 0x44aef2f5. One mandate per (agent, principal) pair. A cap of type(uint256).max means no cap.
///      Caps count the asset's transfer quantity (base units; 1 per ERC-721 transfer).
interface IAgentMandate is IERC165 {
    /// @notice A stored mandate. The field order is part of the ABI and packs into nine storage slots.
    struct Mandate {
        address agent;
        uint48 validFrom;
        uint48 validUntil;
        address principal;
        bool revoked;
        address complianceProvider;
        bytes32 identityRef;
        address asset;
        uint256 maxTransactionValue;
        uint256 maxCumulativeValue;
        uint256 cumulativeUsed;
        bytes32 metadata;
    }

    /// @notice Arguments of `grantMandate`, in one struct so the call fits the stack.
    /// @param agent Address that receives the authority.
    /// @param validFrom First second at which the mandate is usable.
    /// @param validUntil Last second at which the mandate is usable.
    /// @param principal Address delegating the authority.
    /// @param complianceProvider IComplianceProvider asked about the principal; never the zero address.
    /// @param identityRef Off-chain identity reference of the principal, passed to the provider.
    /// @param asset The one asset the mandate covers.
    /// @param maxTransactionValue Largest amount of a single execution.
    /// @param maxCumulativeValue Largest total of all executions over the mandate's life.
    /// @param metadata Opaque 32-byte pointer to off-chain context (for example a hash of legal text); never enforced.
    /// @param actions Action labels the agent may execute.
    /// @param deadline Last second at which a signature over these parameters is accepted.
    struct GrantMandateParams {
        address agent;
        uint48 validFrom;
        uint48 validUntil;
        address principal;
        address complianceProvider;
        bytes32 identityRef;
        address asset;
        uint256 maxTransactionValue;
        uint256 maxCumulativeValue;
        bytes32 metadata;
        bytes32[] actions;
        uint256 deadline;
    }

    /// @notice A mandate was granted (or re-granted) for the pair.
    /// @param agent The agent.
    /// @param principal The principal.
    /// @param complianceProvider The provider that found the principal eligible.
    /// @param asset The asset covered.
    /// @param validFrom First usable second.
    /// @param validUntil Last usable second.
    /// @param metadata The opaque metadata pointer.
    event MandateGranted(
        address indexed agent,
        address indexed principal,
        address complianceProvider,
        address asset,
        uint48 validFrom,
        uint48 validUntil,
        bytes32 metadata
    );

    /// @notice An action label was enabled while granting a mandate; one event per label.
    /// @param agent The agent.
    /// @param principal The principal.
    /// @param action The enabled label.
    event ActionEnabled(address indexed agent, address indexed principal, bytes32 indexed action);

    /// @notice A mandate was revoked.
    /// @param agent The agent.
    /// @param principal The principal.
    /// @param revokedBy The account that sent the revocation (a relayer on the signature path).
    event MandateRevoked(address indexed agent, address indexed principal, address revokedBy);

    /// @notice A mandate's last usable second was moved later.
    /// @param agent The agent.
    /// @param principal The principal.
    /// @param newValidUntil The new last usable second.
    event MandateExtended(address indexed agent, address indexed principal, uint48 newValidUntil);

    /// @notice A principal approved or disapproved an operator.
    /// @param principal The principal.
    /// @param operator The operator.
    /// @param approved The new approval.
    event OperatorSet(address indexed principal, address indexed operator, bool approved);

    /// @notice An execution was recorded against a mandate.
    /// @param agent The agent.
    /// @param principal The principal.
    /// @param action The executed action label.
    /// @param amount The recorded amount.
    /// @param cumulativeUsed The mandate's total after this execution.
    event ExecutionRecorded(
        address indexed agent, address indexed principal, bytes32 indexed action, uint256 amount, uint256 cumulativeUsed
    );

    /// @notice An enforcer froze an agent.
    /// @param agent The frozen agent.
    /// @param enforcer The enforcer that froze it.
    event AgentFrozen(address indexed agent, address indexed enforcer);

    /// @notice An enforcer lifted an agent's freeze.
    /// @param agent The unfrozen agent.
    /// @param enforcer The enforcer that lifted the freeze.
    event AgentUnfrozen(address indexed agent, address indexed enforcer);

    /// @notice Grants a mandate from `params.principal` to `params.agent`.
    /// @dev With an empty `signature` the caller must be the principal. Otherwise `signature` must be the principal's
    ///      EIP-712 GrantMandate signature (EOA or ERC-1271), and anyone may submit it.
    /// @param params The mandate.
    /// @param signature Empty, or the principal's signature.
    function grantMandate(GrantMandateParams calldata params, bytes calldata signature) external;

    /// @notice Revokes the pair's mandate.
    /// @dev The principal or an approved operator may call with an empty `signature`; anyone may submit the
    ///      principal's EIP-712 RevokeMandate signature.
    /// @param agent The agent.
    /// @param principal The principal.
    /// @param deadline Last second at which the signature is accepted (unused on the direct path).
    /// @param signature Empty, or the principal's signature.
    function revokeMandate(address agent, address principal, uint256 deadline, bytes calldata signature) external;

    /// @notice Moves the pair's last usable second later; the cumulative total is kept.
    /// @dev The principal or an approved operator may call with an empty `signature`; anyone may submit the
    ///      principal's EIP-712 ExtendMandate signature.
    /// @param agent The agent.
    /// @param principal The principal.
    /// @param newValidUntil The new last usable second; must be later than the current one.
    /// @param deadline Last second at which the signature is accepted (unused on the direct path).
    /// @param signature Empty, or the principal's signature.
    function extendMandate(
        address agent,
        address principal,
        uint48 newValidUntil,
        uint256 deadline,
        bytes calldata signature
    ) external;

    /// @notice Freezes `agent`: none of its mandates can be used until it is unfrozen. Enforcers only.
    /// @param agent The agent to freeze.
    function freezeAgent(address agent) external;

    /// @notice Lifts the freeze of `agent`. Enforcers only.
    /// @param agent The agent to unfreeze.
    function unfreezeAgent(address agent) external;

    /// @notice Approves or disapproves `operator` to revoke and extend the principal's mandates.
    /// @dev The principal may call with an empty `signature`; anyone may submit the principal's EIP-712 SetOperator
    ///      signature.
    /// @param principal The principal.
    /// @param operator The operator.
    /// @param approved The new approval.
    /// @param deadline Last second at which the signature is accepted (unused on the direct path).
    /// @param signature Empty, or the principal's signature.
    function setOperator(address principal, address operator, bool approved, uint256 deadline, bytes calldata signature)
        external;

    /// @notice Records an execution by `agent` for `principal`, enforcing the mandate and its caps.
    /// @param agent The agent.
    /// @param principal The principal.
    /// @param action The executed action label.
    /// @param amount The amount, in the asset's base units.
    function recordExecution(address agent, address principal, bytes32 action, uint256 amount) external;

    /// @notice Whether `agent` may execute `action` on `asset` for `principal` at `amount` right now.
    /// @dev One call covers the asset, existence, validity window, revocation, action, freeze and both caps.
    /// @param agent The agent.
    /// @param principal The principal.
    /// @param asset The asset the action targets; must be the mandate's asset.
    /// @param action The action label.
    /// @param amount The amount, in the asset's base units.
    /// @return True when every check passes.
    function canExecute(address agent, address principal, address asset, bytes32 action, uint256 amount)
        external
        view
        returns (bool);

    /// @notice Whether `action` was enabled by the pair's latest grant.
    /// @param agent The agent.
    /// @param principal The principal.
    /// @param action The action label.
    /// @return True when enabled.
    function isActionEnabled(address agent, address principal, bytes32 action) external view returns (bool);

    /// @notice The pair's stored mandate (all zero when none was ever granted).
    /// @param agent The agent.
    /// @param principal The principal.
    /// @return The mandate.
    function getMandate(address agent, address principal) external view returns (Mandate memory);

    /// @notice Whether `operator` is approved by `principal`.
    /// @param principal The principal.
    /// @param operator The operator.
    /// @return True when approved.
    function isOperator(address principal, address operator) external view returns (bool);

    /// @notice Whether `agent` is frozen.
    /// @param agent The agent.
    /// @return True when frozen.
    function isFrozen(address agent) external view returns (bool);

    /// @notice The nonce the principal's next signature must carry.
    /// @param principal The principal.
    /// @return The current nonce.
    function nonces(address principal) external view returns (uint256);

    /// @notice The EIP-712 domain separator (name "RAMS", version "1", this chain, this registry).
    /// @return The domain separator.
    function DOMAIN_SEPARATOR() external view returns (bytes32);
}
