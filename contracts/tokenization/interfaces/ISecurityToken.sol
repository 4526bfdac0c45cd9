// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {IERC20Metadata} from "@openzeppelin/contracts/token/ERC20/extensions/IERC20Metadata.sol";
import {IERC1404} from "./IERC1404.sol";
import {IERC7943Fungible} from "./IERC7943Fungible.sol";

/// @title ISecurityToken
/// @notice A permissioned ERC-20 for a tokenized asset: a KYC whitelist enforced on both sides of every transfer, each
///         wallet bound to the investor it belongs to, an optional supply cap, supply reserved for the token's offering
///         escrow, payment-token dividends paid through an accumulated dividend per share, and the issuer controls of
///         a regulated security: ERC-7943 frozen amounts and forced transfers, whole-address freezes, pause, a delayed
///         and cancellable recovery of a lost wallet into another wallet of the same investor, ERC-1404 restriction
///         codes, and roles the tokenizer grants. The tokenizer is the default admin (OpenZeppelin
///         AccessControlDefaultAdminRules): it hands over in two steps and may call every role's functions.
interface ISecurityToken is IERC20Metadata, IERC7943Fungible, IERC1404 {
    /// @notice Static configuration fixed at initialization.
    struct TokenConfig {
        string name;
        string symbol;
        uint8 decimals;
        /// @dev 0 means no cap.
        uint256 supplyCap;
        /// @dev The ERC-20 (USDC/USDT) in which dividends are paid and offerings are priced.
        address paymentToken;
    }

    /// @notice A recovery requested and not yet executed or cancelled.
    struct PendingRecovery {
        address newWallet;
        uint48 executableAt;
    }

    /// @notice The caller is not this token's offering escrow.
    error NotEscrow(address caller);
    /// @notice Minting would take the supply (including supply reserved for the escrow) above the cap.
    error SupplyCapExceeded(uint256 cap, uint256 requestedSupply);
    /// @notice The escrow asked to mint or release more than it has reserved.
    error ReservationExceeded(uint256 reserved, uint256 requested);
    /// @notice Two parallel arrays differ in length.
    error LengthMismatch(uint256 left, uint256 right);
    /// @notice A required address argument is the zero address.
    error ZeroAddress();
    /// @notice An amount argument is zero where that makes no sense.
    error ZeroAmount();
    /// @notice Dividends cannot be distributed while the total supply is zero.
    error NoSupply();
    /// @notice `holder` has no withdrawable dividend.
    error NothingToClaim(address holder);
    /// @notice `holder` is frozen as a whole address: its dividends are held (not forfeited) until it is unfrozen.
    error DividendsHeld(address holder);
    /// @notice Decimals above 18 are not supported.
    error InvalidDecimals(uint8 decimals);
    /// @notice Unfreezing `amount` of `account`, which has only `frozen` frozen.
    error InsufficientFrozenTokens(address account, uint256 frozen, uint256 amount);
    /// @notice `wallet` holds tokens, a frozen amount, unclaimed dividends or a pending recovery, and is bound to
    ///         another investor: its binding cannot change.
    error WalletInUse(address wallet, bytes32 boundTo);
    /// @notice A recovery names the same wallet twice, or the zero address.
    error InvalidRecovery(address lostWallet, address newWallet);
    /// @notice The two wallets of a recovery are not bound to the same investor (or not bound at all).
    error NotSameInvestor(address lostWallet, address newWallet);
    /// @notice `lostWallet` is frozen as a whole address and `newWallet` holds tokens: the freeze would spread to
    ///         them, or (moved as an amount) release the dividends it holds. Recover it into a wallet holding none.
    error FrozenWalletIntoHolder(address lostWallet, address newWallet);
    /// @notice The payment token given at initialization is not a contract.
    error InvalidPaymentToken(address paymentToken);
    /// @notice `lostWallet` holds no balance, frozen amount or unclaimed dividend to recover.
    error NothingToRecover(address lostWallet);
    /// @notice `lostWallet` already has a recovery pending.
    error RecoveryPending(address lostWallet, address newWallet);
    /// @notice `lostWallet` has no recovery pending.
    error NoRecoveryPending(address lostWallet);
    /// @notice The pending recovery of a wallet may be executed only from `executableAt` on.
    error RecoveryNotReady(address lostWallet, uint48 executableAt);
    /// @notice Only the wallet being recovered, or a holder of RECOVERY_ROLE, may cancel its recovery.
    error NotAllowedToCancel(address caller);
    /// @notice A recovery delay outside [MIN_RECOVERY_DELAY, MAX_RECOVERY_DELAY].
    error InvalidRecoveryDelay(uint48 delay);
    /// @notice The tokenizer holds every role without a grant: a role cannot be granted to, revoked from or renounced
    ///         by it (hand the tokenizer over instead).
    error TokenizerHoldsEveryRole(address tokenizer);
    /// @notice `account` already holds `role`.
    error RoleAlreadyHeld(bytes32 role, address account);
    /// @notice `account` does not hold `role`.
    error RoleNotHeld(bytes32 role, address account);

    /// @notice Emitted when `account` joins (true) or leaves (false) the whitelist.
    event WhitelistUpdated(address indexed account, bool status);
    /// @notice `wallet` is bound to `investorId` (0: unbound) by `agent`.
    event InvestorBound(address indexed wallet, bytes32 indexed investorId, address indexed agent);
    /// @notice Emitted when the escrow reserves supply for an offering.
    event SupplyReserved(uint256 amount, uint256 totalReserved);
    /// @notice Emitted when the escrow releases unused reserved supply.
    event ReservationReleased(uint256 amount, uint256 totalReserved);
    /// @notice Emitted on every dividend distribution; `amount` is what arrived and was distributed.
    event DividendsDistributed(address indexed distributor, uint256 amount, uint256 magnifiedDividendPerShare);
    /// @notice Emitted when `holder` withdraws `amount` of the payment token.
    event DividendClaimed(address indexed holder, uint256 amount);
    /// @notice `account` may (`isFrozen` false) or may not (true) send and receive; set by `agent`.
    event AddressFrozen(address indexed account, bool indexed isFrozen, address indexed agent);
    /// @notice `agent` asked to recover `lostWallet` into `newWallet`, executable from `executableAt` on.
    event RecoveryRequested(
        address indexed lostWallet,
        address indexed newWallet,
        uint48 executableAt,
        address indexed agent
    );
    /// @notice The pending recovery of `lostWallet` into `newWallet` was cancelled by `by`.
    event RecoveryCancelled(address indexed lostWallet, address indexed newWallet, address indexed by);
    /// @notice The balance, frozen amount and dividend entitlement of `lostWallet` moved to `newWallet`, by `agent`.
    event RecoverySuccess(address indexed lostWallet, address indexed newWallet, address indexed agent);
    /// @notice The recovery delay is now `delay` seconds (for recoveries requested from now on).
    event RecoveryDelaySet(uint48 delay);

    /// @notice One-time setup by the factory through the proxy's constructor: stores the configuration, makes
    ///         `tokenizer_` the default admin, whitelists `initialHolders[i]`, binds it to `investorIds[i]` (0: unbound)
    ///         and premints `preMints[i]` to it. The caller (the factory) becomes the implementation registry.
    function initialize(
        TokenConfig calldata config,
        address tokenizer_,
        address escrow_,
        address[] calldata initialHolders,
        bytes32[] calldata investorIds,
        uint256[] calldata preMints
    ) external;

    /// @notice The issuer: the default admin, holding every role.
    function tokenizer() external view returns (address);
    function escrow() external view returns (address);
    function paymentToken() external view returns (address);
    function supplyCap() external view returns (uint256);
    /// @notice Supply the escrow has reserved for offerings and not yet minted or released.
    function reservedSupply() external view returns (uint256);
    function isWhitelisted(address account) external view returns (bool);
    /// @notice The investor `wallet` is bound to (0: unbound).
    function investorOf(address wallet) external view returns (bytes32);

    /// @notice Whitelists (`status` true) or removes one account. WHITELISTER_ROLE.
    function setWhitelisted(address account, bool status) external;
    /// @notice Batch form of {setWhitelisted}. WHITELISTER_ROLE.
    function setWhitelistedBatch(address[] calldata accounts, bool[] calldata statuses) external;
    /// @notice Whitelists each wallet and binds it to its investor (an id of 0 leaves its binding as it is).
    ///         A wallet holding anything may not move to another investor ({WalletInUse}). WHITELISTER_ROLE.
    function whitelistInvestors(address[] calldata wallets, bytes32[] calldata investorIds) external;

    /// @notice Mints to a whitelisted account, within the cap net of reserved supply. MINTER_ROLE; not while paused.
    function mint(address to, uint256 amount) external;
    /// @notice Burns `amount` of the caller's own balance. Any holder.
    function burn(uint256 amount) external;

    /// @notice Reserves supply for an offering so later mints cannot starve it. Escrow only.
    function reserveSupply(uint256 amount) external;
    /// @notice Releases unused reserved supply. Escrow only.
    function releaseReservedSupply(uint256 amount) external;
    /// @notice Mints reserved supply to an investor allowed to receive. Escrow only; not while paused.
    function mintReserved(address to, uint256 amount) external;

    /// @notice Pulls `amount` of the payment token from the tokenizer (spender: this token) and distributes what
    ///         arrived (less than `amount` with a fee-on-transfer token) pro rata to current holders. O(1). Tokenizer
    ///         only.
    function distributeDividends(uint256 amount) external;
    /// @notice Sends the caller its withdrawable dividend. O(1). Refused while paused or while the caller is frozen as a
    ///         whole address: the entitlement is kept and claimable later.
    function claimDividends() external returns (uint256 amount);
    function withdrawableDividendOf(address holder) external view returns (uint256);
    function withdrawnDividendOf(address holder) external view returns (uint256);
    function accumulativeDividendOf(address holder) external view returns (uint256);
    function totalDividendsDistributed() external view returns (uint256);

    // ───────────── issuer controls: each needs the role named, which the tokenizer holds implicitly ─────────────

    /// @notice May mint.
    function MINTER_ROLE() external view returns (bytes32);
    /// @notice May whitelist, remove from the whitelist and bind wallets to investors.
    function WHITELISTER_ROLE() external view returns (bytes32);
    /// @notice May freeze and unfreeze addresses and amounts.
    function FREEZER_ROLE() external view returns (bytes32);
    /// @notice May force transfers.
    function ENFORCER_ROLE() external view returns (bytes32);
    /// @notice May request, cancel and execute the recovery of a lost wallet.
    function RECOVERY_ROLE() external view returns (bytes32);
    /// @notice May pause and unpause.
    function PAUSER_ROLE() external view returns (bytes32);

    /// @notice Stops holder transfers, burns, issuance (mints and escrow deliveries) and dividend claims; forced
    ///         transfers and recoveries go on. PAUSER_ROLE.
    function pause() external;
    /// @notice Resumes them. PAUSER_ROLE.
    function unpause() external;
    /// @notice Whether the token is paused.
    function paused() external view returns (bool);

    /// @notice Freezes (`frozen` true) or unfreezes a whole address: it can neither send nor receive, nor claim
    ///         dividends. FREEZER_ROLE.
    function setAddressFrozen(address account, bool frozen) external;
    /// @notice Whether the whole address is frozen.
    function isFrozen(address account) external view returns (bool);
    /// @notice Adds `amount` to the frozen amount of `account`. FREEZER_ROLE.
    function freezePartialTokens(address account, uint256 amount) external;
    /// @notice Takes `amount` off the frozen amount of `account`. FREEZER_ROLE.
    function unfreezePartialTokens(address account, uint256 amount) external;

    /// @notice How long a requested recovery waits before it may be executed (default 48 hours).
    function recoveryDelay() external view returns (uint48);
    /// @notice Sets the recovery delay, within [1 day, 30 days], for recoveries requested from now on. Tokenizer only.
    function setRecoveryDelay(uint48 delay) external;
    /// @notice The recovery pending for `lostWallet` (newWallet 0 when none).
    function pendingRecovery(address lostWallet) external view returns (PendingRecovery memory);
    /// @notice Asks to move everything `lostWallet` holds to `newWallet`, another wallet of the same investor, after
    ///         the recovery delay. RECOVERY_ROLE.
    function requestRecovery(address lostWallet, address newWallet) external;
    /// @notice Cancels the pending recovery of `lostWallet`: by `lostWallet` itself (a wallet that is not lost proves
    ///         it), or by RECOVERY_ROLE.
    function cancelRecovery(address lostWallet) external;
    /// @notice Executes the pending recovery of `lostWallet` once its delay is over: its balance (`ForcedTransfer`),
    ///         frozen amount and unclaimed dividends move to the new wallet, and it leaves the whitelist. An address
    ///         freeze moves with them, so a frozen wallet is recovered only into a wallet holding no tokens
    ///         ({FrozenWalletIntoHolder}). RECOVERY_ROLE, or the new wallet.
    function executeRecovery(address lostWallet) external;

    /// @notice ERC-7943's Last Call draft name for eligibility: `canSend(account) && canReceive(account)`.
    function canTransact(address account) external view returns (bool);
}
