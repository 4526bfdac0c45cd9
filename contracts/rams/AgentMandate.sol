// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {AccessControl} from "@openzeppelin/contracts/access/AccessControl.sol";
import {EIP712} from "@openzeppelin/contracts/utils/cryptography/EIP712.sol";
import {SignatureChecker} from "@openzeppelin/contracts/utils/cryptography/SignatureChecker.sol";
import {IERC165} from "@openzeppelin/contracts/utils/introspection/IERC165.sol";
import {IAgentMandate} from "./interfaces/IAgentMandate.sol";
import {IAgentMandateNonces} from "./interfaces/IAgentMandateNonces.sol";
import {IComplianceProvider} from "./interfaces/IComplianceProvider.sol";

/// @title AgentMandate
/// @notice ERC-8226 ("RAMS") registry. Stores one mandate per (agent, principal), answers `canExecute`, enforces and
///         counts use in `recordExecution`, and lets enforcers freeze agents.
/// @dev Roles: DEFAULT_ADMIN_ROLE (set in the constructor) administers ENFORCER_ROLE (freeze/unfreeze) and
///      RECORDER_ROLE (may record executions for any pair, e.g. an AgentExecutor). No account may hold both the
///      admin and the enforcer role. Lifecycle calls accept either a direct call or the principal's EIP-712
///      signature (domain "RAMS", version "1").
///      Where this registry deliberately differs from the ERC-8226 reference implementation (IAgentMandate's ABI,
///      errors and typehashes unchanged; the one addition is IAgentMandateNonces):
///      - Compliance is enforced at execution, not only at grant: `canExecute` is false and `recordExecution` reverts
///        PrincipalNotEligible when the mandate's compliance provider no longer finds the principal eligible under
///        the mandate's identity reference (revoked, KYC expired, another identity), so a principal revoked at the
///        provider stops every agent at once, whoever calls.
///      - Every lifecycle call consumes the principal's nonce, direct or signed (the reference moves it on the
///        signature path only), so a direct grant, revoke, extend or setOperator, by the principal or an operator,
///        voids every signature the principal gave and has not seen used: a signed but unsubmitted grant cannot
///        revive a mandate revoked since, nor an ExtendMandate signature extend a later mandate of the pair. The
///        nonce therefore moves by one with every MandateGranted, MandateRevoked, MandateExtended and OperatorSet.
///      - A principal can void its outstanding signatures itself (`invalidateNonces`, IAgentMandateNonces).
contract AgentMandate is IAgentMandate, IAgentMandateNonces, AccessControl, EIP712 {
    /// @notice May freeze and unfreeze agents. keccak256("ENFORCER_ROLE").
    bytes32 public constant ENFORCER_ROLE = keccak256("ENFORCER_ROLE");
    /// @notice May call `recordExecution` for any pair. keccak256("RECORDER_ROLE").
    bytes32 public constant RECORDER_ROLE = keccak256("RECORDER_ROLE");

    bytes32 private constant GRANT_MANDATE_TYPEHASH = keccak256(
        "GrantMandate(address agent,uint48 validFrom,uint48 validUntil,address principal,address complianceProvider,"
        "bytes32 identityRef,address asset,uint256 maxTransactionValue,uint256 maxCumulativeValue,bytes32 metadata,"
        "bytes32[] actions,uint256 nonce,uint256 deadline)"
    );
    bytes32 private constant REVOKE_MANDATE_TYPEHASH =
        keccak256("RevokeMandate(address agent,address principal,uint256 nonce,uint256 deadline)");
    bytes32 private constant EXTEND_MANDATE_TYPEHASH =
        keccak256("ExtendMandate(address agent,address principal,uint48 newValidUntil,uint256 nonce,uint256 deadline)");
    bytes32 private constant SET_OPERATOR_TYPEHASH =
        keccak256("SetOperator(address principal,address operator,bool approved,uint256 nonce,uint256 deadline)");

    /// @dev A cap equal to this value means "no cap".
    uint256 private constant UNCAPPED = type(uint256).max;
    /// @dev Largest cumulative cap kept in the packed form (see `StoredMandate`).
    uint256 private constant PACKED_CAP_LIMIT = type(uint128).max;
    /// @dev How far one `invalidateNonces` call may move a nonce, so that no sequence of calls can bring a nonce
    ///      near type(uint256).max, where consuming it would overflow and the principal could act no more.
    uint256 private constant MAX_NONCE_JUMP = type(uint64).max;

    /// @dev How a mandate is kept in storage, laid out for the execution path; `getMandate` rebuilds the interface's
    ///      `Mandate`, so none of this is visible from outside.
    ///      - `agent` and `principal` are the mapping keys and are not stored. A mandate exists when its compliance
    ///        provider is non-zero (`grantMandate` refuses a zero provider).
    ///      - slot 0 holds the asset and the validity window, slot 1 existence, revocation, the cumulative mode and the
    ///        grant generation (see `_enabledIn`): the gate reads both slots and nothing else of the mandate.
    ///      - Cumulative cap and total: when the cap is below 2^128 (`wideCumulative` false), `cumulative` packs the
    ///        cap in its low 128 bits and the total in its high 128 bits (the total never exceeds the cap), so an
    ///        execution reads and writes one slot, and the first execution does not pay for a zero-to-non-zero
    ///        write. Otherwise (a cap of 2^128 or more, including "no cap") `cumulative` is the cap and
    ///        `wideCumulativeUsed` the total.
    struct StoredMandate {
        address asset; // slot 0
        uint48 validFrom; // slot 0
        uint48 validUntil; // slot 0
        address complianceProvider; // slot 1
        bool revoked; // slot 1
        bool wideCumulative; // slot 1
        uint80 generation; // slot 1: how many times the pair was granted
        bytes32 identityRef; // slot 2
        uint256 maxTransactionValue; // slot 3
        uint256 cumulative; // slot 4
        uint256 wideCumulativeUsed; // slot 5, wide mode only
        bytes32 metadata; // slot 6
    }

    mapping(address agent => mapping(address principal => StoredMandate)) private _mandates;
    /// @dev The grant generation in which each label was last enabled for the pair. A label is enabled when this equals
    ///      the pair's current `generation`, so a re-grant switches off every earlier label in O(1) by moving to the
    ///      next generation, with no list to walk.
    mapping(address agent => mapping(address principal => mapping(bytes32 action => uint256 generation)))
        private _enabledIn;
    mapping(address principal => mapping(address operator => bool)) private _operators;
    mapping(address agent => bool) private _frozen;
    mapping(address principal => uint256) private _nonces;

    /// @notice `grantMandate` was given the zero address as compliance provider.
    error ZeroComplianceProvider();
    /// @notice The pair already has a mandate that is neither revoked nor expired.
    error MandateAlreadyActive();
    /// @notice The pair has no mandate to act on (none, revoked, or, for `extendMandate`, expired).
    error NoActiveMandate();
    /// @notice The compliance provider does not find the principal eligible under the identity reference: at grant,
    ///         and (this registry's addition) at every recorded execution.
    error PrincipalNotEligible();
    /// @notice The new end of validity is not in the future, not after the start, or not after the current end.
    error InvalidExpiry();
    /// @notice A call without signature that only the principal may make came from another account.
    error NotPrincipal();
    /// @notice A call without signature came from neither the principal nor one of its approved operators.
    error NotAuthorized();
    /// @notice The signature's deadline has passed.
    error SignatureExpired();
    /// @notice The signature is not the principal's over this operation and the current nonce.
    error InvalidSignature();
    /// @notice `recordExecution` was called by neither the mandate's asset, the principal, nor a RECORDER_ROLE holder.
    error UnauthorizedRecorder();
    /// @notice The mandate does not allow this execution (missing, outside its window, revoked, action off, or frozen).
    error NotExecutable();
    /// @notice The amount is above the mandate's per-transaction cap.
    error ExceedsTransactionCap();
    /// @notice The amount would take the mandate's total above its cumulative cap.
    error ExceedsCumulativeCap();
    /// @notice The role grant would give one account both DEFAULT_ADMIN_ROLE and ENFORCER_ROLE.
    error AdminEnforcerOverlap();

    /// @param admin Receives DEFAULT_ADMIN_ROLE; it must later grant ENFORCER_ROLE to a different account.
    constructor(address admin) EIP712("RAMS", "1") {
        _grantRole(DEFAULT_ADMIN_ROLE, admin);
    }

    // ------------------------------------------------------------------------------------------------ lifecycle

    /// @inheritdoc IAgentMandate
    /// @dev Checks, in order: ZeroComplianceProvider; InvalidExpiry (validUntil <= now or <= validFrom);
    ///      MandateAlreadyActive (existing, not revoked, now <= validUntil); authorization (no signature: caller must
    ///      be the principal, else NotPrincipal, so operators cannot grant; signature: SignatureExpired, then
    ///      InvalidSignature; on either path the nonce is then consumed); PrincipalNotEligible. Then the previous
    ///      grant's actions are switched off (a new generation), the mandate is stored with revoked = false and
    ///      cumulativeUsed = 0, and MandateGranted is emitted followed by one ActionEnabled per entry of
    ///      `params.actions` (duplicates included). An expired or revoked mandate can be re-granted.
    function grantMandate(GrantMandateParams calldata params, bytes calldata signature) external {
        address agent = params.agent;
        address principal = params.principal;
        if (params.complianceProvider == address(0)) revert ZeroComplianceProvider();
        if (params.validUntil <= block.timestamp || params.validUntil <= params.validFrom) revert InvalidExpiry();

        StoredMandate storage m = _mandates[agent][principal];
        if (m.complianceProvider != address(0) && !m.revoked && block.timestamp <= m.validUntil) {
            revert MandateAlreadyActive();
        }

        if (signature.length == 0) {
            if (msg.sender != principal) revert NotPrincipal();
            _useNonce(principal);
        } else {
            _useSignature(principal, _grantStructHash(params), params.deadline, signature);
        }

        (bool eligible, , ) = IComplianceProvider(params.complianceProvider).checkPrincipal(
            principal,
            params.identityRef
        );
        if (!eligible) revert PrincipalNotEligible();

        uint80 generation = m.generation + 1; // earlier labels of the pair are off from here on
        _store(m, params, generation);
        emit MandateGranted(
            agent,
            principal,
            params.complianceProvider,
            params.asset,
            params.validFrom,
            params.validUntil,
            params.metadata
        );
        mapping(bytes32 => uint256) storage enabledIn = _enabledIn[agent][principal];
        bytes32[] calldata actions = params.actions;
        for (uint256 i = 0; i < actions.length; ++i) {
            enabledIn[actions[i]] = generation;
            emit ActionEnabled(agent, principal, actions[i]);
        }
    }

    /// @inheritdoc IAgentMandate
    /// @dev Checks, in order: NoActiveMandate (none, or already revoked; an expired mandate can still be revoked);
    ///      authorization (no signature: principal or approved operator, else NotAuthorized; signature:
    ///      SignatureExpired, InvalidSignature); the principal's nonce is consumed on both paths, an operator's direct
    ///      call included. Emits MandateRevoked with the caller as revokedBy.
    function revokeMandate(address agent, address principal, uint256 deadline, bytes calldata signature) external {
        StoredMandate storage m = _mandates[agent][principal];
        if (m.complianceProvider == address(0) || m.revoked) revert NoActiveMandate();

        if (signature.length == 0) {
            _requirePrincipalOrOperator(principal);
            _useNonce(principal);
        } else {
            bytes32 structHash = keccak256(
                abi.encode(REVOKE_MANDATE_TYPEHASH, agent, principal, _nonces[principal], deadline)
            );
            _useSignature(principal, structHash, deadline, signature);
        }

        m.revoked = true;
        emit MandateRevoked(agent, principal, msg.sender);
    }

    /// @inheritdoc IAgentMandate
    /// @dev Checks, in order: NoActiveMandate (none, revoked, or already expired: now > validUntil); InvalidExpiry
    ///      (newValidUntil <= validUntil); authorization and nonce as in `revokeMandate`. Only validUntil changes:
    ///      cumulativeUsed, caps and actions are kept.
    function extendMandate(
        address agent,
        address principal,
        uint48 newValidUntil,
        uint256 deadline,
        bytes calldata signature
    ) external {
        StoredMandate storage m = _mandates[agent][principal];
        uint48 validUntil = m.validUntil;
        if (m.complianceProvider == address(0) || m.revoked || block.timestamp > validUntil) revert NoActiveMandate();
        if (newValidUntil <= validUntil) revert InvalidExpiry();

        if (signature.length == 0) {
            _requirePrincipalOrOperator(principal);
            _useNonce(principal);
        } else {
            bytes32 structHash = keccak256(
                abi.encode(EXTEND_MANDATE_TYPEHASH, agent, principal, newValidUntil, _nonces[principal], deadline)
            );
            _useSignature(principal, structHash, deadline, signature);
        }

        m.validUntil = newValidUntil;
        emit MandateExtended(agent, principal, newValidUntil);
    }

    /// @inheritdoc IAgentMandate
    /// @dev No signature: the caller must be the principal, else NotPrincipal. Signature: SignatureExpired,
    ///      InvalidSignature. The nonce is consumed on both paths. Emits OperatorSet even when the approval does not
    ///      change.
    function setOperator(
        address principal,
        address operator,
        bool approved,
        uint256 deadline,
        bytes calldata signature
    ) external {
        if (signature.length == 0) {
            if (msg.sender != principal) revert NotPrincipal();
            _useNonce(principal);
        } else {
            bytes32 structHash = keccak256(
                abi.encode(SET_OPERATOR_TYPEHASH, principal, operator, approved, _nonces[principal], deadline)
            );
            _useSignature(principal, structHash, deadline, signature);
        }

        _operators[principal][operator] = approved;
        emit OperatorSet(principal, operator, approved);
    }

    /// @inheritdoc IAgentMandateNonces
    /// @dev Reverts InvalidNewNonce(current, newNonce) unless current < newNonce <= current + 2^64 - 1. Emits
    ///      NoncesInvalidated. Mandates and operators are left as they are: only unused signatures are affected.
    function invalidateNonces(uint256 newNonce) external {
        uint256 current = _nonces[msg.sender];
        if (newNonce <= current || newNonce - current > MAX_NONCE_JUMP) revert InvalidNewNonce(current, newNonce);
        _nonces[msg.sender] = newNonce;
        emit NoncesInvalidated(msg.sender, current, newNonce);
    }

    // ----------------------------------------------------------------------------------------------- enforcement

    /// @inheritdoc IAgentMandate
    /// @dev ENFORCER_ROLE only (AccessControlUnauthorizedAccount otherwise). Applies to every mandate of `agent`.
    function freezeAgent(address agent) external onlyRole(ENFORCER_ROLE) {
        _frozen[agent] = true;
        emit AgentFrozen(agent, msg.sender);
    }

    /// @inheritdoc IAgentMandate
    /// @dev ENFORCER_ROLE only (AccessControlUnauthorizedAccount otherwise).
    function unfreezeAgent(address agent) external onlyRole(ENFORCER_ROLE) {
        _frozen[agent] = false;
        emit AgentUnfrozen(agent, msg.sender);
    }

    /// @inheritdoc IAgentMandate
    /// @dev Checks, in order: UnauthorizedRecorder (the caller is not the mandate's asset, not `principal` and has
    ///      no RECORDER_ROLE); NotExecutable (the same gate as `canExecute`: existence, window, revocation, action,
    ///      freeze); ExceedsTransactionCap; ExceedsCumulativeCap; PrincipalNotEligible (the mandate's compliance
    ///      provider, asked `checkPrincipal(principal, identityRef)` now, does not answer eligible: revoked, KYC
    ///      expired, another identity, or a provider that reverts or answers malformed data). The provider is asked
    ///      last, so a refusal for any other reason costs no external call. The asset itself is not compared here.
    ///      A mandate with no cumulative cap reverts with an arithmetic panic if the total would pass
    ///      type(uint256).max.
    function recordExecution(address agent, address principal, bytes32 action, uint256 amount) external {
        StoredMandate storage m = _mandates[agent][principal];
        if (msg.sender != m.asset && msg.sender != principal && !hasRole(RECORDER_ROLE, msg.sender)) {
            revert UnauthorizedRecorder();
        }
        if (!_usable(m, agent, principal, action)) revert NotExecutable();

        uint256 txCap = m.maxTransactionValue;
        if (txCap != UNCAPPED && amount > txCap) revert ExceedsTransactionCap();
        (uint256 cumulativeCap, uint256 used) = _cumulativeOf(m);
        if (cumulativeCap != UNCAPPED && (used > cumulativeCap || amount > cumulativeCap - used)) {
            revert ExceedsCumulativeCap();
        }
        if (!_eligible(m, principal)) revert PrincipalNotEligible();
        used += amount;
        if (m.wideCumulative) {
            m.wideCumulativeUsed = used;
        } else {
            m.cumulative = cumulativeCap | (used << 128); // used <= cumulativeCap < 2^128
        }
        emit ExecutionRecorded(agent, principal, action, amount, used);
    }

    // ---------------------------------------------------------------------------------------------------- views

    /// @inheritdoc IAgentMandate
    /// @dev False unless: `asset` is the mandate's asset, the mandate exists, validFrom <= now <= validUntil (both
    ///      ends inclusive), it is not revoked, `action` is enabled, the agent is not frozen, each set cap holds, and
    ///      (asked last, as in `recordExecution`) the mandate's compliance provider finds the principal eligible
    ///      under the mandate's identity reference. Never reverts, whatever the provider does.
    function canExecute(
        address agent,
        address principal,
        address asset,
        bytes32 action,
        uint256 amount
    ) external view returns (bool) {
        StoredMandate storage m = _mandates[agent][principal];
        if (asset != m.asset) return false;
        if (!_usable(m, agent, principal, action)) return false;
        uint256 txCap = m.maxTransactionValue;
        if (txCap != UNCAPPED && amount > txCap) return false;
        (uint256 cumulativeCap, uint256 used) = _cumulativeOf(m);
        if (cumulativeCap != UNCAPPED && (used > cumulativeCap || amount > cumulativeCap - used)) return false;
        return _eligible(m, principal);
    }

    /// @inheritdoc IAgentMandate
    /// @dev Reflects the latest grant only: it stays true after that mandate is revoked or expires.
    function isActionEnabled(address agent, address principal, bytes32 action) external view returns (bool) {
        uint256 generation = _mandates[agent][principal].generation;
        return generation != 0 && _enabledIn[agent][principal][action] == generation;
    }

    /// @inheritdoc IAgentMandate
    function getMandate(address agent, address principal) external view returns (Mandate memory) {
        StoredMandate storage m = _mandates[agent][principal];
        Mandate memory none;
        if (m.complianceProvider == address(0)) return none; // never granted: all zero
        (uint256 cumulativeCap, uint256 used) = _cumulativeOf(m);
        return Mandate({
            agent: agent,
            validFrom: m.validFrom,
            validUntil: m.validUntil,
            principal: principal,
            revoked: m.revoked,
            complianceProvider: m.complianceProvider,
            identityRef: m.identityRef,
            asset: m.asset,
            maxTransactionValue: m.maxTransactionValue,
            maxCumulativeValue: cumulativeCap,
            cumulativeUsed: used,
            metadata: m.metadata
        });
    }

    /// @inheritdoc IAgentMandate
    function isOperator(address principal, address operator) external view returns (bool) {
        return _operators[principal][operator];
    }

    /// @inheritdoc IAgentMandate
    function isFrozen(address agent) external view returns (bool) {
        return _frozen[agent];
    }

    /// @inheritdoc IAgentMandate
    function nonces(address principal) external view returns (uint256) {
        return _nonces[principal];
    }

    /// @inheritdoc IAgentMandate
    // solhint-disable-next-line func-name-mixedcase
    function DOMAIN_SEPARATOR() external view returns (bytes32) {
        return _domainSeparatorV4();
    }

    /// @notice ERC-165: true for IAgentMandate (0x44aef2f5), IAgentMandateNonces, IAccessControl and IERC165.
    /// @param interfaceId The interface id to test.
    /// @return True when supported.
    function supportsInterface(bytes4 interfaceId) public view override(AccessControl, IERC165) returns (bool) {
        return
            interfaceId == type(IAgentMandate).interfaceId ||
            interfaceId == type(IAgentMandateNonces).interfaceId ||
            super.supportsInterface(interfaceId);
    }

    // ------------------------------------------------------------------------------------------------- internals

    /// @dev Refuses to let one account hold both the admin and the enforcer role, whichever is granted second.
    ///      Revoking and renouncing go through `_revokeRole` and are not affected.
    function _grantRole(bytes32 role, address account) internal override returns (bool) {
        if (
            (role == ENFORCER_ROLE && hasRole(DEFAULT_ADMIN_ROLE, account)) ||
            (role == DEFAULT_ADMIN_ROLE && hasRole(ENFORCER_ROLE, account))
        ) revert AdminEnforcerOverlap();
        return super._grantRole(role, account);
    }

    /// @dev The gate shared by `canExecute` and `recordExecution`; caps are left to the callers.
    function _usable(
        StoredMandate storage m,
        address agent,
        address principal,
        bytes32 action
    ) private view returns (bool) {
        if (m.complianceProvider == address(0)) return false;
        uint256 nowTs = block.timestamp;
        if (nowTs < m.validFrom || nowTs > m.validUntil) return false;
        if (m.revoked) return false;
        if (_enabledIn[agent][principal][action] != m.generation) return false;
        return !_frozen[agent];
    }

    /// @dev Whether the mandate's compliance provider answers `checkPrincipal(principal, identityRef)` with
    ///      eligible = true. A provider that reverts, has no code, or returns fewer than the three words of the answer
    ///      counts as "not eligible"; only the first word of its answer is read into memory (no return-data bomb).
    function _eligible(StoredMandate storage m, address principal) private view returns (bool eligible) {
        address provider = m.complianceProvider;
        bytes memory query = abi.encodeCall(IComplianceProvider.checkPrincipal, (principal, m.identityRef));
        assembly ("memory-safe") {
            let ok := staticcall(gas(), provider, add(query, 0x20), mload(query), 0x00, 0x20)
            eligible := and(and(ok, gt(returndatasize(), 0x5f)), eq(mload(0x00), 1))
        }
    }

    function _requirePrincipalOrOperator(address principal) private view {
        if (msg.sender != principal && !_operators[principal][msg.sender]) revert NotAuthorized();
    }

    /// @dev The signature path: deadline first, then the principal's signature (EOA via ECDSA, contract via
    ///      ERC-1271) over the typed-data digest, then the nonce moves on so the signature cannot be replayed.
    function _useSignature(address principal, bytes32 structHash, uint256 deadline, bytes calldata signature) private {
        if (block.timestamp > deadline) revert SignatureExpired();
        bytes32 digest = _hashTypedDataV4(structHash);
        if (!SignatureChecker.isValidSignatureNowCalldata(principal, digest, signature)) revert InvalidSignature();
        _useNonce(principal);
    }

    /// @dev Moves the principal's nonce on by one, on every lifecycle call: a signature made for the old nonce is
    ///      spent, or void. Cannot overflow: a nonce only grows by one per call or by at most MAX_NONCE_JUMP.
    function _useNonce(address principal) private {
        unchecked {
            ++_nonces[principal];
        }
    }

    /// @dev Kept apart from `grantMandate` so the fourteen encoded words get their own stack frame.
    function _grantStructHash(GrantMandateParams calldata p) private view returns (bytes32) {
        return
            keccak256(
                abi.encode(
                    GRANT_MANDATE_TYPEHASH,
                    p.agent,
                    p.validFrom,
                    p.validUntil,
                    p.principal,
                    p.complianceProvider,
                    p.identityRef,
                    p.asset,
                    p.maxTransactionValue,
                    p.maxCumulativeValue,
                    p.metadata,
                    keccak256(abi.encodePacked(p.actions)),
                    _nonces[p.principal],
                    p.deadline
                )
            );
    }

    /// @dev Writes a whole mandate; on a re-grant every field is overwritten, `revoked` and `cumulativeUsed` reset.
    function _store(StoredMandate storage m, GrantMandateParams calldata p, uint80 generation) private {
        m.asset = p.asset;
        m.validFrom = p.validFrom;
        m.validUntil = p.validUntil;
        bool wide = p.maxCumulativeValue > PACKED_CAP_LIMIT;
        m.complianceProvider = p.complianceProvider;
        m.revoked = false;
        m.wideCumulative = wide;
        m.generation = generation;
        m.identityRef = p.identityRef;
        m.maxTransactionValue = p.maxTransactionValue;
        m.cumulative = p.maxCumulativeValue; // packed form: cap with a total of 0
        if (wide) m.wideCumulativeUsed = 0; // not read in the packed form, so left as it is there
        m.metadata = p.metadata;
    }

    /// @dev The cumulative cap and total, from whichever form the mandate uses.
    function _cumulativeOf(StoredMandate storage m) private view returns (uint256 cap, uint256 used) {
        uint256 word = m.cumulative;
        if (m.wideCumulative) return (word, m.wideCumulativeUsed);
        return (word & PACKED_CAP_LIMIT, word >> 128);
    }
}
