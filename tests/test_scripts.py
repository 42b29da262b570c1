"""The thin CLIs in scripts/: one convention for all of them, and the route by which a rule's job
imports the checkout's fgx (the shell prefix of rules/common.smk, not a sys.path line per script)."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = sorted((ROOT / "scripts").glob("*.py"))


def _is_exit_guard(node: ast.stmt) -> bool:
    """``if __name__ == "__main__": sys.exit(main())`` and nothing else."""
    return (isinstance(node, ast.If) and ast.unparse(node.test) == "__name__ == '__main__'"
            and len(node.body) == 1 and ast.unparse(node.body[0]) == "sys.exit(main())" and not node.orelse)


def _problems(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out = []
    mains = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "main"]
    if len(mains) != 1:
        out.append("defines no main() of its own")
    else:
        a = mains[0].args
        if [x.arg for x in a.args] != ["argv"] or len(a.defaults) != 1 or ast.unparse(a.defaults[0]) != "None" \
                or ast.unparse(mains[0].returns or ast.Constant(None)) != "int":
            out.append("main's signature is not main(argv=None) -> int")
        calls = {ast.unparse(c.func) for c in ast.walk(mains[0]) if isinstance(c, ast.Call)}
        if "parser" not in calls and not any(c.endswith("_main") for c in calls):
            out.append("main neither parses with fgx.cli.parser nor hands argv to a module's main")
    if not tree.body or not _is_exit_guard(tree.body[-1]):
        out.append('does not end with `if __name__ == "__main__": sys.exit(main())`')
    if any(isinstance(n, ast.Attribute) and ast.unparse(n) == "sys.path" for n in ast.walk(tree)):
        out.append("changes sys.path (the rules put src/ on PYTHONPATH)")
    return out


def test_the_convention_check_sees_a_script_that_breaks_it(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("import sys\nsys.path.insert(0, 'src')\nfrom fgx.analysis.findings import main\n"
                   "if __name__ == '__main__':\n    main()\n")
    assert len(_problems(bad)) == 3


def test_every_script_follows_the_one_convention():
    assert len(SCRIPTS) >= 14
    wrong = {p.name: _problems(p) for p in SCRIPTS if _problems(p)}
    assert wrong == {}, wrong


def test_a_rule_job_imports_the_checkouts_fgx_from_outside_it(tmp_path):
    """A probe rule run by the workflow's own rules/common.smk from a directory outside the checkout,
    with no PYTHONPATH in the environment (a conda job's) and ``python -S`` (an interpreter without
    fgx installed): the job runs a script and imports fgx from the workflow's src/ only through the
    shell prefix."""
    wf = tmp_path / "workflow {x} $HOME 'q'"  # the prefix is shell text and Snakemake format text
    wf.mkdir()
    for name in ("src", "scripts", "schemas"):
        (wf / name).symlink_to(ROOT / name)
    (wf / "Snakefile").write_text(
        f"configfile: {str(ROOT / 'config.yaml')!r}\n"
        f"include: {str(ROOT / 'rules' / 'common.smk')!r}\n\n"
        "rule probe:\n"
        "    output: 'probe.txt'\n"
        "    shell: 'python -S \"$(command -v metrics.py)\" --help > {output:q} && "
        "python -S -c \"import fgx; print(fgx.__file__)\" >> {output:q}'\n")
    run = tmp_path / "elsewhere"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run([sys.executable, "-m", "snakemake", "-s", str(wf / "Snakefile"), "--directory", str(run),
                           "--cores", "1", "probe.txt"], capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr[-4000:]
    lines = (run / "probe.txt").read_text().splitlines()
    assert lines[0].startswith("usage: metrics.py")
    assert Path(lines[-1]).resolve() == ROOT / "src" / "fgx" / "__init__.py"


@pytest.mark.parametrize("script", ["metrics.py"])
def test_without_the_prefix_the_same_job_cannot_import_fgx(script, tmp_path):
    # the probe above proves the prefix only if an interpreter run like it cannot find fgx otherwise
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run([sys.executable, "-S", str(ROOT / "scripts" / script), "--help"], cwd=tmp_path,
                          capture_output=True, text=True, env=env)
    assert proc.returncode != 0 and "No module named 'fgx'" in proc.stderr
