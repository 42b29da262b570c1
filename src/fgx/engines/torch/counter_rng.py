"""Counter-based uniforms for the sampler: one number per (seed, sequence, token position).

A sequence's draws are a hash of the job's seed, the sequence's index in the job (prompt-major:
prompt i, sample j is ``i * n + j``, plus the offset of the chunk that holds it) and the position of
the token in its response. Nothing else enters: not the slot that decodes the sequence, the slot
count, how the prompts are chunked, nor which sequences run beside it or in which order. The hash is
SplitMix64's output function applied twice, in int64 tensor arithmetic that wraps (torch's integer
multiply wraps on every device) with masked shifts standing in for logical ones, so the CPU and
CUDA give the same bits, and a draw needs no host sync: it is a function of tensors already on the
device, which a CUDA graph can replay.
"""

from __future__ import annotations

import torch

_MASK64 = (1 << 64) - 1


def _int64(x: int) -> int:
    """``x`` mod 2**64 as the signed int64 holding the same bits."""
    x &= _MASK64
    return x - (1 << 64) if x >> 63 else x


_GOLDEN = _int64(0x9E3779B97F4A7C15)  # SplitMix64's increment (2**64 / golden ratio, odd)
_POS_STEP = _int64(0xD1B54A32D192ED03)  # another odd constant, so positions and sequences do not alias
_MUL1 = _int64(0xBF58476D1CE4E5B9)
_MUL2 = _int64(0x94D049BB133111EB)
UNIFORM_BITS = 24  # a float32 holds every integer below 2**24 exactly
# what a resumable sampling job's fingerprint records of how it draws: chunks sampled another way start afresh
SCHEME = "splitmix64(seed, sequence, position) -> 24-bit uniform"


def _shr(x: torch.Tensor, k: int) -> torch.Tensor:
    """Logical right shift of int64 ``x`` (torch's ``>>`` sign-extends)."""
    return (x >> k) & ((1 << (64 - k)) - 1)


def _mix(z: torch.Tensor) -> torch.Tensor:
    """SplitMix64's output function (a bijection of 64-bit words that scatters every input bit)."""
    z = (z ^ _shr(z, 30)) * _MUL1
    z = (z ^ _shr(z, 27)) * _MUL2
    return z ^ _shr(z, 31)


def seed_key(seed: int) -> int:
    """The 64-bit key of a sampling seed (any Python int), as a signed int64."""
    z = (int(seed) + 0x9E3779B97F4A7C15) & _MASK64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
    return _int64(z ^ (z >> 31))


def uniforms(key: int | torch.Tensor, sequence: torch.Tensor, position: torch.Tensor) -> torch.Tensor:
    """Float32 uniforms in [0, 1) on multiples of 2**-24, one per element of ``sequence`` and
    ``position`` (int64 tensors of one shape, on the device that samples)."""
    h = _mix(sequence * _GOLDEN + key)
    h = _mix(h + (position + 1) * _POS_STEP)
    return _shr(h, 64 - UNIFORM_BITS).to(torch.float32) * (2.0 ** -UNIFORM_BITS)
