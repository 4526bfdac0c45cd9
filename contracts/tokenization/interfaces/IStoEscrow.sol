// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

/// @title IStoEscrow
/// @notice One escrow per security token; runs that token's offerings one at a time. Investors pay in the token's
///         payment token; tokens are delivered (minted from reserved supply) only after a successful close, and the
///         payment is refunded after a failed one.
///
/// State machine of an offering (`status`):
///   NONE ──newOffering──► PENDING (now < start) ──time──► ACTIVE (start ≤ now < end, hard cap not reached)
///   ACTIVE ──pause──► PAUSED ──unpause──► ACTIVE          (tokenizer only; invest refused while paused)
///   ACTIVE ──end reached or hard cap filled──► ENDED      (awaiting close; anyone may close)
///   PENDING | ACTIVE | PAUSED | ENDED ──close──► COMPLETED (raised ≥ soft cap: tokens claimable, proceeds withdrawable)
///                                          └──► FAILED    (raised < soft cap: payments claimable back)
///   The tokenizer may close at any time; anyone may close once ENDED. No state holds funds without a way out:
///   after a success, an investor who can no longer receive the token (removed from the whitelist, frozen, or
///   recovered to a new wallet) is answered with the token's restriction code, and the tokenizer either delivers its
///   tokens to another wallet bound to the same investor (`redirectClaim`) or pays its investment back to the investor
///   or such a wallet (`refundClaim`). A position is the investor's its wallet was bound to when it first paid: binding
///   the wallet to another investor afterwards does not carry the position with it.
///
/// Pricing: an investor's tokens are computed on its whole position, `floor(invested * tokenAmount / hardCap)`, so two
/// tickets buy what one ticket of their sum buys; the position costs `ceil(tokens * hardCap / tokenAmount)` and the
/// rest of what it paid (less than one token unit's price) is paid back with its claim. Payment tokens are credited by
/// what actually arrived (a fee-on-transfer token's fee is never credited). Close pushes nothing: the tokenizer
/// withdraws the proceeds (`withdrawProceeds`), so a payment token that refuses the tokenizer cannot block claims.
interface IStoEscrow {
    enum Status {
        NONE,
        PENDING,
        ACTIVE,
        PAUSED,
        ENDED,
        COMPLETED,
        FAILED
    }

    /// @notice Stored state of one offering. Amounts in payment-token units unless named otherwise.
    struct Offering {
        uint256 tokenAmount; // token units offered
        uint256 price; // payment units per whole token (10**decimals token units), = hardCap * 10**decimals / tokenAmount
        uint256 softCap;
        uint256 hardCap;
        uint256 minInvestment;
        uint256 maxInvestment; // cumulative per investor
        uint64 startTime;
        uint64 endTime;
        uint256 raised;
        uint256 tokensSold; // token units owed to investors
        bool closed;
        bool succeeded;
        bool paused;
        bool proceedsWithdrawn;
        uint256 proceeds; // what the tokens sold cost: the tokenizer's after a success
    }

    error NotTokenizer(address caller);
    error ZeroAddress();
    /// @notice Only the factory that created this escrow may bind its token.
    error NotFactory(address caller);
    /// @notice The escrow is already bound to `token`.
    error TokenAlreadyBound(address token);
    error OfferingInProgress(uint256 offeringId);
    error InvalidTokenAmount();
    error InvalidCaps(uint256 softCap, uint256 hardCap);
    error InvalidInvestmentLimits(uint256 minInvestment, uint256 maxInvestment);
    error InvalidWindow(uint256 startTime, uint256 endTime);
    error PriceMismatch(uint256 given, uint256 derived);
    error UnknownOffering(uint256 offeringId);
    error OfferingNotStarted(uint256 startTime);
    error OfferingEnded(uint256 endTime);
    error OfferingIsPaused(uint256 offeringId);
    error OfferingNotPaused(uint256 offeringId);
    error OfferingAlreadyClosed(uint256 offeringId);
    error OfferingNotClosed(uint256 offeringId);
    error HardCapReached(uint256 hardCap);
    /// @notice The token is paused: no investment is taken while it is.
    error TokenPaused();
    error ZeroAmount();
    error BelowMinimumInvestment(uint256 amount, uint256 minInvestment);
    error AboveMaximumInvestment(uint256 total, uint256 maxInvestment);
    /// @notice The investor's whole position after this ticket, `amount` payment units, is worth less than one token
    ///         unit: `amount * tokenAmount / hardCap` floors to 0.
    error InvestmentBuysNoTokens(uint256 amount);
    error NotAllowedToClose(address caller);
    error NothingToClaim(address investor);
    error AlreadyClaimed(address investor);
    /// @notice After a success, `investor` cannot receive the token: `restriction` is the token's ERC-1404 code.
    error InvestorCannotReceive(uint256 offeringId, address investor, uint8 restriction);
    /// @notice A claim may be redirected or refunded only for an investor that cannot receive the token.
    error InvestorCanClaim(address investor);
    /// @notice The offering failed: investors claim their refunds themselves.
    error OfferingNotSucceeded(uint256 offeringId);
    /// @notice `recipient` is neither `investor` nor a wallet the token binds to the investor that took the position
    ///         (its wallet's binding when it first invested).
    error NotSameInvestor(address investor, address recipient);
    /// @notice The proceeds of the offering were already withdrawn, or there are none.
    error NothingToWithdraw(uint256 offeringId);

    event OfferingCreated(
        uint256 indexed offeringId,
        uint256 tokenAmount,
        uint256 price,
        uint256 softCap,
        uint256 hardCap,
        uint256 minInvestment,
        uint256 maxInvestment,
        uint64 startTime,
        uint64 endTime
    );
    /// @notice `amount` arrived and was credited, `tokens` more are owed to the investor, `refunded` (the part above the
    ///         hard cap) was never taken.
    event Invested(uint256 indexed offeringId, address indexed investor, uint256 amount, uint256 tokens, uint256 refunded);
    event OfferingPaused(uint256 indexed offeringId, bool paused);
    event OfferingClosed(uint256 indexed offeringId, bool succeeded, uint256 raised, uint256 tokensSold);
    /// @notice `tokens` were delivered and `refund` paid for the position of `investor` (after a success, `refund` is
    ///         what it paid above the price of its tokens).
    event Claimed(uint256 indexed offeringId, address indexed investor, uint256 tokens, uint256 refund);
    /// @notice The tokenizer withdrew the proceeds of a successful offering.
    event ProceedsWithdrawn(uint256 indexed offeringId, address indexed tokenizer, uint256 amount);
    /// @notice The tokenizer resolved the position of `investor`, who could not receive the token: `tokens` were
    ///         delivered to `recipient` (with what it paid above their price), or the investment was paid back to it.
    event ClaimResolved(
        uint256 indexed offeringId,
        address indexed investor,
        address indexed recipient,
        uint256 tokens,
        uint256 refund
    );

    /// @notice One-time setup by the factory through the proxy's constructor: the factory becomes the registry of the
    ///         implementations this escrow may be upgraded to.
    function initialize() external;
    /// @notice Binds the escrow to its token, once, in the tokenization's transaction. Factory only.
    function bindToken(address token_) external;
    function token() external view returns (address);
    function currentOfferingId() external view returns (uint256);
    function offering(uint256 offeringId) external view returns (Offering memory);
    function status(uint256 offeringId) external view returns (Status);
    function invested(uint256 offeringId, address investor) external view returns (uint256);
    function tokensOwed(uint256 offeringId, address investor) external view returns (uint256);
    function claimed(uint256 offeringId, address investor) external view returns (bool);

    function newOffering(
        uint256 tokenAmount,
        uint256 price,
        uint256 softCap,
        uint256 hardCap,
        uint256 minInvestment,
        uint256 maxInvestment,
        uint64 startTime,
        uint64 endTime
    ) external returns (uint256 offeringId);
    function invest(uint256 amount) external;
    function setPaused(bool paused) external;
    function close() external;
    /// @notice After a success, delivers the tokens owed to `investor` and pays back what it paid above their price;
    ///         after a failure, pays its investment back. Anyone may call it for any investor.
    function claim(uint256 offeringId, address investor) external;
    /// @notice Sends the proceeds of a successful offering to the tokenizer. Tokenizer only, once.
    function withdrawProceeds(uint256 offeringId) external;
    /// @notice What `investor` is paid back at its claim after a success: what it paid above its tokens' price.
    function remainderOf(uint256 offeringId, address investor) external view returns (uint256);
    /// @notice After a success, delivers the tokens owed to `investor`, who cannot receive them, to `recipient`: a
    ///         wallet the token binds to the investor that took the position (as bound when it first invested) and
    ///         allows to receive. Tokenizer only.
    function redirectClaim(uint256 offeringId, address investor, address recipient) external;
    /// @notice After a success, pays the investment of `investor`, who cannot receive the token, back to `recipient`
    ///         (the investor, or a wallet the token binds to the investor who paid) and releases its tokens'
    ///         reservation: the price of its tokens from the tokenizer (which approves this escrow on the payment
    ///         token), what it paid above it from the escrow. Tokenizer only.
    function refundClaim(uint256 offeringId, address investor, address recipient) external;
}
