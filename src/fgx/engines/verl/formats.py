"""fgx's files as verl reads them and verl's as fgx writes them: the model as verl and vLLM see it, SFT
rows as verl's messages, a merged model directory finished as the torch engine writes one, and samples
assembled from the vLLM shards' chunk files."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Mapping, Sequence

TOKENIZER_FILES = ("generation_config.json", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json",
                   "chat_template.jinja")


def model_view(model_dir: str | Path, work: Path) -> Path:
    """``model_dir`` as verl and vLLM read it. verl's datasets always apply a chat template; a model
    whose tokenizer has none (the tiny model) is shown through ``work/model`` (links to its files,
    plus :data:`fgx.engines.prompts.PLAIN_CHAT_TEMPLATE`), which renders prompts and SFT examples to
    the torch engine's token ids. Other models (and directories without a tokenizer) are used as they are."""
    from fgx.engines.prompts import PLAIN_CHAT_TEMPLATE

    model_dir = Path(model_dir).resolve()
    config = model_dir / "tokenizer_config.json"
    if (not config.is_file() or (model_dir / "chat_template.jinja").exists()
            or json.loads(config.read_text()).get("chat_template")):
        return model_dir
    view = work / "model"
    if not (view / "chat_template.jinja").exists():
        view.mkdir(parents=True, exist_ok=True)
        for f in model_dir.iterdir():
            if f.is_file() and not (view / f.name).exists():
                (view / f.name).symlink_to(f)
        (view / "chat_template.jinja").write_text(PLAIN_CHAT_TEMPLATE)
    return view


def _messages(value) -> list[dict]:
    return [{"role": str(m["role"]), "content": str(m["content"])} for m in list(value)]


def sft_messages(df):
    """fgx SFT rows (prompt + ``response`` or ``responses``) -> verl's ``messages`` column."""
    import pandas as pd

    if "messages" in df.columns:
        return pd.DataFrame({"messages": [_messages(m) for m in df["messages"]]})
    if "response" in df.columns:
        pairs = zip(df["prompt"], df["response"], strict=True)
    elif "responses" in df.columns:
        pairs = ((p, r) for p, rs in zip(df["prompt"], df["responses"], strict=True) for r in list(rs))
    else:
        raise ValueError("SFT data needs a 'response' (or 'responses' / 'messages') column next to 'prompt'; "
                         f"got columns {list(df.columns)} (write it with scripts/filter_rollouts.py)")
    rows = [[*_messages(p), {"role": "assistant", "content": str(r)}] for p, r in pairs]
    if not rows:
        raise ValueError("SFT data has no rows: every rollout was filtered out (no correct responses?)")
    return pd.DataFrame({"messages": rows})


def finish_model_dir(target: Path, init_model: str | Path, settings: Mapping, argv: Sequence[str]) -> None:
    """Make a merged directory match the torch engine's: generation config, tokenizer (the starting
    model's files, not the merger's copy of what verl was shown: :func:`model_view`), provenance."""
    init_model = Path(init_model)
    for name in TOKENIZER_FILES:
        if (init_model / name).exists():
            shutil.copy2(init_model / name, target / name)
        elif (target / name).exists() and name != "generation_config.json":
            (target / name).unlink()  # in the merger's fresh output directory, e.g. the view's chat template
    if not any(target.glob("*.safetensors")):
        raise RuntimeError(f"verl's model merger wrote no *.safetensors into {target}")
    (target / "resolved_config.json").write_text(json.dumps(
        {"engine": "verl", "init_model": str(init_model), "settings": dict(settings),
         "command": list(map(str, argv))}, indent=2, sort_keys=True, default=str) + "\n")


def assemble_samples(rows, chunk_files: Sequence[Path], levels: Sequence[int] | None = None):
    """Input rows + the contract's sample columns, from the shards' chunk files (``levels``: the
    rows' levels, read before sampling)."""
    import pandas as pd

    from fgx.tasks.contract import row_levels

    if not chunk_files:
        raise RuntimeError("vLLM sampling wrote no chunk files")
    got = pd.concat([pd.read_parquet(f) for f in chunk_files], ignore_index=True)
    got = got.drop_duplicates("row_index").set_index("row_index").sort_index()
    missing = sorted(set(range(len(rows))) - set(got.index))
    if missing:
        raise RuntimeError(f"vLLM sampling is missing {len(missing)} prompt(s) (rows {missing[:10]} ...)")
    out = rows.reset_index(drop=True).copy()
    for col in ("responses", "scores", "correct", "response_tokens"):
        out[col] = [list(x) for x in got.loc[range(len(rows)), col]]
    out["scores"] = out["scores"].map(lambda xs: [float(x) for x in xs])
    out["correct"] = out["correct"].map(lambda xs: [bool(x) for x in xs])
    out["response_tokens"] = out["response_tokens"].map(lambda xs: [int(x) for x in xs])
    out["level"] = list(levels) if levels is not None else row_levels(rows)
    out["n_correct"] = out["correct"].map(sum).astype("int64")
    return out
