// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {Strings} from "@openzeppelin/contracts/utils/Strings.sol";
import {ISecurityToken} from "../../contracts/tokenization/interfaces/ISecurityToken.sol";

/// @title InvariantModel
/// @notice What the invariant suite expects, kept apart from the contracts it checks: the actors and their names, who
///         holds which role (from the grants the handlers saw succeed, not from the token), which investor each
///         wallet belongs to, the recoveries and upgrades in flight, every actor's dividend entitlement (ghosts,
///         magnified as the token keeps them), and the violations the handlers observed, by invariant.
/// @dev Written only by the handlers the test registers; read by the handlers and by the invariant functions.
contract InvariantModel {
    using Strings for uint256;

    /// @notice Keys of the violations handlers record; each is checked by the invariant of the same name.
    bytes32 public constant RESTRICTION_CODE = "restrictionCodePredictsOutcome";
    bytes32 public constant ENTITLEMENTS = "entitlementsMoveOnlyByRecovery";
    bytes32 public constant DIVIDENDS_HELD = "tokenHoldsEveryDividend";
    bytes32 public constant ROLE_MATRIX = "noRoleExceedsItsGrant";
    bytes32 public constant FROZEN = "frozenMeansFrozen";
    bytes32 public constant RECOVERY = "recoveryOnlyWithinInvestor";
    bytes32 public constant OFFERING_OWNERSHIP = "offeringPaysItsInvestor";

    uint256 public constant MAGNITUDE = 2 ** 128;

    struct PendingRecovery {
        address newWallet;
        uint256 executableAt;
    }

    struct ScheduledUpgrade {
        address implementation;
        uint256 readyAt;
    }

    address private immutable _deployer;
    mapping(address => bool) public isHandler;

    ISecurityToken public token;

    address[] private _actors;
    mapping(address => string) private _names;
    /// @notice The first holder of each role, whom handlers pick as a likely caller of that role's functions.
    mapping(bytes32 role => address) public designated;
    /// @notice The other key the tokenizer may hand over to; and the platform, owner of the factory.
    address public platform;

    address public tokenizer;
    address public pendingTokenizer;
    mapping(bytes32 role => mapping(address account => bool)) public granted;

    mapping(address wallet => bytes32) public investorOf;
    uint256 public recoveryDelay;
    mapping(address lostWallet => PendingRecovery) private _recoveries;

    mapping(address account => uint256) public magnifiedEntitlement;
    mapping(address account => uint256) public withdrawn;
    uint256 public carriedRemainder;

    /// @notice The investor each wallet was bound to when it first paid into an offering (0: unbound then).
    mapping(uint256 offeringId => mapping(address wallet => bytes32)) public payingInvestor;
    mapping(uint256 offeringId => mapping(address wallet => bool)) public hasPaid;

    mapping(address proxy => ScheduledUpgrade) private _upgrades;
    /// @notice Implementations the handlers may schedule, per proxy (the token's or the escrow's kind).
    mapping(address proxy => address[2]) private _implementations;

    mapping(bytes32 invariantKey => uint256) public violations;
    mapping(bytes32 invariantKey => string) public firstViolation;
    /// @notice Successful calls per action in this run. No invariant reads it: it says what a campaign reached (read
    ///         it from an `afterInvariant()` hook of a test deriving from the suite); the handlers' biases were tuned
    ///         with it.
    mapping(bytes32 action => uint256) public successes;

    error NotHandler(address caller);

    modifier onlyHandler() {
        if (!isHandler[msg.sender] && msg.sender != _deployer) revert NotHandler(msg.sender);
        _;
    }

    constructor() {
        _deployer = msg.sender;
    }

    // ───────────────────────────── setup (the test) ─────────────────────────────

    function setToken(ISecurityToken token_, address tokenizer_, address platform_) external onlyHandler {
        token = token_;
        tokenizer = tokenizer_;
        platform = platform_;
        recoveryDelay = token_.recoveryDelay();
    }

    function addHandler(address handler) external onlyHandler {
        isHandler[handler] = true;
    }

    function addActor(address account, string calldata name, bytes32 investorId) external onlyHandler {
        _actors.push(account);
        _names[account] = name;
        if (investorId != bytes32(0)) investorOf[account] = investorId;
    }

    function designate(bytes32 role, address account) external onlyHandler {
        designated[role] = account;
        if (role != bytes32(0)) granted[role][account] = true;
    }

    function setImplementations(address proxy, address first, address second) external onlyHandler {
        _implementations[proxy] = [first, second];
    }

    // ───────────────────────────── reads ─────────────────────────────

    function actorCount() external view returns (uint256) {
        return _actors.length;
    }

    function actor(uint256 index) external view returns (address) {
        return _actors[index];
    }

    function nameOf(address account) public view returns (string memory) {
        string memory name = _names[account];
        return bytes(name).length != 0 ? name : Strings.toHexString(account);
    }

    /// @notice Whether `account` holds `role` by the model: the tokenizer holds every role, the default admin
    ///         role only it; any other account only what it was granted and not revoked or renounced.
    function holds(bytes32 role, address account) external view returns (bool) {
        if (account == tokenizer) return true;
        return role != bytes32(0) && granted[role][account];
    }

    function pendingRecovery(address lostWallet) external view returns (PendingRecovery memory) {
        return _recoveries[lostWallet];
    }

    function scheduledUpgrade(address proxy) external view returns (ScheduledUpgrade memory) {
        return _upgrades[proxy];
    }

    function implementation(address proxy, uint256 index) external view returns (address) {
        return _implementations[proxy][index % 2];
    }

    /// @notice The dividend `account` has earned in all, by the model: its magnified entitlement over MAGNITUDE.
    function expectedEntitlement(address account) external view returns (uint256) {
        return magnifiedEntitlement[account] / MAGNITUDE;
    }

    // ───────────────────────────── writes (the handlers) ─────────────────────────────

    function fail(bytes32 invariantKey, string calldata detail) external onlyHandler {
        if (violations[invariantKey]++ == 0) firstViolation[invariantKey] = detail;
    }

    function succeeded(bytes32 action) external onlyHandler {
        successes[action]++;
    }

    function setGranted(bytes32 role, address account, bool status) external onlyHandler {
        granted[role][account] = status;
    }

    function setPendingTokenizer(address account) external onlyHandler {
        pendingTokenizer = account;
    }

    function setTokenizer(address account) external onlyHandler {
        tokenizer = account;
        pendingTokenizer = address(0);
    }

    function bind(address wallet, bytes32 investorId) external onlyHandler {
        investorOf[wallet] = investorId;
    }

    function setRecoveryDelay(uint256 delay) external onlyHandler {
        recoveryDelay = delay;
    }

    function setRecovery(address lostWallet, address newWallet, uint256 executableAt) external onlyHandler {
        _recoveries[lostWallet] = PendingRecovery(newWallet, executableAt);
    }

    function clearRecovery(address lostWallet) external onlyHandler {
        delete _recoveries[lostWallet];
    }

    /// @notice A distribution of what arrived, `received`, over `supply`: each actor's entitlement grows by its
    ///         balance times the magnified amount per share; the part that does not divide is carried to the next
    ///         one. Balances are read now (a distribution moves no token).
    function distributed(uint256 received, uint256 supply) external onlyHandler {
        uint256 magnified = received * MAGNITUDE + carriedRemainder;
        uint256 perShare = magnified / supply;
        carriedRemainder = magnified % supply;
        for (uint256 i; i < _actors.length; ++i) {
            address a = _actors[i];
            magnifiedEntitlement[a] += token.balanceOf(a) * perShare;
        }
    }

    function claimed(address holder, uint256 amount) external onlyHandler {
        withdrawn[holder] += amount;
    }

    /// @notice A recovery moves the lost wallet's whole entitlement and withdrawn total to the new wallet.
    function recovered(address lostWallet, address newWallet) external onlyHandler {
        magnifiedEntitlement[newWallet] += magnifiedEntitlement[lostWallet];
        withdrawn[newWallet] += withdrawn[lostWallet];
        delete magnifiedEntitlement[lostWallet];
        delete withdrawn[lostWallet];
    }

    function paid(uint256 offeringId, address wallet) external onlyHandler {
        if (hasPaid[offeringId][wallet]) return;
        hasPaid[offeringId][wallet] = true;
        payingInvestor[offeringId][wallet] = investorOf[wallet];
    }

    function setUpgrade(address proxy, address implementation_, uint256 readyAt) external onlyHandler {
        _upgrades[proxy] = ScheduledUpgrade(implementation_, readyAt);
    }

    function clearUpgrade(address proxy) external onlyHandler {
        delete _upgrades[proxy];
    }
}
