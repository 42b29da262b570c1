"""Tiny Llama construction and HF checkpoint directories (safetensors + config + tokenizer +
generation_config.json), written atomically."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

import torch

from fgx.io import atomic_dir
from fgx.settings import ModelShape


# fixed parts of the tiny Llama's architecture (config base.model sets its sizes)
ROPE_THETA = 10000.0
RMS_NORM_EPS = 1e-5
INITIALIZER_RANGE = 0.02


def llama_config(shape: ModelShape, tokenizer, initializer_range: float = INITIALIZER_RANGE):
    """The Hugging Face config of the tiny Llama: ``shape`` (config ``base.model``), tied embeddings."""
    from transformers import LlamaConfig

    if shape.hidden_size % shape.num_attention_heads or shape.num_attention_heads % shape.num_key_value_heads:
        raise ValueError(
            f"base.model: hidden_size ({shape.hidden_size}) must be divisible by num_attention_heads "
            f"({shape.num_attention_heads}), and that by num_key_value_heads ({shape.num_key_value_heads})")
    return LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=shape.hidden_size,
        intermediate_size=shape.intermediate_size,
        num_hidden_layers=shape.num_hidden_layers,
        num_attention_heads=shape.num_attention_heads,
        num_key_value_heads=shape.num_key_value_heads,
        max_position_embeddings=shape.max_position_embeddings,
        rms_norm_eps=RMS_NORM_EPS,
        rope_theta=ROPE_THETA,
        tie_word_embeddings=True,
        initializer_range=initializer_range,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
    )


def build_model(shape: ModelShape, tokenizer, seed: int = 0, initializer_range: float = INITIALIZER_RANGE):
    """A freshly initialised tiny LlamaForCausalLM (float32), deterministic in ``seed``."""
    from transformers import LlamaForCausalLM

    config = llama_config(shape, tokenizer, initializer_range)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = LlamaForCausalLM(config)
    return model


def n_params(model) -> int:
    return sum(p.numel() for p in model.parameters())


def resolve_device(device: str | None) -> torch.device:
    if device in (None, "", "auto"):
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(device)


def _loading(load, model_dir, what: str, files: str):
    """``load()``, or one clear error when the model directory's files are damaged (transformers raises
    OSError, ValueError and JSON errors with tracebacks that do not say what to do)."""
    from fgx.io import InputError

    if not Path(model_dir).is_dir():
        raise InputError(f"{model_dir}: not a directory; expected a Hugging Face model directory (run the rule "
                         "that builds it, or point model.path at a downloaded model)")
    try:
        return load()
    except Exception as err:  # reading only: nothing to undo
        raise InputError(f"{model_dir}: cannot load the {what} ({type(err).__name__}: {str(err)[:200]}); its "
                         f"{files} is damaged or foreign: delete the directory and rerun the rule that builds it "
                         "(or download the model again)") from None


def load_tokenizer(model_dir):
    from transformers import AutoTokenizer

    tok = _loading(lambda: AutoTokenizer.from_pretrained(str(model_dir)), model_dir, "tokenizer",
                   "tokenizer.json / tokenizer_config.json")
    tok.padding_side = "left"
    if tok.pad_token_id is None:
        tok.pad_token = tok.eos_token
    return tok


def load_model(model_dir, device="cpu", dtype: torch.dtype = torch.float32):
    """Load any HF causal LM directory (tiny Llama, Qwen, ...) for training / sampling."""
    from transformers import AutoModelForCausalLM

    from fgx.io import InputError

    if not Path(model_dir, "config.json").exists():
        raise InputError(f"{model_dir}: no config.json; expected a Hugging Face model directory "
                         "(run the rule that builds it, or point model.path at a downloaded model)")
    if not any(Path(model_dir).glob("*.safetensors")) and not any(Path(model_dir).glob("*.bin")):
        raise InputError(f"{model_dir}: no weights (*.safetensors); the model directory is incomplete: delete it "
                         "and rerun the rule that builds it")
    model = _loading(lambda: AutoModelForCausalLM.from_pretrained(str(model_dir), dtype=dtype), model_dir, "model",
                     "config.json / the weights")
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
