// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";
import {ERC165} from "@openzeppelin/contracts/utils/introspection/ERC165.sol";
import {IERC165} from "@openzeppelin/contracts/utils/introspection/IERC165.sol";
import {IComplianceProvider} from "./interfaces/IComplianceProvider.sol";

/// @title ComplianceProvider
/// @notice ERC-8226 compliance provider run by a single compliance operator (the owner), who records which
///         principals are eligible, under which identity reference and until when.
contract ComplianceProvider is IComplianceProvider, ERC165, Ownable {
    /// @dev One word per principal: identityRef in its own slot, then expiry, revoked flag and reason packed together.
    struct Eligibility {
        bytes32 identityRef;
        uint48 expiresAt;
        bool revoked;
        ReasonCode reason;
    }

    mapping(address principal => Eligibility) private _eligibility;

    /// @notice `grantPrincipal` was given a zero identity reference.
    error ZeroIdentityRef();

    /// @notice `principal` has no eligibility to revoke: never granted, or already revoked.
    /// @param principal The principal.
    error NotActive(address principal);

    /// @param owner_ The compliance operator, the only account that may grant and revoke.
    constructor(address owner_) Ownable(owner_) {}

    /// @inheritdoc IComplianceProvider
    /// @dev Owner only. Replaces whatever was recorded before, a revoked record included.
    function grantPrincipal(address principal, bytes32 identityRef, uint48 expiresAt) external onlyOwner {
        if (identityRef == bytes32(0)) revert ZeroIdentityRef();
        _eligibility[principal] = Eligibility(identityRef, expiresAt, false, ReasonCode.COMPLIANT);
        emit PrincipalGranted(principal, identityRef);
    }

    /// @inheritdoc IComplianceProvider
    /// @dev Owner only. Reverts NotActive(principal) when nothing was granted or it is already revoked.
    function revokePrincipal(address principal, ReasonCode reason) external onlyOwner {
        Eligibility storage e = _eligibility[principal];
        bytes32 ref = e.identityRef;
        if (ref == bytes32(0) || e.revoked) revert NotActive(principal);
        e.revoked = true;
        e.reason = reason;
        emit PrincipalRevoked(principal, ref, reason);
    }

    /// @inheritdoc IComplianceProvider
    /// @dev Decided in this order: nothing recorded → IDENTITY_NOT_FOUND; revoked → the stored reason; another
    ///      identity reference → IDENTITY_NOT_FOUND; past a non-zero expiry → KYC_EXPIRED with the expiry;
    ///      otherwise COMPLIANT with the expiry (inclusive: eligible at exactly `expiresAt`).
    function checkPrincipal(address principal, bytes32 identityRef)
        external
        view
        returns (bool eligible, ReasonCode reason, uint48 expiresAt)
    {
        Eligibility memory e = _eligibility[principal];
        if (e.identityRef == bytes32(0)) return (false, ReasonCode.IDENTITY_NOT_FOUND, 0);
        if (e.revoked) return (false, e.reason, 0);
        if (e.identityRef != identityRef) return (false, ReasonCode.IDENTITY_NOT_FOUND, 0);
        if (e.expiresAt != 0 && block.timestamp > e.expiresAt) return (false, ReasonCode.KYC_EXPIRED, e.expiresAt);
        return (true, ReasonCode.COMPLIANT, e.expiresAt);
    }

    /// @notice ERC-165: true for IComplianceProvider (0xfa2a39b3) and IERC165.
    /// @param interfaceId The interface id to test.
    /// @return True when supported.
    function supportsInterface(bytes4 interfaceId) public view override(ERC165, IERC165) returns (bool) {
        return interfaceId == type(IComplianceProvider).interfaceId || super.supportsInterface(interfaceId);
    }
}
