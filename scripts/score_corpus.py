"""Score the conformance kit on a corpus described by a MANIFEST.yaml (the blind corpus's format).

Each entry names a file, its kind (``correct`` or ``mutant``) and, for a mutant, keywords a finding that really
names its mistake would contain. The kit runs as a user runs it (``hermes-envs check FILE --report``, one process
per file); a correct env with any ERROR is a false alarm; a mutant is caught strictly when an ERROR finding's text
contains one of its keywords, loosely when the check exits 1 for any reason.

    python scripts/score_corpus.py conformance/blind/MANIFEST.yaml [--jobs 2] [--json out.json] [-- CHECK-ARGS]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

import yaml


@dataclass
class Verdict:
    """What the kit said about one corpus file, and how that scores."""

    file: str
    kind: str
    exit_code: int
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    outcome: str = ""


def _findings(report: Path) -> tuple[list[str], list[str]]:
    """(error texts, warning texts) of a ``check --report`` JSON file; empty when it was not written."""
    if not report.exists():
        return [], []
    errors: list[str] = []
    warnings: list[str] = []
    for env in json.loads(report.read_text()).get("envs", []):
        for chk in env.get("checks", []):
            for f in chk.get("findings", []):
                text = f"{f.get('id')} {chk.get('title', '')}: {f.get('subject', '')} {f.get('message', '')} {f.get('fix', '')}"
                (errors if f.get("severity") == "error" else warnings).append(text)
    return errors, warnings


def judge_entry(entry: dict, root: Path, check_args: list[str]) -> Verdict:
    path = root / entry["file"]
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.json"
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "hermes_envs.cli",
                "check",
                str(path),
                "--report",
                str(report),
                *check_args,
            ],
            capture_output=True,
            text=True,
            cwd=tmp,
            timeout=900,
        )
        errors, warnings = _findings(report)
    verdict = Verdict(entry["file"], entry["kind"], proc.returncode, errors, warnings)
    if entry["kind"] == "correct":
        verdict.outcome = "false-alarm" if (errors or proc.returncode not in (0,)) else "clean"
    else:
        words = [str(k).lower() for k in entry.get("keywords", [])]
        named = any(any(w in e.lower() for w in words) for e in errors)
        verdict.outcome = "caught" if named else ("flagged" if proc.returncode != 0 else "missed")
    return verdict


def main(argv: list[str] | None = None) -> int:
    """Run the kit over every manifest entry and print the per-kind tallies."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("manifest", type=Path)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--json", type=Path, help="write every verdict here")
    # Everything after the first "--" goes to `hermes-envs check` untouched: argparse's own "--" handling rejects
    # "M --jobs 1 -- --thorough" (an option between the positionals), so the split is made here.
    argv = sys.argv[1:] if argv is None else list(argv)
    cut = argv.index("--") if "--" in argv else len(argv)
    args = parser.parse_args(argv[:cut])
    args.check_args = argv[cut + 1 :]
    manifest = yaml.safe_load(args.manifest.read_text())
    entries = (
        manifest if isinstance(manifest, list) else manifest.get("entries") or manifest.get("files") or []
    )
    root = args.manifest.resolve().parent  # absolute: each check runs in a temp cwd
    with ThreadPoolExecutor(args.jobs) as pool:
        verdicts = list(pool.map(lambda e: judge_entry(e, root, args.check_args), entries))
    for v in verdicts:
        print(f"{v.outcome:12} {v.kind:8} exit={v.exit_code} {v.file}")
        for e in v.errors[:3]:
            print(f"      ERROR {e[:200]}")
    mutants = [v for v in verdicts if v.kind != "correct"]
    correct = [v for v in verdicts if v.kind == "correct"]
    print(
        f"mutants: {sum(v.outcome == 'caught' for v in mutants)}/{len(mutants)} caught (strict), "
        f"{sum(v.outcome != 'missed' for v in mutants)}/{len(mutants)} exit non-zero; "
        f"correct: {sum(v.outcome == 'false-alarm' for v in correct)}/{len(correct)} false alarms, "
        f"{sum(bool(v.warnings) for v in correct)}/{len(correct)} with warnings"
    )
    if args.json:
        args.json.write_text(json.dumps([asdict(v) for v in verdicts], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
