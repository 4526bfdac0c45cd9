// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {IERC1271} from "@openzeppelin/contracts/interfaces/IERC1271.sol";
import {ECDSA} from "@openzeppelin/contracts/utils/cryptography/ECDSA.sol";

/// @title ERC1271WalletMock
/// @notice Test-only contract wallet that accepts ECDSA signatures made by its `signer` key (ERC-1271).
///         It can hold tokens, so it can act as the `from` of an EIP-3009 authorization.
contract ERC1271WalletMock is IERC1271 {
    /// @notice The EOA whose signatures this wallet accepts.
    address public immutable signer;

    /// @param signer_ The EOA whose signatures this wallet accepts.
    constructor(address signer_) {
        signer = signer_;
    }

    /// @notice Returns the ERC-1271 magic value when `signature` over `hash` was made by `signer`.
    function isValidSignature(bytes32 hash, bytes calldata signature) external view returns (bytes4) {
        (address recovered, ECDSA.RecoverError err, ) = ECDSA.tryRecover(hash, signature);
        return err == ECDSA.RecoverError.NoError && recovered == signer ? this.isValidSignature.selector : bytes4(0);
    }
}
