// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {Strings} from "@openzeppelin/contracts/utils/Strings.sol";
import {IStoEscrow} from "../../../contracts/tokenization/interfaces/IStoEscrow.sol";
import {HandlerBase, System} from "./handler-base.sol";
import {vm} from "../base/vm.sol";

/// @title OfferingHandler
/// @notice Offerings one after another (at most MAX_OFFERINGS per run): created by the tokenizer with bounded terms,
///         invested in by the wallets (funded as they go, in a payment token that may take a fee or blacklist),
///         paused, closed (early only by the tokenizer), claimed by anyone for any investor, proceeds withdrawn, and
///         the claims of investors the token refuses redirected or refunded by the tokenizer. A delivery or refund
///         must reach the investor who paid (the identity its wallet was bound to when it paid).
contract OfferingHandler is HandlerBase {
    using Strings for uint256;

    uint256 public constant MAX_OFFERINGS = 6;

    constructor(System memory s) HandlerBase(s) {}

    function newOffering(uint256 callerSeed, uint256 termsSeed) external {
        if (escrow.currentOfferingId() >= MAX_OFFERINGS) return;
        address caller = _issuer(callerSeed);
        uint256 committed = token.totalSupply() + token.reservedSupply();
        uint256 room = token.supplyCap() > committed ? token.supplyCap() - committed : 0;
        uint256 tokenAmount = _bound(_word(termsSeed, 0), 1, room < 5_000 ? room + 10 : 5_000);
        uint256 hardCap = _bound(_word(termsSeed, 1), 1, 1e9);
        uint256 softCap = _bound(_word(termsSeed, 2), 0, hardCap / 4);
        uint256 minInvestment = _bound(_word(termsSeed, 3), 0, hardCap / 4);
        uint256 maxInvestment = _bound(_word(termsSeed, 4), minInvestment == 0 ? 1 : minInvestment, hardCap);
        uint256 startSeed = _word(termsSeed, 5);
        uint64 start = uint64(block.timestamp + (startSeed % 2 == 0 ? 0 : _bound(startSeed >> 1, 1, 1 days)));
        uint64 end = uint64(start + _bound(_word(termsSeed, 6), 1 hours, 10 days));
        bool allowed = model.holds(DEFAULT_ADMIN, caller);
        bool ok;
        vm.prank(caller);
        try escrow.newOffering(tokenAmount, 0, softCap, hardCap, minInvestment, maxInvestment, start, end) {
            ok = true;
        } catch {}
        _checkAllowed("newOffering", caller, ok, allowed);
    }

    /// @notice Investing also checks that the escrow takes money only from a wallet the token would deliver to. Three
    ///         times in four the amount is within the offering's limits for this investor, else anything up to half
    ///         the hard cap.
    function invest(uint256 investorSeed, uint256 amountSeed) external {
        address investor = _holder(investorSeed);
        uint256 id = escrow.currentOfferingId();
        IStoEscrow.Offering memory o = escrow.offering(id);
        uint256 room =
            o.maxInvestment > escrow.invested(id, investor) ? o.maxInvestment - escrow.invested(id, investor) : 0;
        uint256 amount = amountSeed % 4 != 0 && room != 0
            ? _bound(amountSeed >> 2, o.minInvestment, room)
            : _bound(amountSeed >> 2, 0, o.hardCap / 2 + 10);
        _fund(investor, amount);
        vm.prank(investor);
        usd.approve(address(escrow), amount);
        bool eligible = token.canReceive(investor);
        vm.prank(investor);
        try escrow.invest(amount) {
            model.succeeded("invest");
            model.paid(id, investor);
            if (!eligible) {
                _fail(model.OFFERING_OWNERSHIP(), string.concat("took money from ", model.nameOf(investor)));
            }
        } catch {}
    }

    /// @notice Pauses one time in four, else resumes.
    function setOfferingPaused(uint256 callerSeed, uint256 pauseSeed) external {
        address caller = _issuer(callerSeed);
        bool paused = pauseSeed % 4 == 0;
        bool allowed = model.holds(DEFAULT_ADMIN, caller);
        bool ok;
        vm.prank(caller);
        try escrow.setPaused(paused) {
            ok = true;
        } catch {}
        _checkAllowed("setOfferingPaused", caller, ok, allowed);
    }

    /// @notice Anyone may close after the end or at the hard cap; before that only the tokenizer (which tries one
    ///         time in eight, so that offerings stay open long enough to be invested in).
    function close(uint256 callerSeed) external {
        address caller = callerSeed % 8 == 0 ? model.tokenizer() : _actor(callerSeed >> 3);
        IStoEscrow.Offering memory o = escrow.offering(escrow.currentOfferingId());
        bool allowed = model.holds(DEFAULT_ADMIN, caller) || block.timestamp >= o.endTime || o.raised >= o.hardCap;
        bool ok;
        vm.prank(caller);
        try escrow.close() {
            ok = true;
        } catch {}
        _checkAllowed("close", caller, ok, allowed);
    }

    /// @notice After a success the investor receives exactly the tokens it is owed; after a failure its money back.
    function claim(uint256 callerSeed, uint256 offeringSeed, uint256 investorSeed) external {
        address caller = _actor(callerSeed);
        uint256 id = _offering(offeringSeed);
        address investor = investorSeed % 2 == 0 ? _investor(id, investorSeed >> 1) : _holder(investorSeed >> 1);
        uint256 owed = escrow.tokensOwed(id, investor);
        uint256 balance = token.balanceOf(investor);
        vm.prank(caller);
        try escrow.claim(id, investor) {
            model.succeeded("claim");
            if (escrow.offering(id).succeeded && token.balanceOf(investor) != balance + owed) {
                _fail(model.OFFERING_OWNERSHIP(), string.concat(model.nameOf(investor), " did not get its tokens"));
            }
        } catch {}
    }

    function withdrawProceeds(uint256 callerSeed, uint256 offeringSeed) external {
        address caller = _issuer(callerSeed);
        uint256 id = _offering(offeringSeed);
        bool allowed = model.holds(DEFAULT_ADMIN, caller);
        bool ok;
        vm.prank(caller);
        try escrow.withdrawProceeds(id) {
            ok = true;
        } catch {}
        _checkAllowed("withdrawProceeds", caller, ok, allowed);
    }

    function redirectClaim(uint256 callerSeed, uint256 offeringSeed, uint256 investorSeed, uint256 recipientSeed)
        external
    {
        address caller = _issuer(callerSeed);
        uint256 id = _offering(offeringSeed);
        address investor = _investor(id, investorSeed);
        address recipient = recipientSeed % 2 == 0 ? _sibling(investor) : _holder(recipientSeed >> 1);
        bool allowed = model.holds(DEFAULT_ADMIN, caller);
        bool ok;
        vm.prank(caller);
        try escrow.redirectClaim(id, investor, recipient) {
            ok = true;
        } catch {}
        _checkAllowed("redirectClaim", caller, ok, allowed);
        if (ok) _checkOwnRecipient("redirectClaim", id, investor, recipient);
    }

    /// @notice The tokenizer is funded with the price of the investor's tokens and approves the escrow for it.
    function refundClaim(uint256 callerSeed, uint256 offeringSeed, uint256 investorSeed, uint256 recipientSeed)
        external
    {
        address caller = _issuer(callerSeed);
        uint256 id = _offering(offeringSeed);
        address investor = _investor(id, investorSeed);
        uint256 pick = recipientSeed % 3;
        address recipient = pick == 0 ? investor : pick == 1 ? _sibling(investor) : _holder(recipientSeed / 3);
        uint256 cost = escrow.invested(id, investor) - escrow.remainderOf(id, investor);
        _fund(caller, cost);
        vm.prank(caller);
        usd.approve(address(escrow), cost);
        bool allowed = model.holds(DEFAULT_ADMIN, caller);
        bool ok;
        vm.prank(caller);
        try escrow.refundClaim(id, investor, recipient) {
            ok = true;
        } catch {}
        _checkAllowed("refundClaim", caller, ok, allowed);
        if (ok && recipient != investor) _checkOwnRecipient("refundClaim", id, investor, recipient);
    }

    /// @notice What a tokenizer (holding every role) might try to hand an investor's unclaimed position to another
    ///         investor: bind the position's wallet to that investor, take it off the whitelist, then redirect or refund
    ///         the position to one of that investor's wallets. Each step is an ordinary call that may be refused; a
    ///         delivery that succeeds is checked like any other.
    function rebindAndResolve(uint256 offeringSeed, uint256 walletSeed, uint256 investorSeed, bool refund) external {
        address tokenizer = model.tokenizer();
        uint256 id = _offering(offeringSeed);
        address wallet = _investor(id, walletSeed);
        bytes32 other = [bytes32("investor-a"), bytes32("investor-b"), bytes32("investor-c")][investorSeed % 3];
        address[] memory wallets = new address[](1);
        bytes32[] memory ids = new bytes32[](1);
        (wallets[0], ids[0]) = (wallet, other);
        vm.prank(tokenizer);
        try token.whitelistInvestors(wallets, ids) {
            model.bind(wallet, other);
        } catch {}
        vm.prank(tokenizer);
        try token.setWhitelisted(wallet, false) {} catch {}
        address recipient = _sibling(wallet);
        uint256 cost = escrow.invested(id, wallet) - escrow.remainderOf(id, wallet);
        _fund(tokenizer, cost);
        vm.prank(tokenizer);
        usd.approve(address(escrow), cost);
        bool ok;
        vm.prank(tokenizer);
        if (refund) {
            try escrow.refundClaim(id, wallet, recipient) {
                ok = true;
            } catch {}
        } else {
            try escrow.redirectClaim(id, wallet, recipient) {
                ok = true;
            } catch {}
        }
        if (ok) _checkOwnRecipient(refund ? "refundClaim" : "redirectClaim", id, wallet, recipient);
    }

    /// @dev The recipient of a position's tokens or money is bound to the investor whose wallet paid for it: the
    ///      identity bound when it paid, or, for a wallet unbound then, the one bound since.
    function _checkOwnRecipient(string memory action, uint256 id, address investor, address recipient) private {
        bytes32 payer = model.payingInvestor(id, investor);
        if (payer == bytes32(0)) payer = model.investorOf(investor);
        if (payer == bytes32(0) || model.investorOf(recipient) != payer) {
            _fail(
                model.OFFERING_OWNERSHIP(),
                string.concat(
                    action,
                    " of offering ",
                    id.toString(),
                    " paid by ",
                    model.nameOf(investor),
                    " went to ",
                    model.nameOf(recipient)
                )
            );
        }
    }

    /// @dev Three times in four a wallet with an unclaimed position in the offering (from a random starting point),
    ///      else any wallet.
    function _investor(uint256 id, uint256 seed) private view returns (address) {
        if (seed % 4 != 0) {
            for (uint256 i; i < WALLETS; ++i) {
                address wallet = model.actor(FIRST_WALLET + ((seed % WALLETS + i) % WALLETS));
                if (escrow.invested(id, wallet) != 0 && !escrow.claimed(id, wallet)) return wallet;
            }
        }
        return _holder(seed >> 2);
    }

    /// @dev One of the offerings created so far (1 when there is none: refused as unknown): three times in four a
    ///      closed one that took money, when there is one, from a random starting point.
    function _offering(uint256 seed) private view returns (uint256) {
        uint256 current = escrow.currentOfferingId();
        if (current == 0) return 1;
        if (seed % 4 != 0) {
            for (uint256 i; i < current; ++i) {
                uint256 id = 1 + ((seed >> 2) % current + i) % current;
                IStoEscrow.Offering memory o = escrow.offering(id);
                if (o.closed && o.raised != 0) return id;
            }
        }
        return _bound(seed >> 2, 1, current);
    }

    function _word(uint256 seed, uint256 index) private pure returns (uint256) {
        return uint256(keccak256(abi.encode(seed, index)));
    }
}
