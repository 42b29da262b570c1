"""The thin CLIs' shared parser: --settings JSON and the machine knobs --threads, --gpu-slots, --gpu-chunk-prompts."""

import pytest

from fgx.cli import parser


def test_threads_go_into_the_settings():
    args = parser("x").parse_args(["--settings", '{"lr": 0.1, "threads": 8}', "--threads", "1"])
    assert args.settings == {"lr": 0.1, "threads": 1}


def test_settings_keep_their_threads_without_the_flag():
    args = parser("x").parse_args(["--settings", '{"threads": 3}'])
    assert args.settings == {"threads": 3}


@pytest.mark.parametrize("bad", ["0", "-2", "two"])
def test_bad_thread_counts_are_named(bad, capsys):
    with pytest.raises(SystemExit):
        parser("x").parse_args(["--threads", bad])
    assert "--threads must be a positive integer" in capsys.readouterr().err


def test_bad_settings_are_named(capsys):
    with pytest.raises(SystemExit):
        parser("x").parse_args(["--settings", "[1, 2]"])
    assert "--settings must be a JSON object" in capsys.readouterr().err


def test_the_samplers_gpu_shapes_go_into_the_settings(capsys):
    """compute's machine keys (the torch sampler's GPU shapes) reach a job beside --threads, as flags."""
    args = parser("x").parse_args(["--settings", '{"lr": 0.1}', "--threads", "1", "--gpu-slots", "64",
                                   "--gpu-chunk-prompts", "16"])
    assert args.settings == {"lr": 0.1, "threads": 1, "gpu_slots": 64, "gpu_chunk_prompts": 16}
    assert parser("x").parse_args([]).settings == {}
    with pytest.raises(SystemExit):
        parser("x").parse_args(["--gpu-slots", "0"])
    assert "--gpu-slots must be a positive integer, got '0'" in capsys.readouterr().err
