// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

/// @title IImplementationRegistry
/// @notice Where a proxy learns which implementations it may be upgraded to: the platform publishes a version's
///         implementations (and may withdraw one found faulty); an issuer opts its token into a published one.
interface IImplementationRegistry {
    /// @notice Whether `implementation` is published: a token or escrow may schedule an upgrade to it.
    function isPublished(address implementation) external view returns (bool);
}
