// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {IERC165} from "@openzeppelin/contracts/utils/introspection/IERC165.sol";

/// @title IComplianceProvider (ERC-8226)
/// @notice Eligibility oracle consulted by a RAMS registry when a mandate is granted. It answers, for a principal and
///         an identity reference, whether the principal is compliant, why not, and until when the answer holds.
/// @dev ERC-165 id: 0xfa2a39b3.
interface IComplianceProvider is IERC165 {
    /// @notice Why a principal is, or is not, eligible.
    enum ReasonCode {
        COMPLIANT, // 0
        KYC_EXPIRED, // 1
        AML_FLAG, // 2
        NOT_ACCREDITED, // 3
        NOT_QUALIFIED, // 4
        JURISDICTION_BLOCKED, // 5
        IDENTITY_NOT_FOUND, // 6
        ATTESTATION_REVOKED, // 7
        OTHER // 8
    }

    /// @notice A principal became eligible under `identityRef`.
    /// @param principal The principal's on-chain address.
    /// @param identityRef The off-chain identity reference the eligibility is tied to.
    event PrincipalGranted(address indexed principal, bytes32 indexed identityRef);

    /// @notice A principal's eligibility was withdrawn.
    /// @param principal The principal's on-chain address.
    /// @param identityRef The identity reference that was eligible until now.
    /// @param reason Why eligibility was withdrawn.
    event PrincipalRevoked(address indexed principal, bytes32 indexed identityRef, ReasonCode reason);

    /// @notice Makes `principal` eligible under `identityRef`.
    /// @param principal The principal's on-chain address.
    /// @param identityRef Off-chain identity reference (for example the keccak256 of a DID or of an attestation id).
    /// @param expiresAt Time after which the eligibility must be checked again; 0 for no expiry.
    function grantPrincipal(address principal, bytes32 identityRef, uint48 expiresAt) external;

    /// @notice Withdraws the eligibility of `principal`.
    /// @param principal The principal's on-chain address.
    /// @param reason Why eligibility is withdrawn.
    function revokePrincipal(address principal, ReasonCode reason) external;

    /// @notice Tells whether `principal` is eligible under `identityRef`.
    /// @param principal The principal's on-chain address.
    /// @param identityRef The identity reference to check against.
    /// @return eligible True when the principal is compliant.
    /// @return reason COMPLIANT when eligible, otherwise the reason it is not.
    /// @return expiresAt Time after which the answer must be checked again; 0 for no expiry.
    function checkPrincipal(address principal, bytes32 identityRef)
        external
        view
        returns (bool eligible, ReasonCode reason, uint48 expiresAt);
}
