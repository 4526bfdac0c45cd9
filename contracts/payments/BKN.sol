// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";
import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";

/// @title BKN
/// @notice The Brickken governance token (18 decimals) for local chains and testnets: the owner mints, and a public
///         faucet gives any recipient a fixed amount at most once per cooldown period.
contract BKN is ERC20, Ownable {
    /// @notice Amount minted by one faucet claim (100 BKN).
    uint256 public constant FAUCET_AMOUNT = 100 ether;
    /// @notice Minimum time between two faucet claims for the same recipient.
    uint256 public constant FAUCET_COOLDOWN = 24 hours;

    mapping(address recipient => uint256 availableAt) private _faucetAvailableAt;

    /// @notice A required address argument is the zero address.
    error ZeroAddress();
    /// @notice `recipient` claimed less than `FAUCET_COOLDOWN` ago and may claim again at `availableAt`.
    error FaucetCooldown(address recipient, uint256 availableAt);

    /// @notice Emitted on every faucet claim; `nextClaimAt` is when `recipient` may claim again.
    event FaucetClaimed(address indexed recipient, uint256 amount, uint256 nextClaimAt);

    /// @notice Deploys the token; the deployer becomes the owner (the only minter besides the faucet).
    constructor() ERC20("Brickken", "BKN") Ownable(msg.sender) {}

    /// @notice Mints `amount` to `to`.
    /// @param to The recipient.
    /// @param amount The amount in base units (18 decimals).
    function mint(address to, uint256 amount) external onlyOwner {
        _mint(to, amount);
    }

    /// @notice Mints `FAUCET_AMOUNT` to `recipient`. Anyone may call it (e.g. a relayer on the recipient's behalf);
    ///         the cooldown is per recipient, not per caller.
    /// @param recipient The account that receives the tokens.
    /// @return amount The amount minted.
    function faucet(address recipient) external returns (uint256 amount) {
        if (recipient == address(0)) revert ZeroAddress();
        uint256 availableAt = _faucetAvailableAt[recipient];
        if (block.timestamp < availableAt) revert FaucetCooldown(recipient, availableAt);

        uint256 nextClaimAt = block.timestamp + FAUCET_COOLDOWN;
        _faucetAvailableAt[recipient] = nextClaimAt;
        amount = FAUCET_AMOUNT;
        _mint(recipient, amount);
        emit FaucetClaimed(recipient, amount, nextClaimAt);
    }

    /// @notice When `recipient` may next claim from the faucet; 0 or a past time means now.
    /// @param recipient The account to query.
    function faucetAvailableAt(address recipient) external view returns (uint256) {
        return _faucetAvailableAt[recipient];
    }
}
