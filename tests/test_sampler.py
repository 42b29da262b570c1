"""The fast sampler: greedy equals Hugging Face generate, seeded sampling, top-p, stop strings."""

import pytest

from fgx.engines.torch.sampler import decode_completions, generate_ids
from toy import PROMPTS, hf_continuation, rand_model


@pytest.mark.parametrize("arch", ["llama", "qwen2"])
def test_fast_greedy_equals_hf_generate(tok, arch):
    m = rand_model(tok, arch)
    ids = [tok(p)["input_ids"] for p in PROMPTS]
    # batch 2 < 5 prompts: exercises slot refill and dropping finished rows
    ours = generate_ids(m, tok, ids, temperature=0, max_new_tokens=12, batch_size=2, fast=True)
    generic = generate_ids(m, tok, ids, temperature=0, max_new_tokens=12, fast=False)
    enc = tok(PROMPTS, return_tensors="pt", padding=True)
    hf = m.generate(**enc, do_sample=False, max_new_tokens=12, pad_token_id=tok.pad_token_id,
                    eos_token_id=tok.eos_token_id)
    assert len(ours) == len(generic) == len(PROMPTS)
    for i, c in enumerate(ours):
        ref = hf_continuation(hf[i, enc["input_ids"].shape[1]:].tolist(), tok.eos_token_id)
        assert c.token_ids == ref, (i, c.token_ids, ref)  # the whole continuation: a sampler stopping early fails
        assert c.finish_reason == ("stop" if ref[-1] == tok.eos_token_id else "length"), (i, c.finish_reason, ref)
        assert c.token_ids == generic[i].token_ids and c.finish_reason == generic[i].finish_reason


def test_sampling_seeded_and_top_p(tok):
    m = rand_model(tok)
    ids = [tok(p)["input_ids"] for p in PROMPTS]
    kw = dict(n=3, temperature=1.0, max_new_tokens=10, batch_size=4)
    a = generate_ids(m, tok, ids, seed=5, **kw)
    b = generate_ids(m, tok, ids, seed=5, **kw)
    c = generate_ids(m, tok, ids, seed=6, **kw)
    assert len(a) == len(PROMPTS) * 3
    assert [x.token_ids for x in a] == [x.token_ids for x in b]
    assert [x.token_ids for x in a] != [x.token_ids for x in c]
    # a tiny top-p keeps only the most likely token: equals greedy
    g = generate_ids(m, tok, ids, temperature=0, max_new_tokens=10)
    tp = generate_ids(m, tok, ids, temperature=1.0, top_p=1e-6, max_new_tokens=10, seed=1)
    assert [x.token_ids for x in g] == [x.token_ids for x in tp]
    # generic path is seeded too
    d1 = generate_ids(m, tok, ids, seed=5, fast=False, **kw)
    d2 = generate_ids(m, tok, ids, seed=5, fast=False, **kw)
    assert [x.token_ids for x in d1] == [x.token_ids for x in d2]


@pytest.mark.parametrize("fast", [True, False])
def test_stop_strings(tok, fast):
    m = rand_model(tok)
    ids = [tok(p)["input_ids"] for p in PROMPTS]
    free = generate_ids(m, tok, ids, temperature=0, max_new_tokens=12)
    text0 = decode_completions(tok, free)[0]
    stop = text0[3:5]  # a string that greedy decoding produces
    cut = generate_ids(m, tok, ids, temperature=0, max_new_tokens=12, stop=[stop], fast=fast)
    assert cut[0].finish_reason == "stop"
    assert decode_completions(tok, cut, [stop])[0] == text0[: text0.find(stop)]


def _pure_splitmix(z: int) -> int:
    """SplitMix64's output function on Python ints (the counter RNG's reference)."""
    m = (1 << 64) - 1
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & m
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & m
    return z ^ (z >> 31)


def test_counter_uniforms_equal_the_pure_python_hash():
    """The int64 tensor ops wrap and shift as the 64-bit hash does (the same bits on every device)."""
    import torch

    from fgx.engines.torch import counter_rng

    m = (1 << 64) - 1
    key = counter_rng.seed_key(2**40 + 17)
    seq = torch.tensor([0, 1, 2, 7, 2**31, 2**40 + 3] * 3)
    pos = torch.tensor([0] * 6 + [1] * 6 + [383] * 6)
    u = counter_rng.uniforms(key, seq, pos)
    for s, p, got in zip(seq.tolist(), pos.tolist(), u.tolist()):
        h = _pure_splitmix((s * 0x9E3779B97F4A7C15 + key) & m)
        h = _pure_splitmix((h + (p + 1) * 0xD1B54A32D192ED03) & m)
        assert got == (h >> 40) / 2**24
    many = counter_rng.uniforms(key, torch.arange(20000), torch.zeros(20000, dtype=torch.long))
    assert 0 <= float(many.min()) and float(many.max()) < 1 and abs(float(many.mean()) - 0.5) < 0.01


def _tokens(completions):
    return [(c.token_ids, c.finish_reason) for c in completions]


@pytest.mark.parametrize("temperature", [0.0, 1.0])
def test_fixed_shape_step_equals_continuous_batching_at_every_slot_count(tok, temperature):
    """The GPU's fixed-shape loop (run eagerly here) gives the CPU loop's tokens, greedy and at T = 1, and
    neither depends on the slot count: the draws are per sequence, not per slot."""
    m = rand_model(tok)
    ids = [tok(p)["input_ids"] for p in PROMPTS]
    kw = dict(n=3, temperature=temperature, max_new_tokens=16, seed=11)
    ref = _tokens(generate_ids(m, tok, ids, batch_size=256, static=False, **kw))
    if temperature > 0:
        assert ref != _tokens(generate_ids(m, tok, ids, batch_size=256, static=False, **dict(kw, seed=12)))
    for slots in (1, 2, 5, 16):
        assert _tokens(generate_ids(m, tok, ids, batch_size=slots, static=False, **kw)) == ref, slots
        assert _tokens(generate_ids(m, tok, ids, batch_size=slots, static=True, **kw)) == ref, slots
    # any HF causal LM (the generic path) draws the same numbers
    assert _tokens(generate_ids(m, tok, ids, fast=False, **kw)) == ref


def test_fixed_shape_step_with_stop_strings_and_top_p(tok):
    m = rand_model(tok)
    ids = [tok(p)["input_ids"] for p in PROMPTS]
    text0 = decode_completions(tok, generate_ids(m, tok, ids, temperature=0, max_new_tokens=12))[0]
    kw = dict(n=2, temperature=1.0, top_p=0.7, max_new_tokens=12, seed=3, stop=[text0[3:5], "zz"])
    ref = _tokens(generate_ids(m, tok, ids, batch_size=4, static=False, **kw))
    assert "stop" in {r for _, r in ref}
    assert _tokens(generate_ids(m, tok, ids, batch_size=3, static=True, **kw)) == ref


def test_chunks_of_prompts_sample_as_one_call(tok):
    """A job that samples its prompts in chunks, passing each chunk's first sequence index, gets the
    samples of one call over every prompt: the chunk size changes nothing."""
    m = rand_model(tok)
    ids = [tok(p)["input_ids"] for p in PROMPTS]
    kw = dict(n=2, temperature=1.0, max_new_tokens=10, seed=4)
    whole = _tokens(generate_ids(m, tok, ids, **kw))
    for static in (False, True):
        parts = []
        for start in range(0, len(ids), 2):
            parts += generate_ids(m, tok, ids[start:start + 2], seq_offset=start * 2, static=static, **kw)
        assert _tokens(parts) == whole


def test_the_cached_fixed_shape_loop_samples_the_current_weights(tok):
    """The fixed-shape loop (and on a GPU its graph) is kept across calls; a call after the weights
    changed in place (an RL step) samples the new weights, as a fresh loop does."""
    import torch

    from fgx.engines.torch import sampler

    m = rand_model(tok)
    ids = [tok(p)["input_ids"] for p in PROMPTS]
    kw = dict(n=2, temperature=0.0, max_new_tokens=10, batch_size=4, static=True)
    before = _tokens(generate_ids(m, tok, ids, **kw))
    loops = dict(sampler._STATIC[m]["loops"])
    with torch.no_grad():
        for p in m.parameters():
            p.mul_(-1.5)
    after = _tokens(generate_ids(m, tok, ids, **kw))
    assert sampler._STATIC[m]["loops"] == loops  # the same loop object, not a new one
    fresh = rand_model(tok)
    with torch.no_grad():
        for p in fresh.parameters():
            p.mul_(-1.5)
    assert after == _tokens(generate_ids(fresh, tok, ids, **kw)) != before


def test_static_needs_the_fast_decoder(tok):
    m = rand_model(tok, "qwen2")
    with pytest.raises(ValueError, match="fast Llama decoder"):
        generate_ids(m, tok, [[1, 2]], static=True, fast=False)


@pytest.mark.parametrize("temperature", [0.0, 1.0])
def test_the_fixed_shape_step_never_waits_for_the_host(tok, temperature):
    """What a CUDA graph can capture: dynamo traces the step (decode, draw, sample, stop checks, bookkeeping)
    into one graph, which a host sync (.item(), .tolist(), a branch on a tensor) would break."""
    import torch

    from fgx.engines.torch.sampler import FastLlamaDecoder, StaticDecodeLoop

    loop = StaticDecodeLoop(FastLlamaDecoder(rand_model(tok)), 8, 64, max_new_tokens=20, eos_ids=[tok.eos_token_id],
                            stop_ids=[[5, 6], [7]], temperature=temperature, top_p=0.9, graph=False)
    explained = torch._dynamo.explain(loop.step)()
    assert (explained.graph_count, explained.graph_break_count) == (1, 0), explained.break_reasons
