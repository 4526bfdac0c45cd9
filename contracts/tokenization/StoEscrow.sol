// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {ReentrancyGuardTransient} from "@openzeppelin/contracts/utils/ReentrancyGuardTransient.sol";
import {ISecurityToken} from "./interfaces/ISecurityToken.sol";
import {IStoEscrow} from "./interfaces/IStoEscrow.sol";

/// @title StoEscrow
/// @notice Runs the offerings of one security token, one at a time (see the state machine in {IStoEscrow}).
///         Investors pay in the token's payment token; after a successful close the tokenizer receives the funds and
///         investors claim tokens minted from the supply reserved at creation; after a failed close they claim refunds.
/// @dev Used through EIP-1167 clones. The tokenizer and the payment token are read from the token, so the only
///      state written at initialization is the token address.
contract StoEscrow is ReentrancyGuardTransient, IStoEscrow {
    using SafeERC20 for IERC20;

    /// @dev One investor's position in one offering.
    struct Position {
        uint256 invested;
        uint256 tokensOwed;
        bool claimed;
    }

    // One slot: written once by `initialize`, the offering counter is updated in place.
    address private _token;
    uint64 private _currentOfferingId;
    bool private _initialized;

    mapping(uint256 offeringId => Offering) private _offerings;
    mapping(uint256 offeringId => mapping(address investor => Position)) private _positions;

    modifier onlyTokenizer() {
        if (msg.sender != ISecurityToken(_token).tokenizer()) revert NotTokenizer(msg.sender);
        _;
    }

    /// @notice Locks the implementation: only clones can be initialized.
    constructor() {
        _initialized = true;
    }

    /// @inheritdoc IStoEscrow
    function initialize(address token_) external {
        if (_initialized) revert AlreadyInitialized();
        if (token_ == address(0)) revert ZeroAddress();
        _token = token_;
        _initialized = true;
    }

    // ───────────────────────────── views ─────────────────────────────

    /// @inheritdoc IStoEscrow
    function token() external view returns (address) {
        return _token;
    }

    /// @inheritdoc IStoEscrow
    function currentOfferingId() external view returns (uint256) {
        return _currentOfferingId;
    }

    /// @inheritdoc IStoEscrow
    /// @dev Unknown ids return an all-zero offering.
    function offering(uint256 offeringId) external view returns (Offering memory) {
        return _offerings[offeringId];
    }

    /// @inheritdoc IStoEscrow
    function status(uint256 offeringId) external view returns (Status) {
        if (offeringId == 0 || offeringId > _currentOfferingId) return Status.NONE;
        Offering storage o = _offerings[offeringId];
        if (o.closed) return o.succeeded ? Status.COMPLETED : Status.FAILED;
        if (o.paused) return Status.PAUSED;
        if (block.timestamp < o.startTime) return Status.PENDING;
        if (block.timestamp >= o.endTime || o.raised == o.hardCap) return Status.ENDED;
        return Status.ACTIVE;
    }

    /// @inheritdoc IStoEscrow
    function invested(uint256 offeringId, address investor) external view returns (uint256) {
        return _positions[offeringId][investor].invested;
    }

    /// @inheritdoc IStoEscrow
    function tokensOwed(uint256 offeringId, address investor) external view returns (uint256) {
        return _positions[offeringId][investor].tokensOwed;
    }

    /// @inheritdoc IStoEscrow
    function claimed(uint256 offeringId, address investor) external view returns (bool) {
        return _positions[offeringId][investor].claimed;
    }

    // ───────────────────────────── tokenizer ─────────────────────────────

    /// @inheritdoc IStoEscrow
    function newOffering(
        uint256 tokenAmount,
        uint256 price,
        uint256 softCap,
        uint256 hardCap,
        uint256 minInvestment,
        uint256 maxInvestment,
        uint64 startTime,
        uint64 endTime
    ) external onlyTokenizer returns (uint256 offeringId) {
        uint256 current = _currentOfferingId;
        if (current != 0 && !_offerings[current].closed) revert OfferingInProgress(current);
        if (tokenAmount == 0) revert InvalidTokenAmount();
        if (hardCap == 0 || softCap > hardCap) revert InvalidCaps(softCap, hardCap);
        if (maxInvestment == 0 || minInvestment > maxInvestment) {
            revert InvalidInvestmentLimits(minInvestment, maxInvestment);
        }
        if (startTime < block.timestamp || endTime <= startTime) revert InvalidWindow(startTime, endTime);

        ISecurityToken token_ = ISecurityToken(_token);
        uint256 derived = (hardCap * 10 ** token_.decimals()) / tokenAmount;
        if (price != 0 && price != derived) revert PriceMismatch(price, derived);

        offeringId = current + 1;
        _currentOfferingId = uint64(offeringId);
        Offering storage o = _offerings[offeringId];
        o.tokenAmount = tokenAmount;
        o.price = derived;
        o.softCap = softCap;
        o.hardCap = hardCap;
        o.minInvestment = minInvestment;
        o.maxInvestment = maxInvestment;
        o.startTime = startTime;
        o.endTime = endTime;
        emit OfferingCreated(
            offeringId, tokenAmount, derived, softCap, hardCap, minInvestment, maxInvestment, startTime, endTime
        );

        // Trusted call to this escrow's own token; reverts SupplyCapExceeded when the cap has no room.
        token_.reserveSupply(tokenAmount);
    }

    /// @inheritdoc IStoEscrow
    function setPaused(bool paused) external onlyTokenizer {
        uint256 id = _currentOfferingId;
        if (id == 0) revert UnknownOffering(0);
        Offering storage o = _offerings[id];
        if (o.closed) revert OfferingAlreadyClosed(id);
        if (paused && o.paused) revert OfferingIsPaused(id);
        if (!paused && !o.paused) revert OfferingNotPaused(id);
        o.paused = paused;
        emit OfferingPaused(id, paused);
    }

    // ───────────────────────────── investors ─────────────────────────────

    /// @inheritdoc IStoEscrow
    function invest(uint256 amount) external nonReentrant {
        if (amount == 0) revert ZeroAmount();
        (uint256 id, Offering storage o) = _openOffering();
        ISecurityToken token_ = ISecurityToken(_token);
        if (!token_.isWhitelisted(msg.sender)) revert InvestorNotWhitelisted(msg.sender);

        uint256 hardCap = o.hardCap;
        uint256 remaining = hardCap - o.raised;
        if (remaining == 0) revert HardCapReached(hardCap);
        uint256 accepted = amount < remaining ? amount : remaining;
        // The minimum is waived for the last ticket when less than the minimum remains.
        if (accepted < o.minInvestment && remaining >= o.minInvestment) {
            revert BelowMinimumInvestment(amount, o.minInvestment);
        }
        Position storage p = _positions[id][msg.sender];
        uint256 total = p.invested + accepted;
        if (total > o.maxInvestment) revert AboveMaximumInvestment(total, o.maxInvestment);

        // Floor: the whole hard cap buys at most tokenAmount.
        uint256 tokens = (accepted * o.tokenAmount) / hardCap;
        // A ticket buying 0 token units would leave the investor with neither tokens nor money after a success.
        if (tokens == 0) revert InvestmentBuysNoTokens(accepted);
        p.invested = total;
        p.tokensOwed += tokens;
        o.raised += accepted;
        o.tokensSold += tokens;
        emit Invested(id, msg.sender, accepted, tokens, amount - accepted);

        // Only the accepted part is pulled: the excess over the hard cap is never taken.
        IERC20(token_.paymentToken()).safeTransferFrom(msg.sender, address(this), accepted);
    }

    /// @dev The current offering, if it accepts investments right now (hard cap and investor checks aside).
    function _openOffering() private view returns (uint256 id, Offering storage o) {
        id = _currentOfferingId;
        if (id == 0) revert UnknownOffering(0);
        o = _offerings[id];
        if (o.closed) revert OfferingAlreadyClosed(id);
        if (o.paused) revert OfferingIsPaused(id);
        if (block.timestamp < o.startTime) revert OfferingNotStarted(o.startTime);
        if (block.timestamp >= o.endTime) revert OfferingEnded(o.endTime);
    }

    /// @inheritdoc IStoEscrow
    function close() external nonReentrant {
        uint256 id = _currentOfferingId;
        if (id == 0) revert UnknownOffering(0);
        Offering storage o = _offerings[id];
        if (o.closed) revert OfferingAlreadyClosed(id);
        ISecurityToken token_ = ISecurityToken(_token);
        address tokenizer_ = token_.tokenizer();
        uint256 raised = o.raised;
        if (msg.sender != tokenizer_ && block.timestamp < o.endTime && raised < o.hardCap) {
            revert NotAllowedToClose(msg.sender);
        }

        bool succeeded = raised >= o.softCap;
        uint256 tokensSold = o.tokensSold;
        o.closed = true;
        o.succeeded = succeeded;
        emit OfferingClosed(id, succeeded, raised, tokensSold);

        // A failed offering sold nothing: its whole reservation goes back.
        uint256 unreserved = succeeded ? o.tokenAmount - tokensSold : o.tokenAmount;
        if (unreserved != 0) token_.releaseReservedSupply(unreserved);
        if (succeeded && raised != 0) IERC20(token_.paymentToken()).safeTransfer(tokenizer_, raised);
    }

    /// @inheritdoc IStoEscrow
    /// @dev After a success, an investor the token refuses (see {redirectClaim}) is answered with the token's
    ///      restriction code before anything changes.
    function claim(uint256 offeringId, address investor) external nonReentrant {
        if (offeringId == 0 || offeringId > _currentOfferingId) revert UnknownOffering(offeringId);
        Offering storage o = _offerings[offeringId];
        if (!o.closed) revert OfferingNotClosed(offeringId);
        Position storage p = _unclaimedPosition(offeringId, investor);
        p.claimed = true;

        ISecurityToken token_ = ISecurityToken(_token);
        if (o.succeeded) {
            if (!token_.canReceive(investor)) {
                revert InvestorCannotReceive(offeringId, investor, token_.detectTransferRestriction(address(0), investor, 0));
            }
            uint256 tokens = p.tokensOwed;
            emit Claimed(offeringId, investor, tokens, 0);
            // Never 0: invest refuses a ticket that buys no token unit, so invested != 0 implies tokensOwed != 0
            // (and mintReserved reverts on 0 rather than marking a position claimed for nothing).
            token_.mintReserved(investor, tokens);
        } else {
            uint256 amount = p.invested;
            emit Claimed(offeringId, investor, 0, amount);
            IERC20(token_.paymentToken()).safeTransfer(investor, amount);
        }
    }

    /// @inheritdoc IStoEscrow
    function redirectClaim(uint256 offeringId, address investor, address recipient) external nonReentrant onlyTokenizer {
        Position storage p = _refusedPosition(offeringId, investor);
        p.claimed = true;
        uint256 tokens = p.tokensOwed;
        emit Claimed(offeringId, investor, tokens, 0);
        emit ClaimResolved(offeringId, investor, recipient, tokens, 0);
        // The token refuses a recipient that may not receive (ERC7943CannotReceive) or the zero address.
        ISecurityToken(_token).mintReserved(recipient, tokens);
    }

    /// @inheritdoc IStoEscrow
    /// @dev The raised funds went to the tokenizer at close, so the refund comes from the tokenizer.
    function refundClaim(uint256 offeringId, address investor) external nonReentrant onlyTokenizer {
        Position storage p = _refusedPosition(offeringId, investor);
        p.claimed = true;
        uint256 amount = p.invested;
        emit Claimed(offeringId, investor, 0, amount);
        emit ClaimResolved(offeringId, investor, investor, 0, amount);
        ISecurityToken token_ = ISecurityToken(_token);
        token_.releaseReservedSupply(p.tokensOwed);
        IERC20(token_.paymentToken()).safeTransferFrom(msg.sender, investor, amount);
    }

    /// @dev The unclaimed, non-empty position of `investor` in a successful offering, when the token refuses it.
    function _refusedPosition(uint256 offeringId, address investor) private view returns (Position storage p) {
        if (offeringId == 0 || offeringId > _currentOfferingId) revert UnknownOffering(offeringId);
        Offering storage o = _offerings[offeringId];
        if (!o.closed) revert OfferingNotClosed(offeringId);
        if (!o.succeeded) revert OfferingNotSucceeded(offeringId);
        p = _unclaimedPosition(offeringId, investor);
        if (ISecurityToken(_token).canReceive(investor)) revert InvestorCanClaim(investor);
    }

    function _unclaimedPosition(uint256 offeringId, address investor) private view returns (Position storage p) {
        p = _positions[offeringId][investor];
        if (p.claimed) revert AlreadyClaimed(investor);
        if (p.invested == 0) revert NothingToClaim(investor);
    }
}
