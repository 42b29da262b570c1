"""Prompt rows to token ids, the same way for both engines: a tokenizer's chat template with the
generation prompt when it has one (an instruct LLM), else the message contents as they are (the
tiny model's compact prompts)."""

from __future__ import annotations

from typing import Sequence

# The chat template of a tokenizer that has none (the tiny model's), for stacks that always apply one
# (verl's RL and SFT datasets): BOS, then the messages' contents, and EOS after an assistant turn. A
# prompt renders to the ids render_prompt + encode_prompts give without a template, and an SFT example
# to those of the torch engine's (prompt, BOS first; response; EOS). BOS goes only before a first
# message that is not the assistant's, because verl tokenizes each turn on its own and joins them.
PLAIN_CHAT_TEMPLATE = ("{% for m in messages %}{% if loop.first and m['role'] != 'assistant' %}{{ bos_token }}"
                       "{% endif %}{{ m['content'] }}{% if m['role'] == 'assistant' %}{{ eos_token }}{% endif %}"
                       "{% endfor %}")


def render_prompt(tokenizer, messages: Sequence[dict] | str) -> str:
    """Prompt text of one row's ``prompt`` (a list of {role, content} messages)."""
    if isinstance(messages, str):
        return messages
    messages = [{"role": m["role"], "content": m["content"]} for m in messages]
    if getattr(tokenizer, "chat_template", None):
        return tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    return "".join(str(m["content"]) for m in messages)


def prompt_texts(tokenizer, df, source: str) -> list[str]:
    """The rendered prompt of every row of a verl-schema frame read from ``source``."""
    if "prompt" not in df.columns:
        raise ValueError(f"{source}: missing column 'prompt' (a list of {{role, content}} messages per row)")
    return [render_prompt(tokenizer, list(p) if not isinstance(p, str) else p) for p in df["prompt"]]


def encode_prompts(tokenizer, texts: Sequence[str]) -> list[list[int]]:
    """Token ids for each prompt text. Special tokens (BOS) are added only when the text was not
    rendered by a chat template that already contains them."""
    has_template = bool(getattr(tokenizer, "chat_template", None))
    enc = tokenizer(list(texts), add_special_tokens=not has_template)["input_ids"]
    return [list(x) for x in enc]


def encode_texts(tokenizer, texts: Sequence[str]) -> list[list[int]]:
    """Token ids of continuation texts (responses): no special tokens."""
    if not texts:
        return []
    return [list(x) for x in tokenizer(list(texts), add_special_tokens=False)["input_ids"]]
