// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {IERC20Metadata} from "@openzeppelin/contracts/token/ERC20/extensions/IERC20Metadata.sol";
import {IERC1404} from "./IERC1404.sol";
import {IERC7943Fungible} from "./IERC7943Fungible.sol";

/// @title ISecurityToken
/// @notice A permissioned ERC-20 for a tokenized asset: one tokenizer, a KYC whitelist enforced on both sides of every
///         transfer, an optional supply cap, supply reserved for the token's offering escrow, payment-token dividends
///         paid through an accumulated dividend per share, and the issuer controls of a regulated security: ERC-7943
///         frozen amounts and forced transfers, whole-address freezes, pause, recovery of a lost wallet, ERC-1404
///         restriction codes, and roles the tokenizer grants to agents (OpenZeppelin AccessControl).
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

    /// @notice The caller is not the tokenizer.
    error NotTokenizer(address caller);
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
    /// @notice Decimals above 18 are not supported.
    error InvalidDecimals(uint8 decimals);
    /// @notice Holders cannot move or burn tokens while the token is paused.
    error EnforcedPause();
    /// @notice `unpause` was called on a token that is not paused.
    error ExpectedPause();
    /// @notice Unfreezing `amount` of `account`, which has only `frozen` frozen.
    error InsufficientFrozenTokens(address account, uint256 frozen, uint256 amount);
    /// @notice A recovery names the same wallet twice, or the zero address.
    error InvalidRecovery(address lostWallet, address newWallet);
    /// @notice `lostWallet` holds no balance, frozen amount or unclaimed dividend to recover.
    error NothingToRecover(address lostWallet);

    /// @notice Emitted when `account` joins (true) or leaves (false) the whitelist.
    event WhitelistUpdated(address indexed account, bool status);
    /// @notice Emitted when the escrow reserves (positive) or releases supply for an offering.
    event SupplyReserved(uint256 amount, uint256 totalReserved);
    /// @notice Emitted when the escrow releases unused reserved supply.
    event ReservationReleased(uint256 amount, uint256 totalReserved);
    /// @notice Emitted on every dividend distribution.
    event DividendsDistributed(address indexed distributor, uint256 amount, uint256 magnifiedDividendPerShare);
    /// @notice Emitted when `holder` withdraws `amount` of the payment token.
    event DividendClaimed(address indexed holder, uint256 amount);
    /// @notice Holder transfers and burns stopped by `account`.
    event Paused(address account);
    /// @notice Holder transfers and burns resumed by `account`.
    event Unpaused(address account);
    /// @notice `account` may (`isFrozen` false) or may not (true) send and receive; set by `agent`.
    event AddressFrozen(address indexed account, bool indexed isFrozen, address indexed agent);
    /// @notice The balance, frozen amount and dividend entitlement of `lostWallet` moved to `newWallet`, by `agent`.
    event RecoverySuccess(address indexed lostWallet, address indexed newWallet, address indexed agent);

    /// @notice One-time setup by the factory on a fresh clone: stores the configuration, whitelists and premints
    ///         `preMints[i]` to `initialHolders[i]`.
    function initialize(
        TokenConfig calldata config,
        address tokenizer_,
        address escrow_,
        address[] calldata initialHolders,
        uint256[] calldata preMints
    ) external;

    function tokenizer() external view returns (address);
    function escrow() external view returns (address);
    function paymentToken() external view returns (address);
    function supplyCap() external view returns (uint256);
    /// @notice Supply the escrow has reserved for offerings and not yet minted or released.
    function reservedSupply() external view returns (uint256);
    function isWhitelisted(address account) external view returns (bool);

    /// @notice Whitelists (`status` true) or blacklists one account. Tokenizer only.
    function setWhitelisted(address account, bool status) external;
    /// @notice Batch form of {setWhitelisted}. Tokenizer only.
    function setWhitelistedBatch(address[] calldata accounts, bool[] calldata statuses) external;

    /// @notice Mints to a whitelisted account. Tokenizer only; respects the cap net of reserved supply.
    function mint(address to, uint256 amount) external;
    /// @notice Burns `amount` of the caller's own balance. Any holder.
    function burn(uint256 amount) external;

    /// @notice Reserves supply for an offering so later tokenizer mints cannot starve it. Escrow only.
    function reserveSupply(uint256 amount) external;
    /// @notice Releases unused reserved supply. Escrow only.
    function releaseReservedSupply(uint256 amount) external;
    /// @notice Mints reserved supply to a whitelisted investor. Escrow only.
    function mintReserved(address to, uint256 amount) external;

    /// @notice Pulls `amount` of the payment token from the tokenizer (spender: this token) and distributes it pro rata
    ///         to current holders. O(1). Tokenizer only.
    function distributeDividends(uint256 amount) external;
    /// @notice Sends the caller its withdrawable dividend. O(1).
    function claimDividends() external returns (uint256 amount);
    function withdrawableDividendOf(address holder) external view returns (uint256);
    function withdrawnDividendOf(address holder) external view returns (uint256);
    function accumulativeDividendOf(address holder) external view returns (uint256);
    function totalDividendsDistributed() external view returns (uint256);

    // ───────────── issuer controls: each needs the role named, which the tokenizer holds implicitly ─────────────

    /// @notice May freeze and unfreeze addresses and amounts.
    function FREEZER_ROLE() external view returns (bytes32);
    /// @notice May force transfers.
    function ENFORCER_ROLE() external view returns (bytes32);
    /// @notice May recover a lost wallet.
    function RECOVERY_ROLE() external view returns (bytes32);
    /// @notice May pause and unpause.
    function PAUSER_ROLE() external view returns (bytes32);

    /// @notice Stops holder transfers and burns (issuance, forced transfers and recoveries go on). PAUSER_ROLE.
    function pause() external;
    /// @notice Resumes holder transfers and burns. PAUSER_ROLE.
    function unpause() external;
    function paused() external view returns (bool);

    /// @notice Freezes (`frozen` true) or unfreezes a whole address: it can neither send nor receive. FREEZER_ROLE.
    function setAddressFrozen(address account, bool frozen) external;
    /// @notice Whether the whole address is frozen.
    function isFrozen(address account) external view returns (bool);
    /// @notice Adds `amount` to the frozen amount of `account`. FREEZER_ROLE.
    function freezePartialTokens(address account, uint256 amount) external;
    /// @notice Takes `amount` off the frozen amount of `account`. FREEZER_ROLE.
    function unfreezePartialTokens(address account, uint256 amount) external;

    /// @notice Moves the whole balance, frozen amount, address freeze and unclaimed dividends of `lostWallet` to
    ///         `newWallet` (which must be allowed to receive), and removes `lostWallet` from the whitelist.
    ///         RECOVERY_ROLE. ERC-3643's third argument (the investor's identity contract) has no counterpart here.
    function recoveryAddress(address lostWallet, address newWallet) external returns (bool);

    /// @notice ERC-7943's Last Call draft name for eligibility: `canSend(account) && canReceive(account)`.
    function canTransact(address account) external view returns (bool);
}
