"""Character-level tokenizer for the tiny model, as a Hugging Face fast tokenizer.

One token per character: printable ASCII (space..~), newline, tab, the guillemets « » and four
specials (<pad>=0, <bos>=1, <eos>=2, <unk>=3). Optionally, ``names`` (function names such as
``f10`` or ``upper``) become single tokens where a ``(`` follows them, as an LLM's BPE vocabulary
would have them; elsewhere (inside a string literal) they stay characters. A name that ends in
``(`` (``f10(``) is one token together with its parenthesis. Encoding prepends
<bos>; decoding joins tokens with nothing in between. ``save_pretrained`` writes tokenizer.json +
tokenizer_config.json, so ``AutoTokenizer.from_pretrained(dir)`` loads it back. It has no chat
template: the engine renders a prompt as the concatenated message contents (see
:func:`render_prompt`).
"""

from __future__ import annotations

import re
from typing import Sequence

PAD, BOS, EOS, UNK = "<pad>", "<bos>", "<eos>", "<unk>"
SPECIALS = [PAD, BOS, EOS, UNK]
CHARS = [chr(c) for c in range(32, 127)] + ["\n", "\t", "«", "»"]


def char_vocab(names: Sequence[str] = ()) -> dict[str, int]:
    """Token -> id: the four specials first, then the characters, then ``names`` (so the character
    ids are the same with or without names)."""
    vocab = {tok: i for i, tok in enumerate(SPECIALS)}
    for tok in [*CHARS, *names]:
        if tok in vocab:
            raise ValueError(f"tokenizer names: {tok!r} is already a token; names must be two or more characters")
        vocab[tok] = len(vocab)
    return vocab


def build_char_tokenizer(model_max_length: int = 1024, names: Sequence[str] = ()):
    """Return a ``transformers.PreTrainedTokenizerFast`` over single characters, plus one token per
    name in ``names`` wherever the name is followed by ``(`` (a name ending in ``(`` includes it)."""
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    vocab = char_vocab(names)
    tk = Tokenizer(models.WordLevel(vocab=vocab, unk_token=UNK))
    # every character (newline included) is its own pre-token, except a name right before "(" (or a
    # name that ends in "("); the look-ahead keeps a name inside a string literal ("xupper") as characters
    pattern = r"[\s\S]"
    if names:
        alternatives = [re.escape(n) if n.endswith("(") else re.escape(n) + r"(?=\()" for n in names]
        pattern = "(?:" + "|".join(alternatives) + ")|" + pattern
    tk.pre_tokenizer = pre_tokenizers.Split(Regex(pattern), behavior="isolated")
    tk.decoder = decoders.Fuse()
    tk.post_processor = processors.TemplateProcessing(
        single=f"{BOS} $A", pair=f"{BOS} $A $B", special_tokens=[(BOS, vocab[BOS])]
    )
    tk.add_special_tokens(SPECIALS)
    return PreTrainedTokenizerFast(
        tokenizer_object=tk,
        pad_token=PAD,
        bos_token=BOS,
        eos_token=EOS,
        unk_token=UNK,
        model_max_length=model_max_length,
        padding_side="left",
        clean_up_tokenization_spaces=False,
    )


def render_prompt(tokenizer, messages: Sequence[dict] | str) -> str:
    """Prompt text for ``messages``: the chat template with a generation prompt when the tokenizer
    has one, else the concatenated message contents (the compact style of the tiny model)."""
    if isinstance(messages, str):
        return messages
    messages = [dict(m) for m in messages]
    if getattr(tokenizer, "chat_template", None):
        return tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    return "".join(str(m["content"]) for m in messages)


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
