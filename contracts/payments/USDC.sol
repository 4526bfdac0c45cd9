// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";
import {ERC3009} from "@openzeppelin/contracts/token/ERC20/extensions/draft-ERC3009.sol";
import {EIP712} from "@openzeppelin/contracts/utils/cryptography/EIP712.sol";
import {SignatureChecker} from "@openzeppelin/contracts/utils/cryptography/SignatureChecker.sol";
import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";

/// @title USDC
/// @notice Stand-in for Circle's FiatToken v2.2 on local chains and testnets: a 6-decimal ERC-20 with EIP-3009
///         transfer/receive/cancel authorizations using random (unordered) bytes32 nonces, in both the v,r,s form
///         and the v2.2 `bytes signature` form (which also accepts ERC-1271 contract-wallet signatures).
///         The EIP-712 domain is `{ name: "USDC", version: "2" }`, which is what x402 clients sign with.
/// @dev Not a real stablecoin: the owner mints freely and there is no blacklist or pause.
contract USDC is ERC20, EIP712, ERC3009, Ownable {
    /// @notice Deploys the token; the deployer becomes the owner (the only minter).
    constructor() ERC20("USDC", "USDC") EIP712("USDC", "2") Ownable(msg.sender) {}

    /// @notice Token decimals, as for Circle USDC.
    function decimals() public pure override returns (uint8) {
        return 6;
    }

    /// @notice The EIP-712 domain version ("2").
    function version() external view returns (string memory) {
        return _EIP712Version();
    }

    /// @notice The EIP-712 domain separator for the current chain.
    // solhint-disable-next-line func-name-mixedcase
    function DOMAIN_SEPARATOR() external view returns (bytes32) {
        return _domainSeparatorV4();
    }

    /// @notice Mints `amount` to `to`.
    /// @param to The recipient.
    /// @param amount The amount in base units (6 decimals).
    function mint(address to, uint256 amount) external onlyOwner {
        _mint(to, amount);
    }

    /// @notice Executes a transfer signed by `from` (FiatToken v2.2 `bytes signature` form); anyone may submit it.
    /// @param from The payer, who signed the authorization (an EOA or an ERC-1271 contract wallet).
    /// @param to The payee.
    /// @param value The amount in base units.
    /// @param validAfter The authorization is valid strictly after this unix time.
    /// @param validBefore The authorization is valid strictly before this unix time.
    /// @param nonce A unique random nonce chosen by the payer.
    /// @param signature The EIP-712 `TransferWithAuthorization` signature.
    function transferWithAuthorization(
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        bytes memory signature
    ) external {
        bytes32 structHash = keccak256(
            abi.encode(TRANSFER_WITH_AUTHORIZATION_TYPEHASH, from, to, value, validAfter, validBefore, nonce)
        );
        _requireValidSignature(from, structHash, signature);
        _transferWithAuthorization(from, to, value, validAfter, validBefore, nonce);
    }

    /// @notice Executes a transfer signed by `from` (`bytes signature` form); only the payee `to` may submit it,
    ///         which stops front-running of the authorization by a third party.
    /// @param from The payer, who signed the authorization (an EOA or an ERC-1271 contract wallet).
    /// @param to The payee; must be the caller.
    /// @param value The amount in base units.
    /// @param validAfter The authorization is valid strictly after this unix time.
    /// @param validBefore The authorization is valid strictly before this unix time.
    /// @param nonce A unique random nonce chosen by the payer.
    /// @param signature The EIP-712 `ReceiveWithAuthorization` signature.
    function receiveWithAuthorization(
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        bytes memory signature
    ) external {
        if (to != _msgSender()) revert ERC20InvalidReceiver(to);
        bytes32 structHash = keccak256(
            abi.encode(RECEIVE_WITH_AUTHORIZATION_TYPEHASH, from, to, value, validAfter, validBefore, nonce)
        );
        _requireValidSignature(from, structHash, signature);
        _transferWithAuthorization(from, to, value, validAfter, validBefore, nonce);
    }

    /// @notice Cancels an unused authorization of `authorizer` (`bytes signature` form).
    /// @param authorizer The account whose authorization is cancelled (an EOA or an ERC-1271 contract wallet).
    /// @param nonce The nonce of the authorization to cancel.
    /// @param signature The EIP-712 `CancelAuthorization` signature.
    function cancelAuthorization(address authorizer, bytes32 nonce, bytes memory signature) external {
        bytes32 structHash = keccak256(abi.encode(CANCEL_AUTHORIZATION_TYPEHASH, authorizer, nonce));
        _requireValidSignature(authorizer, structHash, signature);
        _cancelAuthorization(authorizer, nonce);
    }

    function _requireValidSignature(address signer, bytes32 structHash, bytes memory signature) private view {
        if (!SignatureChecker.isValidSignatureNow(signer, _hashTypedDataV4(structHash), signature)) {
            revert ERC3009InvalidSignature();
        }
    }
}
