// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// @title PaidRelayDelegate
/// @notice The code the service's relayer account delegates to (EIP-7702). In one transaction the relayer sends to
///         itself, it settles an x402 payment (the payer's signed EIP-3009 `transferWithAuthorization`) and runs the
///         operation that payment pays for, with the relayer as the operation's `msg.sender`, as if it had called the
///         target directly. Both happen or neither does: a reverted operation reverts the payment with it (nothing is
///         charged), and an authorization that cannot be used (expired, already used, bad signature) stops the
///         operation (nothing runs unpaid).
/// @dev Only the delegating account itself can call it (`msg.sender == address(this)`): anyone else calling the
///      relayer's address is refused, so nobody can spend the relayer's balance or make it call anything. The contract
///      keeps no storage (an account's storage is shared by every code it ever delegates to). It also accepts ether and
///      the ERC-721 / ERC-1155 safe transfers an operation may send to its caller (a registry minting to `msg.sender`).
contract PaidRelayDelegate {
    /// @dev `transferWithAuthorization(address,address,uint256,uint256,uint256,bytes32,uint8,bytes32,bytes32)`.
    bytes4 private constant TRANSFER_WITH_AUTHORIZATION_VRS = 0xe3ee160e;
    /// @dev `transferWithAuthorization(address,address,uint256,uint256,uint256,bytes32,bytes)` (FiatToken v2.2).
    bytes4 private constant TRANSFER_WITH_AUTHORIZATION_BYTES = 0xcf092995;
    /// @dev Selector plus the six fixed words every form starts with (from, to, value, validAfter, validBefore, nonce).
    uint256 private constant SETTLEMENT_HEAD = 4 + 6 * 32;

    /// @notice The caller is not the delegating account itself.
    error OnlySelf(address caller);
    /// @notice `settlement` is not an EIP-3009 `transferWithAuthorization` call (either form).
    error NotATransferWithAuthorization(bytes4 selector);
    /// @notice The payment asset or the operation's target has no code.
    error NotAContract(address account);
    /// @notice The payment asset refused the settlement; `reason` is its revert data.
    error SettlementFailed(bytes reason);
    /// @notice The operation reverted; `reason` is its revert data. The settlement is reverted with it.
    error OperationFailed(bytes reason);

    /// @notice A payment settled and the operation it paid for ran, in this transaction.
    /// @param payer The authorization's `from` (who paid).
    /// @param authorizationNonce The authorization's EIP-3009 nonce (unique per payer: a payment settles at most once).
    /// @param target The operation's contract.
    /// @param asset The payment asset.
    event PaidCall(address indexed payer, bytes32 indexed authorizationNonce, address indexed target, address asset);

    /// @notice Settles `settlement` on `asset`, then calls `target` with `data` (and the ether sent), atomically.
    /// @param asset The EIP-3009 payment asset (USDC).
    /// @param settlement The complete calldata of `asset.transferWithAuthorization(...)`, either form.
    /// @param target The operation's contract; it sees this account as `msg.sender`.
    /// @param data The operation's calldata.
    /// @return result What the operation returned.
    function settleAndCall(address asset, bytes calldata settlement, address target, bytes calldata data)
        external
        payable
        returns (bytes memory result)
    {
        if (msg.sender != address(this)) revert OnlySelf(msg.sender);
        bytes4 selector = settlement.length >= 4 ? bytes4(settlement[:4]) : bytes4(0);
        if (
            settlement.length < SETTLEMENT_HEAD
                || (selector != TRANSFER_WITH_AUTHORIZATION_VRS && selector != TRANSFER_WITH_AUTHORIZATION_BYTES)
        ) revert NotATransferWithAuthorization(selector);
        if (asset.code.length == 0) revert NotAContract(asset);
        if (target.code.length == 0) revert NotAContract(target);

        (bool paid, bytes memory paidReason) = asset.call(settlement);
        if (!paid) revert SettlementFailed(paidReason);
        bool ok;
        (ok, result) = target.call{value: msg.value}(data);
        if (!ok) revert OperationFailed(result);

        address payer = address(uint160(uint256(bytes32(settlement[4:36]))));
        emit PaidCall(payer, bytes32(settlement[164:196]), target, asset);
    }

    /// @notice Accepts ether (a zero-value transfer to itself fills a nonce gap).
    receive() external payable {}

    /// @notice Accepts ERC-721 safe transfers and mints.
    function onERC721Received(address, address, uint256, bytes calldata) external pure returns (bytes4) {
        return this.onERC721Received.selector;
    }

    /// @notice Accepts ERC-1155 safe transfers.
    function onERC1155Received(address, address, uint256, uint256, bytes calldata) external pure returns (bytes4) {
        return this.onERC1155Received.selector;
    }

    /// @notice Accepts ERC-1155 safe batch transfers.
    function onERC1155BatchReceived(address, address, uint256[] calldata, uint256[] calldata, bytes calldata)
        external
        pure
        returns (bytes4)
    {
        return this.onERC1155BatchReceived.selector;
    }

    /// @notice ERC-165: the receiver interfaces above.
    function supportsInterface(bytes4 interfaceId) external pure returns (bool) {
        return interfaceId == 0x01ffc9a7 || interfaceId == 0x150b7a02 || interfaceId == 0x4e2312e0;
    }
}
