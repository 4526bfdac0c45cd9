// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {Clones} from "@openzeppelin/contracts/proxy/Clones.sol";
import {ISecurityToken} from "./interfaces/ISecurityToken.sol";
import {IStoEscrow} from "./interfaces/IStoEscrow.sol";
import {ITokenFactory} from "./interfaces/ITokenFactory.sol";

/// @title TokenFactory
/// @notice Creates a security token and its offering escrow as EIP-1167 clones of fixed implementations, wires them
///         together and makes the caller the token's tokenizer. Open to anyone: access is controlled off-chain.
contract TokenFactory is ITokenFactory {
    /// @notice An implementation address given to the constructor is zero.
    error ZeroAddress();

    /// @inheritdoc ITokenFactory
    address public immutable tokenImplementation;
    /// @inheritdoc ITokenFactory
    address public immutable escrowImplementation;

    /// @param tokenImplementation_ A deployed (locked) SecurityToken.
    /// @param escrowImplementation_ A deployed (locked) StoEscrow.
    constructor(address tokenImplementation_, address escrowImplementation_) {
        if (tokenImplementation_ == address(0) || escrowImplementation_ == address(0)) revert ZeroAddress();
        tokenImplementation = tokenImplementation_;
        escrowImplementation = escrowImplementation_;
    }

    /// @inheritdoc ITokenFactory
    function newTokenization(TokenizationParams calldata params) external returns (address token, address escrow) {
        token = Clones.clone(tokenImplementation);
        escrow = Clones.clone(escrowImplementation);
        IStoEscrow(escrow).initialize(token);
        ISecurityToken(token).initialize(
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
            params.preMints
        );
        emit TokenCreated(token, msg.sender, escrow, params.symbol);
    }
}
