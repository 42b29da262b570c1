"""Tiny Llama construction and HF checkpoint directories (safetensors + config + tokenizer +
generation_config.json), written atomically."""

from __future__ import annotations

import dataclasses
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

import torch

from fgx.io import atomic_dir


def fill_settings(cls, settings: Mapping[str, Any] | None, where: str):
    """Instantiate dataclass ``cls`` from a plain dict; unknown keys raise naming the key."""
    settings = dict(settings or {})
    names = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(settings) - names)
    if unknown:
        raise ValueError(
            f"{where}: unknown setting(s) {unknown}; allowed keys: {sorted(names)}. "
            "Fix the key name in config.yaml."
        )
    return cls(**settings)


@dataclass
class ModelSettings:
    """Architecture of the tiny Llama (defaults chosen by measurement, see docs)."""

    hidden_size: int = 192
    num_layers: int = 6
    num_heads: int = 6
    num_kv_heads: int = 2
    intermediate_size: int = 512
    max_positions: int = 1024
    rope_theta: float = 10000.0
    rms_norm_eps: float = 1e-5
    tie_embeddings: bool = True
    initializer_range: float = 0.02


def llama_config(settings: Mapping[str, Any] | ModelSettings | None, tokenizer):
    from transformers import LlamaConfig

    s = settings if isinstance(settings, ModelSettings) else fill_settings(
        ModelSettings, settings, "model settings"
    )
    if s.hidden_size % s.num_heads or s.num_heads % s.num_kv_heads:
        raise ValueError(
            f"model settings: hidden_size ({s.hidden_size}) must be divisible by num_heads "
            f"({s.num_heads}), and num_heads by num_kv_heads ({s.num_kv_heads})"
        )
    return LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=s.hidden_size,
        intermediate_size=s.intermediate_size,
        num_hidden_layers=s.num_layers,
        num_attention_heads=s.num_heads,
        num_key_value_heads=s.num_kv_heads,
        max_position_embeddings=s.max_positions,
        rms_norm_eps=s.rms_norm_eps,
        rope_theta=s.rope_theta,
        tie_word_embeddings=s.tie_embeddings,
        initializer_range=s.initializer_range,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
    )


def build_model(settings, tokenizer, seed: int = 0):
    """A freshly initialised tiny LlamaForCausalLM (float32), deterministic in ``seed``."""
    from transformers import LlamaForCausalLM

    config = llama_config(settings, tokenizer)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = LlamaForCausalLM(config)
    return model


# Parameter groups RL may hold fixed (``rl.frozen``), by the Hugging Face Llama parameter names they match.
# The embedding matrix holds one row per function-name token, the only weights that belong to one function alone.
PARAMETER_GROUPS = {
    "embeddings": ("embed_tokens.", "lm_head."),
    "attention": ("self_attn.",),
    "mlp": ("mlp.",),
    "norms": ("norm.",),
}


def freeze_parameters(model, groups) -> int:
    """Set ``requires_grad=False`` on every parameter in ``groups`` (keys of PARAMETER_GROUPS); return how
    many scalars are frozen. Tied input/output embeddings are one tensor, frozen by either name."""
    unknown = sorted(set(groups) - set(PARAMETER_GROUPS))
    if unknown:
        raise ValueError(f"rl settings: frozen {unknown} unknown; choose from {sorted(PARAMETER_GROUPS)}")
    patterns = tuple(pat for g in groups for pat in PARAMETER_GROUPS[g])
    frozen = 0
    for name, p in model.named_parameters():  # named_parameters lists a tied tensor once
        if any(pat in name for pat in patterns):
            p.requires_grad_(False)
            frozen += p.numel()
    if groups and not frozen:
        raise ValueError(f"rl settings: frozen {list(groups)} matched no parameter of {type(model).__name__}")
    return frozen


def n_params(model) -> int:
    return sum(p.numel() for p in model.parameters())


def resolve_device(device: str | None) -> torch.device:
    if device in (None, "", "auto"):
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(device)


def load_tokenizer(model_dir):
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(model_dir))
    tok.padding_side = "left"
    if tok.pad_token_id is None:
        tok.pad_token = tok.eos_token
    return tok


def load_model(model_dir, device="cpu", dtype: torch.dtype = torch.float32):
    """Load any HF causal LM directory (tiny Llama, Qwen, ...) for training / sampling."""
    from transformers import AutoModelForCausalLM

    if not Path(model_dir, "config.json").exists():
        raise FileNotFoundError(
            f"{model_dir}: no config.json; expected a Hugging Face model directory "
            "(run the base-model stage or point the config at a downloaded model)"
        )
    model = AutoModelForCausalLM.from_pretrained(str(model_dir), dtype=dtype)
    return model.to(resolve_device(device) if isinstance(device, str) else device)


def _write_checkpoint_files(model, tokenizer, path: Path, max_new_tokens: int | None = None):
    from transformers import GenerationConfig

    model.save_pretrained(str(path), safe_serialization=True)
    tokenizer.save_pretrained(str(path))
    eos = model.config.eos_token_id
    gen = GenerationConfig(
        bos_token_id=model.config.bos_token_id,
        eos_token_id=eos if eos is not None else tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        do_sample=True,
        temperature=1.0,
        top_p=1.0,
        **({"max_new_tokens": max_new_tokens} if max_new_tokens else {}),
    )
    gen.save_pretrained(str(path))


def save_checkpoint(model, tokenizer, out_dir, *, extra_files: Mapping[str, Any] | None = None,
                    max_new_tokens: int | None = None) -> Path:
    """Write an HF checkpoint directory atomically (replaces ``out_dir`` as a whole).

    ``extra_files`` maps file names to callables ``f(path)`` that write additional files inside.
    """
    out_dir = Path(out_dir)
    with atomic_dir(out_dir) as tmp:
        _write_checkpoint_files(model, tokenizer, tmp, max_new_tokens)
        for name, writer in (extra_files or {}).items():
            writer(tmp / name)
    return out_dir


def publish_checkpoint(model, tokenizer, out_dir, *, max_new_tokens: int | None = None) -> Path:
    """Write the HF checkpoint files into ``out_dir`` without removing its other contents (e.g.
    ``checkpoints/``). Files are written in a temporary sibling directory and renamed one by one,
    config.json last, so a directory with config.json holds a complete model."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    stage = out_dir / ".publish.tmp"
    if stage.exists():
        shutil.rmtree(stage)
    with atomic_dir(stage) as tmp:
        _write_checkpoint_files(model, tokenizer, tmp, max_new_tokens)
    try:
        cfg = out_dir / "config.json"
        if cfg.exists():
            cfg.unlink()
        names = sorted(p.name for p in stage.iterdir())
        for name in [n for n in names if n != "config.json"] + ["config.json"]:
            os.replace(stage / name, out_dir / name)
    finally:
        shutil.rmtree(stage, ignore_errors=True)
    return out_dir
