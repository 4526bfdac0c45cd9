// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {ERC721} from "@openzeppelin/contracts/token/ERC721/ERC721.sol";
import {ERC721URIStorage} from "@openzeppelin/contracts/token/ERC721/extensions/ERC721URIStorage.sol";
import {ERC721Utils} from "@openzeppelin/contracts/token/ERC721/utils/ERC721Utils.sol";
import {EIP712} from "@openzeppelin/contracts/utils/cryptography/EIP712.sol";
import {ECDSA} from "@openzeppelin/contracts/utils/cryptography/ECDSA.sol";
import {IERC1271} from "@openzeppelin/contracts/interfaces/IERC1271.sol";
import {IIdentityRegistry} from "./interfaces/IIdentityRegistry.sol";

/// @title IdentityRegistry
/// @notice ERC-8004 Identity Registry: every agent is an ERC-721 token ("AgentIdentity" / "AGENT") whose token URI
///         is the agent's registration file, with free-form metadata and a verified payment wallet.
///         Plain deployment of the ERC-8004 reference ABI: no proxy, no upgrade path, no admin; the constructor sets
///         everything. Functions, events, revert strings and the EIP-712 domain ("ERC8004IdentityRegistry", "1")
///         match the reference contract (erc-8004/erc-8004-contracts, IdentityRegistryUpgradeable, "2.0.0").
/// @dev Agent ids start at 0. The reserved "agentWallet" metadata key lives in its own address mapping;
///      `getMetadata` serves it as the 20-byte packed address (or "" once cleared), exactly like the reference,
///      which stores those bytes. Registration mints with the ERC-721 receiver check (as `_safeMint` does) but runs
///      that check last, after every state change and event (checks-effects-interactions); without a reentrant
///      receiver the event sequence is identical to the reference.
contract IdentityRegistry is IIdentityRegistry, ERC721URIStorage, EIP712 {
    /// @dev EIP-712 type of the new wallet's consent.
    bytes32 private constant AGENT_WALLET_SET_TYPEHASH =
        keccak256("AgentWalletSet(uint256 agentId,address newWallet,address owner,uint256 deadline)");
    /// @dev The reserved metadata key and its hash.
    string private constant AGENT_WALLET_KEY = "agentWallet";
    bytes32 private constant AGENT_WALLET_KEY_HASH = keccak256(bytes(AGENT_WALLET_KEY));
    /// @dev A wallet signature may be valid for at most this long after the block that uses it.
    uint256 private constant MAX_DEADLINE_DELAY = 5 minutes;

    /// @dev The id the next registration receives.
    uint256 private _nextAgentId;
    /// @dev agentId => verified payment wallet (the "agentWallet" key); zero when cleared.
    mapping(uint256 agentId => address wallet) private _agentWallets;
    /// @dev agentId => key => value, for every key except "agentWallet".
    mapping(uint256 agentId => mapping(string key => bytes value)) private _metadata;

    /// @notice Sets the ERC-721 name/symbol and the EIP-712 domain.
    constructor() ERC721("AgentIdentity", "AGENT") EIP712("ERC8004IdentityRegistry", "1") {}

    // ------------------------------------------------------------------ registration

    /// @inheritdoc IIdentityRegistry
    function register() external returns (uint256 agentId) {
        agentId = _registerAgent("", false);
        _checkReceiver(agentId);
    }

    /// @inheritdoc IIdentityRegistry
    function register(string memory agentURI) external returns (uint256 agentId) {
        agentId = _registerAgent(agentURI, true);
        _checkReceiver(agentId);
    }

    /// @inheritdoc IIdentityRegistry
    function register(string memory agentURI, MetadataEntry[] memory metadata) external returns (uint256 agentId) {
        agentId = _registerAgent(agentURI, true);
        for (uint256 i; i < metadata.length; ++i) {
            _writeMetadata(agentId, metadata[i].metadataKey, metadata[i].metadataValue);
        }
        _checkReceiver(agentId);
    }

    // ------------------------------------------------------------------ metadata and URI

    /// @inheritdoc IIdentityRegistry
    function getMetadata(uint256 agentId, string memory metadataKey) external view returns (bytes memory) {
        if (keccak256(bytes(metadataKey)) == AGENT_WALLET_KEY_HASH) {
            address wallet = _agentWallets[agentId];
            return wallet == address(0) ? bytes("") : abi.encodePacked(wallet);
        }
        return _metadata[agentId][metadataKey];
    }

    /// @inheritdoc IIdentityRegistry
    function setMetadata(uint256 agentId, string memory metadataKey, bytes memory metadataValue) external {
        _requireOwnerOrOperator(agentId);
        _writeMetadata(agentId, metadataKey, metadataValue);
    }

    /// @inheritdoc IIdentityRegistry
    function setAgentURI(uint256 agentId, string calldata newURI) external {
        _requireOwnerOrOperator(agentId);
        _setTokenURI(agentId, newURI);
        emit URIUpdated(agentId, newURI, msg.sender);
    }

    // ------------------------------------------------------------------ agent wallet

    /// @inheritdoc IIdentityRegistry
    function getAgentWallet(uint256 agentId) external view returns (address) {
        return _agentWallets[agentId];
    }

    /// @inheritdoc IIdentityRegistry
    function setAgentWallet(uint256 agentId, address newWallet, uint256 deadline, bytes calldata signature) external {
        address agentOwner = _requireOwnerOrOperator(agentId);
        require(newWallet != address(0), "bad wallet");
        require(block.timestamp <= deadline, "expired");
        require(deadline <= block.timestamp + MAX_DEADLINE_DELAY, "deadline too far");

        bytes32 digest = _hashTypedDataV4(
            keccak256(abi.encode(AGENT_WALLET_SET_TYPEHASH, agentId, newWallet, agentOwner, deadline))
        );
        require(_walletSigned(newWallet, digest, signature), "invalid wallet sig");

        _agentWallets[agentId] = newWallet;
        emit MetadataSet(agentId, AGENT_WALLET_KEY, AGENT_WALLET_KEY, abi.encodePacked(newWallet));
    }

    /// @inheritdoc IIdentityRegistry
    function unsetAgentWallet(uint256 agentId) external {
        _requireOwnerOrOperator(agentId);
        _clearAgentWallet(agentId);
    }

    // ------------------------------------------------------------------ views

    /// @inheritdoc IIdentityRegistry
    function isAuthorizedOrOwner(address spender, uint256 agentId) external view returns (bool) {
        return _isAuthorized(ownerOf(agentId), spender, agentId);
    }

    /// @inheritdoc IIdentityRegistry
    function getVersion() external pure returns (string memory) {
        return "2.0.0";
    }

    // ------------------------------------------------------------------ internals

    /// @dev Every change of owner (not a mint, and there is no burn) drops the verified wallet before the token
    ///      moves, so a new owner starts without one. Emitted even when the wallet was already empty.
    function _update(address to, uint256 tokenId, address auth) internal override returns (address) {
        if (to != address(0) && _ownerOf(tokenId) != address(0)) {
            _clearAgentWallet(tokenId);
        }
        return super._update(to, tokenId, auth);
    }

    /// @dev Mints the next id to the caller, records the caller as agent wallet and emits, in this order,
    ///      Transfer, [MetadataUpdate when `withURI`], Registered, MetadataSet("agentWallet").
    ///      `register()` stores no URI at all (and so emits no MetadataUpdate); `register("")` stores an empty one.
    function _registerAgent(string memory agentURI, bool withURI) private returns (uint256 agentId) {
        agentId = _nextAgentId++;
        _agentWallets[agentId] = msg.sender;
        _mint(msg.sender, agentId);
        if (withURI) _setTokenURI(agentId, agentURI);
        emit Registered(agentId, agentURI, msg.sender);
        emit MetadataSet(agentId, AGENT_WALLET_KEY, AGENT_WALLET_KEY, abi.encodePacked(msg.sender));
    }

    /// @dev The `_safeMint` acceptance check, run once the registration is complete.
    function _checkReceiver(uint256 agentId) private {
        ERC721Utils.checkOnERC721Received(msg.sender, address(0), msg.sender, agentId, "");
    }

    /// @dev Stores a non-reserved metadata value and emits MetadataSet.
    function _writeMetadata(uint256 agentId, string memory key, bytes memory value) private {
        require(keccak256(bytes(key)) != AGENT_WALLET_KEY_HASH, "reserved key");
        _metadata[agentId][key] = value;
        emit MetadataSet(agentId, key, key, value);
    }

    /// @dev Empties the agent wallet and emits MetadataSet("agentWallet", "").
    function _clearAgentWallet(uint256 agentId) private {
        delete _agentWallets[agentId];
        emit MetadataSet(agentId, AGENT_WALLET_KEY, AGENT_WALLET_KEY, "");
    }

    /// @dev Reverts with ERC721NonexistentToken for an unknown agent and "Not authorized" unless the caller is the
    ///      owner, an operator of the owner or the token's approved address. Returns the owner.
    function _requireOwnerOrOperator(uint256 agentId) private view returns (address agentOwner) {
        agentOwner = ownerOf(agentId);
        require(_isAuthorized(agentOwner, msg.sender, agentId), "Not authorized");
    }

    /// @dev True when `signature` over `digest` is an ECDSA signature by `wallet`, else when `wallet` accepts it
    ///      through ERC-1271. ECDSA is tried first whatever the account's code (EIP-7702 delegated EOAs included).
    ///      A 1271 answer is read as a bytes4 from at least 32 returned bytes; a non-canonical bytes4 word makes
    ///      the ABI decoder revert, as in the reference.
    function _walletSigned(address wallet, bytes32 digest, bytes calldata signature) private view returns (bool) {
        (address recovered, ECDSA.RecoverError err, ) = ECDSA.tryRecoverCalldata(digest, signature);
        if (err == ECDSA.RecoverError.NoError && recovered == wallet) return true;

        (bool success, bytes memory answer) = wallet.staticcall(
            abi.encodeCall(IERC1271.isValidSignature, (digest, signature))
        );
        return success && answer.length >= 32 && abi.decode(answer, (bytes4)) == IERC1271.isValidSignature.selector;
    }
}
