"""Character-level tokenizer for the tiny model, as a Hugging Face fast tokenizer.

One token per character: printable ASCII (space..~), newline, tab, the guillemets « » and four
specials (<pad>=0, <bos>=1, <eos>=2, <unk>=3). Optionally, ``names`` (function names such as
``f10`` or ``upper``) become single tokens where a ``(`` follows them, as an LLM's BPE vocabulary
would have them; elsewhere (inside a string literal) they stay characters. Encoding prepends
<bos>; decoding joins tokens with nothing in between. ``save_pretrained`` writes tokenizer.json +
tokenizer_config.json, so ``AutoTokenizer.from_pretrained(dir)`` loads it back. It has no chat
template: a prompt is its messages' contents (:func:`fgx.engines.prompts.render_prompt`).
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
    name in ``names`` wherever the name is followed by ``(``."""
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    vocab = char_vocab(names)
    tk = Tokenizer(models.WordLevel(vocab=vocab, unk_token=UNK))
    # every character (newline included) is its own pre-token, except a name right before "(";
    # the look-ahead keeps a name inside a string literal ("xupper") as characters
    pattern = r"[\s\S]"
    if names:
        alternatives = [re.escape(n) + r"(?=\()" for n in names]
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
