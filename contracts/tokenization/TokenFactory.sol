// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {Ownable, Ownable2Step} from "@openzeppelin/contracts/access/Ownable2Step.sol";
import {ERC1967Proxy} from "@openzeppelin/contracts/proxy/ERC1967/ERC1967Proxy.sol";
import {ISecurityToken} from "./interfaces/ISecurityToken.sol";
import {IStoEscrow} from "./interfaces/IStoEscrow.sol";
import {ITokenFactory} from "./interfaces/ITokenFactory.sol";
import {IImplementationRegistry} from "../upgrades/IImplementationRegistry.sol";

/// @title TokenFactory
/// @notice Creates a security token and its offering escrow behind ERC-1967 proxies of the current implementations,
///         wires them together and makes the caller the token's tokenizer. Open to anyone: access is controlled
///         off-chain. The owner (the platform) publishes new implementations; a token or escrow moves to one only when
///         its tokenizer schedules it and the upgrade delay has passed.
contract TokenFactory is ITokenFactory, Ownable2Step {
    /// @inheritdoc ITokenFactory
    address public tokenImplementation;
    /// @inheritdoc ITokenFactory
    address public escrowImplementation;

    mapping(address implementation => bool) private _published;

    /// @param tokenImplementation_ A deployed (locked) SecurityToken.
    /// @param escrowImplementation_ A deployed (locked) StoEscrow.
    /// @param owner_ Publishes and withdraws implementations (two-step ownership transfer).
    constructor(address tokenImplementation_, address escrowImplementation_, address owner_) Ownable(owner_) {
        _publish(tokenImplementation_, escrowImplementation_);
    }

    /// @inheritdoc ITokenFactory
    /// @dev The escrow's proxy is created (and initialized) first so the token can be initialized with its address;
    ///      the escrow is bound to the token right after, in this transaction, and only this factory may bind it.
    function newTokenization(TokenizationParams calldata params) external returns (address token, address escrow) {
        escrow = address(new ERC1967Proxy(escrowImplementation, abi.encodeCall(IStoEscrow.initialize, ())));
        token = address(
            new ERC1967Proxy(
                tokenImplementation,
                abi.encodeCall(
                    ISecurityToken.initialize,
                    (
                        ISecurityToken.TokenConfig({
                            name: params.name,
                            symbol: params.symbol,
                            decimals: params.decimals,
                            supplyCap: params.supplyCap,
                            paymentToken: params.paymentToken
                        }),
                        msg.sender,
                        escrow,
                        params.initialHolders,
                        params.initialInvestorIds,
                        params.preMints
                    )
                )
            )
        );
        IStoEscrow(escrow).bindToken(token);
        emit TokenCreated(token, msg.sender, escrow, params.symbol);
    }

    /// @inheritdoc ITokenFactory
    function publishImplementations(address tokenImplementation_, address escrowImplementation_) external onlyOwner {
        _publish(tokenImplementation_, escrowImplementation_);
    }

    /// @inheritdoc ITokenFactory
    function withdrawImplementation(address implementation) external onlyOwner {
        if (implementation == tokenImplementation || implementation == escrowImplementation) {
            revert ImplementationInUse(implementation);
        }
        if (!_published[implementation]) revert InvalidImplementation(implementation);
        _published[implementation] = false;
        emit ImplementationWithdrawn(implementation);
    }

    /// @inheritdoc IImplementationRegistry
    function isPublished(address implementation) external view returns (bool) {
        return _published[implementation];
    }

    function _publish(address tokenImplementation_, address escrowImplementation_) private {
        if (tokenImplementation_.code.length == 0) revert InvalidImplementation(tokenImplementation_);
        if (escrowImplementation_.code.length == 0) revert InvalidImplementation(escrowImplementation_);
        tokenImplementation = tokenImplementation_;
        escrowImplementation = escrowImplementation_;
        _published[tokenImplementation_] = true;
        _published[escrowImplementation_] = true;
        emit ImplementationsPublished(tokenImplementation_, escrowImplementation_);
    }
}
