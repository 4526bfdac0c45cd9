// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {Math} from "@openzeppelin/contracts/utils/math/Math.sol";
import {ReentrancyGuardTransient} from "@openzeppelin/contracts/utils/ReentrancyGuardTransient.sol";
import {DelayedUpgrades} from "../upgrades/DelayedUpgrades.sol";
import {ISecurityToken} from "./interfaces/ISecurityToken.sol";
import {IStoEscrow} from "./interfaces/IStoEscrow.sol";

/// @title StoEscrow
/// @notice Runs the offerings of one security token, one at a time (see the state machine and the pricing in
///         {IStoEscrow}). Investors pay in the token's payment token; after a successful close investors claim tokens
///         minted from the supply reserved at creation and the tokenizer withdraws the proceeds; after a failed close
///         investors claim refunds.
/// @dev Deployed behind an ERC-1967 proxy by the TokenFactory; upgradeable by the token's tokenizer to an
///      implementation the factory publishes, after {DelayedUpgrades}'s delay. The tokenizer and the payment token
///      are read from the token.
contract StoEscrow is ReentrancyGuardTransient, DelayedUpgrades, IStoEscrow {
    using SafeERC20 for IERC20;

    /// @dev One investor's position in one offering. `investorId` is the investor the token bound the wallet to when
    ///      it first invested: a removed investor's claim is resolved only to wallets of that investor, whatever the
    ///      wallet is bound to later.
    struct Position {
        uint256 invested;
        uint256 tokensOwed;
        bool claimed;
        bytes32 investorId;
    }

    /// @custom:storage-location erc7201:tak.storage.StoEscrow
    struct StoEscrowStorage {
        ISecurityToken token;
        uint64 currentOfferingId;
        mapping(uint256 offeringId => Offering) offerings;
        mapping(uint256 offeringId => mapping(address investor => Position)) positions;
    }

    // keccak256(abi.encode(uint256(keccak256("tak.storage.StoEscrow")) - 1)) & ~bytes32(uint256(0xff))
    bytes32 private constant STORAGE_LOCATION = 0x6adbef71df147f365666a5f14a885bd42b49c02a628d54a8251fcc0acc262d00;

    modifier onlyTokenizer() {
        if (msg.sender != _s().token.tokenizer()) revert NotTokenizer(msg.sender);
        _;
    }

    /// @notice Locks the implementation: only proxies can be initialized.
    /// @custom:oz-upgrades-unsafe-allow constructor
    constructor() {
        _disableInitializers();
    }

    /// @inheritdoc IStoEscrow
    function initialize() external initializer {
        __DelayedUpgrades_init(msg.sender);
    }

    /// @inheritdoc IStoEscrow
    function bindToken(address token_) external {
        if (msg.sender != implementationRegistry()) revert NotFactory(msg.sender);
        if (token_ == address(0)) revert ZeroAddress();
        StoEscrowStorage storage $ = _s();
        if (address($.token) != address(0)) revert TokenAlreadyBound(address($.token));
        $.token = ISecurityToken(token_);
    }

    // ───────────────────────────── views ─────────────────────────────

    /// @inheritdoc IStoEscrow
    function token() external view returns (address) {
        return address(_s().token);
    }

    /// @inheritdoc IStoEscrow
    function currentOfferingId() external view returns (uint256) {
        return _s().currentOfferingId;
    }

    /// @inheritdoc IStoEscrow
    /// @dev Unknown ids return an all-zero offering.
    function offering(uint256 offeringId) external view returns (Offering memory) {
        return _s().offerings[offeringId];
    }

    /// @inheritdoc IStoEscrow
    function status(uint256 offeringId) external view returns (Status) {
        StoEscrowStorage storage $ = _s();
        if (offeringId == 0 || offeringId > $.currentOfferingId) return Status.NONE;
        Offering storage o = $.offerings[offeringId];
        if (o.closed) return o.succeeded ? Status.COMPLETED : Status.FAILED;
        if (o.paused) return Status.PAUSED;
        if (block.timestamp < o.startTime) return Status.PENDING;
        if (block.timestamp >= o.endTime || o.raised == o.hardCap) return Status.ENDED;
        return Status.ACTIVE;
    }

    /// @inheritdoc IStoEscrow
    function invested(uint256 offeringId, address investor) external view returns (uint256) {
        return _s().positions[offeringId][investor].invested;
    }

    /// @inheritdoc IStoEscrow
    function tokensOwed(uint256 offeringId, address investor) external view returns (uint256) {
        return _s().positions[offeringId][investor].tokensOwed;
    }

    /// @inheritdoc IStoEscrow
    function claimed(uint256 offeringId, address investor) external view returns (bool) {
        return _s().positions[offeringId][investor].claimed;
    }

    /// @inheritdoc IStoEscrow
    function remainderOf(uint256 offeringId, address investor) external view returns (uint256) {
        StoEscrowStorage storage $ = _s();
        Position storage p = $.positions[offeringId][investor];
        return p.invested - _cost($.offerings[offeringId], p.tokensOwed);
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
        StoEscrowStorage storage $ = _s();
        uint256 current = $.currentOfferingId;
        if (current != 0 && !$.offerings[current].closed) revert OfferingInProgress(current);
        if (tokenAmount == 0) revert InvalidTokenAmount();
        if (hardCap == 0 || softCap > hardCap) revert InvalidCaps(softCap, hardCap);
        if (maxInvestment == 0 || minInvestment > maxInvestment) {
            revert InvalidInvestmentLimits(minInvestment, maxInvestment);
        }
        if (startTime < block.timestamp || endTime <= startTime) revert InvalidWindow(startTime, endTime);

        ISecurityToken token_ = $.token;
        uint256 derived = Math.mulDiv(hardCap, 10 ** token_.decimals(), tokenAmount);
        if (price != 0 && price != derived) revert PriceMismatch(price, derived);

        offeringId = current + 1;
        $.currentOfferingId = uint64(offeringId);
        Offering storage o = $.offerings[offeringId];
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
        StoEscrowStorage storage $ = _s();
        uint256 id = $.currentOfferingId;
        if (id == 0) revert UnknownOffering(0);
        Offering storage o = $.offerings[id];
        if (o.closed) revert OfferingAlreadyClosed(id);
        if (paused && o.paused) revert OfferingIsPaused(id);
        if (!paused && !o.paused) revert OfferingNotPaused(id);
        o.paused = paused;
        emit OfferingPaused(id, paused);
    }

    /// @inheritdoc IStoEscrow
    function withdrawProceeds(uint256 offeringId) external nonReentrant onlyTokenizer {
        Offering storage o = _closedOffering(offeringId);
        if (!o.succeeded) revert OfferingNotSucceeded(offeringId);
        uint256 amount = o.proceeds;
        if (o.proceedsWithdrawn || amount == 0) revert NothingToWithdraw(offeringId);
        o.proceedsWithdrawn = true;
        emit ProceedsWithdrawn(offeringId, msg.sender, amount);
        IERC20(_s().token.paymentToken()).safeTransfer(msg.sender, amount);
    }

    // ───────────────────────────── investors ─────────────────────────────

    /// @inheritdoc IStoEscrow
    /// @dev Refused while the token is paused and for an investor the token would not deliver to (ERC-7943
    ///      `canReceive`). The accepted part is pulled and what arrived is credited; the position's tokens are
    ///      recomputed on its whole investment.
    function invest(uint256 amount) external nonReentrant {
        if (amount == 0) revert ZeroAmount();
        (uint256 id, Offering storage o) = _openOffering();
        ISecurityToken token_ = _s().token;
        if (token_.paused()) revert TokenPaused();
        if (!token_.canReceive(msg.sender)) {
            revert InvestorCannotReceive(id, msg.sender, token_.detectTransferRestriction(address(0), msg.sender, 0));
        }

        uint256 hardCap = o.hardCap;
        uint256 remaining = hardCap - o.raised;
        if (remaining == 0) revert HardCapReached(hardCap);
        uint256 accepted = amount < remaining ? amount : remaining;
        // The minimum is waived for the last ticket when less than the minimum remains.
        if (accepted < o.minInvestment && remaining >= o.minInvestment) {
            revert BelowMinimumInvestment(amount, o.minInvestment);
        }
        Position storage p = _s().positions[id][msg.sender];
        if (p.invested + accepted > o.maxInvestment) revert AboveMaximumInvestment(p.invested + accepted, o.maxInvestment);
        if (p.invested == 0) p.investorId = token_.investorOf(msg.sender);
        uint256 received = _pull(IERC20(token_.paymentToken()), accepted);
        uint256 tokens = _credit(o, p, received);
        emit Invested(id, msg.sender, received, tokens, amount - accepted);
    }

    /// @dev Adds `received` to the position and the offering, and returns the token units it adds to the position
    ///      (recomputed on the whole investment, so the rounding of earlier tickets is not lost).
    function _credit(Offering storage o, Position storage p, uint256 received) private returns (uint256 added) {
        uint256 total = p.invested + received;
        uint256 owedBefore = p.tokensOwed;
        uint256 owed = Math.mulDiv(total, o.tokenAmount, o.hardCap);
        if (owed == 0) revert InvestmentBuysNoTokens(total);
        added = owed - owedBefore;
        o.proceeds += _cost(o, owed) - _cost(o, owedBefore);
        p.invested = total;
        p.tokensOwed = owed;
        o.raised += received;
        o.tokensSold += added;
    }

    /// @dev Pulls `amount` from the caller and returns what arrived, at most `amount` (a surplus is never credited).
    function _pull(IERC20 paymentToken, uint256 amount) private returns (uint256 received) {
        uint256 before = paymentToken.balanceOf(address(this));
        paymentToken.safeTransferFrom(msg.sender, address(this), amount);
        received = paymentToken.balanceOf(address(this)) - before;
        if (received > amount) received = amount;
    }

    /// @dev The current offering, if it accepts investments right now (hard cap and investor checks aside).
    function _openOffering() private view returns (uint256 id, Offering storage o) {
        StoEscrowStorage storage $ = _s();
        id = $.currentOfferingId;
        if (id == 0) revert UnknownOffering(0);
        o = $.offerings[id];
        if (o.closed) revert OfferingAlreadyClosed(id);
        if (o.paused) revert OfferingIsPaused(id);
        if (block.timestamp < o.startTime) revert OfferingNotStarted(o.startTime);
        if (block.timestamp >= o.endTime) revert OfferingEnded(o.endTime);
    }

    /// @inheritdoc IStoEscrow
    function close() external nonReentrant {
        StoEscrowStorage storage $ = _s();
        uint256 id = $.currentOfferingId;
        if (id == 0) revert UnknownOffering(0);
        Offering storage o = $.offerings[id];
        if (o.closed) revert OfferingAlreadyClosed(id);
        ISecurityToken token_ = $.token;
        uint256 raised = o.raised;
        if (msg.sender != token_.tokenizer() && block.timestamp < o.endTime && raised < o.hardCap) {
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
    }

    /// @inheritdoc IStoEscrow
    /// @dev After a success, an investor the token refuses (see {redirectClaim}) is answered with the token's
    ///      restriction code before anything changes; a paused token refuses the delivery (EnforcedPause).
    function claim(uint256 offeringId, address investor) external nonReentrant {
        Offering storage o = _closedOffering(offeringId);
        Position storage p = _unclaimedPosition(offeringId, investor);
        p.claimed = true;

        ISecurityToken token_ = _s().token;
        IERC20 paymentToken = IERC20(token_.paymentToken());
        if (o.succeeded) {
            if (!token_.canReceive(investor)) {
                revert InvestorCannotReceive(offeringId, investor, token_.detectTransferRestriction(address(0), investor, 0));
            }
            uint256 tokens = p.tokensOwed;
            uint256 remainder = p.invested - _cost(o, tokens);
            emit Claimed(offeringId, investor, tokens, remainder);
            // Never 0: invest refuses a position that buys no token unit.
            token_.mintReserved(investor, tokens);
            if (remainder != 0) paymentToken.safeTransfer(investor, remainder);
        } else {
            uint256 amount = p.invested;
            emit Claimed(offeringId, investor, 0, amount);
            paymentToken.safeTransfer(investor, amount);
        }
    }

    /// @inheritdoc IStoEscrow
    function redirectClaim(uint256 offeringId, address investor, address recipient) external nonReentrant onlyTokenizer {
        (Offering storage o, Position storage p) = _refusedPosition(offeringId, investor);
        _requireSameInvestor(p, investor, recipient);
        p.claimed = true;
        uint256 tokens = p.tokensOwed;
        uint256 remainder = p.invested - _cost(o, tokens);
        emit Claimed(offeringId, investor, tokens, remainder);
        emit ClaimResolved(offeringId, investor, recipient, tokens, remainder);
        ISecurityToken token_ = _s().token;
        // The token refuses a recipient that may not receive (ERC7943CannotReceive).
        token_.mintReserved(recipient, tokens);
        if (remainder != 0) IERC20(token_.paymentToken()).safeTransfer(recipient, remainder);
    }

    /// @inheritdoc IStoEscrow
    function refundClaim(uint256 offeringId, address investor, address recipient) external nonReentrant onlyTokenizer {
        (Offering storage o, Position storage p) = _refusedPosition(offeringId, investor);
        if (recipient != investor) _requireSameInvestor(p, investor, recipient);
        p.claimed = true;
        uint256 amount = p.invested;
        uint256 cost = _cost(o, p.tokensOwed);
        emit Claimed(offeringId, investor, 0, amount);
        emit ClaimResolved(offeringId, investor, recipient, 0, amount);
        ISecurityToken token_ = _s().token;
        token_.releaseReservedSupply(p.tokensOwed);
        IERC20 paymentToken = IERC20(token_.paymentToken());
        paymentToken.safeTransferFrom(msg.sender, recipient, cost);
        if (amount != cost) paymentToken.safeTransfer(recipient, amount - cost);
    }

    /// @dev What `tokens` token units of offering `o` cost: rounded up, and never more than the investment that
    ///      bought them (tokens = floor(invested * tokenAmount / hardCap)).
    function _cost(Offering storage o, uint256 tokens) private view returns (uint256) {
        if (tokens == 0) return 0;
        return Math.mulDiv(tokens, o.hardCap, o.tokenAmount, Math.Rounding.Ceil);
    }

    /// @dev `recipient` is bound to the investor the position was taken by.
    function _requireSameInvestor(Position storage p, address investor, address recipient) private view {
        bytes32 id = p.investorId;
        if (recipient == address(0) || id == bytes32(0) || _s().token.investorOf(recipient) != id) {
            revert NotSameInvestor(investor, recipient);
        }
    }

    function _closedOffering(uint256 offeringId) private view returns (Offering storage o) {
        StoEscrowStorage storage $ = _s();
        if (offeringId == 0 || offeringId > $.currentOfferingId) revert UnknownOffering(offeringId);
        o = $.offerings[offeringId];
        if (!o.closed) revert OfferingNotClosed(offeringId);
    }

    /// @dev The unclaimed, non-empty position of `investor` in a successful offering, when the token refuses it.
    function _refusedPosition(
        uint256 offeringId,
        address investor
    ) private view returns (Offering storage o, Position storage p) {
        o = _closedOffering(offeringId);
        if (!o.succeeded) revert OfferingNotSucceeded(offeringId);
        p = _unclaimedPosition(offeringId, investor);
        if (_s().token.canReceive(investor)) revert InvestorCanClaim(investor);
    }

    function _unclaimedPosition(uint256 offeringId, address investor) private view returns (Position storage p) {
        p = _s().positions[offeringId][investor];
        if (p.claimed) revert AlreadyClaimed(investor);
        if (p.invested == 0) revert NothingToClaim(investor);
    }

    /// @inheritdoc DelayedUpgrades
    function upgradeKind() public pure override returns (bytes32) {
        return keccak256("tak.StoEscrow");
    }

    /// @dev Upgrades are the token's tokenizer's.
    function _checkUpgrader() internal view override {
        if (msg.sender != _s().token.tokenizer()) revert NotTokenizer(msg.sender);
    }

    function _s() private pure returns (StoEscrowStorage storage $) {
        assembly ("memory-safe") {
            $.slot := STORAGE_LOCATION
        }
    }
}
