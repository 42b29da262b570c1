"""The tiny model's character tokenizer (one token per character, a name token before "(")."""

import pytest

from fgx.engines.torch.tokenizer import build_char_tokenizer


# ----------------------------------------------------------------------------- tokenizer / model
def test_tokenizer_roundtrip(tok, tmp_path):
    from transformers import AutoTokenizer

    s = 'f17(f3("dcba"))\n  «x» {"output": "a b"}\t~'
    ids = tok(s)["input_ids"]
    assert ids[0] == tok.bos_token_id and len(ids) == len(s) + 1
    assert tok.decode(ids, skip_special_tokens=True) == s
    tok.save_pretrained(tmp_path)
    t2 = AutoTokenizer.from_pretrained(tmp_path)
    assert t2(s)["input_ids"] == ids and t2.decode(ids, skip_special_tokens=True) == s
    assert (t2.pad_token_id, t2.bos_token_id, t2.eos_token_id, t2.unk_token_id) == (0, 1, 2, 3)
    assert t2("é")["input_ids"] == [1, 3]
    assert not getattr(t2, "chat_template", None)


def test_name_tokens_only_before_a_paren(tok, tmp_path):
    from transformers import AutoTokenizer

    from fgx.tasks.strings import compact_call_names

    named = build_char_tokenizer(names=compact_call_names())
    s = 'f10(f2(upper("xf1upper")))\nf2("a")="a"'
    ids = named(s)["input_ids"]
    pieces = named.convert_ids_to_tokens(ids[1:])
    assert pieces[:5] == ["f10", "(", "f2", "(", "upper"]
    assert "".join(pieces[7:14]) == "xf1uppe" and all(len(p) == 1 for p in pieces[6:16])  # literal: chars
    assert pieces.count("f2") == 2 and len(ids) == len(s) + 1 - (2 + 1 + 4 + 1)  # f10, f2, upper, f2
    assert named.decode(ids, skip_special_tokens=True) == s
    # the character ids are those of the plain tokenizer; names come after them
    assert named("abc(")["input_ids"] == tok("abc(")["input_ids"]
    assert len(named) == len(tok) + len(compact_call_names())
    named.save_pretrained(tmp_path)
    assert AutoTokenizer.from_pretrained(tmp_path)(s)["input_ids"] == ids
    with pytest.raises(ValueError, match="already a token"):
        build_char_tokenizer(names=["x"])


def test_plain_chat_template_renders_the_torch_engines_token_ids():
    """verl always applies a chat template: the one fgx gives the tiny tokenizer yields the ids the torch
    engine uses, for prompts (BOS + contents), whole SFT examples (+ response + EOS) and, as verl's SFT
    dataset tokenizes them, each turn on its own."""
    from fgx.engines.prompts import PLAIN_CHAT_TEMPLATE, encode_prompts, encode_texts, render_prompt
    from fgx.engines.torch.supervised import tokenize

    tok = build_char_tokenizer(names=["f3", "f17"])
    prompts = ['"dcba".f3().f17()\n', 'x']
    responses = ['"dcba".f3()="abcd"\n{"output": "x"}\n', '']
    plain = encode_prompts(tok, [render_prompt(tok, [{"role": "user", "content": p}]) for p in prompts])
    examples = tokenize(tok, prompts, responses, max_length=1024, loss_on_prompt=False)
    tok.chat_template = PLAIN_CHAT_TEMPLATE
    checked = 0
    for p, r, ids, (sft_ids, loss_start) in zip(prompts, responses, plain, examples, strict=True):
        user = [{"role": "user", "content": p}]
        assistant = [{"role": "assistant", "content": r}]
        templated = encode_prompts(tok, [render_prompt(tok, user)])[0]
        assert templated == ids == [tok.bos_token_id, *encode_texts(tok, [p])[0]]
        whole = tok.apply_chat_template(user + assistant, tokenize=True, return_dict=False)
        turns = [tok.apply_chat_template(m, tokenize=True, return_dict=False) for m in (user, assistant)]
        assert list(whole) == sft_ids == list(turns[0]) + list(turns[1]) and loss_start == len(turns[0])
        checked += 1
    assert checked == len(prompts)
