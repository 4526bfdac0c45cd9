// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {IERC20Metadata} from "@openzeppelin/contracts/token/ERC20/extensions/IERC20Metadata.sol";

/// @title ISecurityToken
/// @notice A permissioned ERC-20 for a tokenized asset: one tokenizer role, a KYC whitelist enforced on both sides of
///         every transfer, an optional supply cap, supply reserved for the token's offering escrow, ERC-7943-style
///         transfer-eligibility views, and payment-token dividends paid through an accumulated dividend per share.
interface ISecurityToken is IERC20Metadata {
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
    /// @notice `account` is not whitelisted, so it cannot send tokens.
    error ERC7943CannotSend(address account);
    /// @notice `account` is not whitelisted, so it cannot receive tokens.
    error ERC7943CannotReceive(address account);
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

    /// @notice ERC-7943: whether `account` may send tokens.
    function canSend(address account) external view returns (bool);
    /// @notice ERC-7943: whether `account` may receive tokens.
    function canReceive(address account) external view returns (bool);
    /// @notice ERC-7943: whether `from` may transfer `amount` to `to` right now.
    function canTransfer(address from, address to, uint256 amount) external view returns (bool);
}
