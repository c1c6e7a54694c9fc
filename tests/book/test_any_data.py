"""The whole book on three folders besides the testbed (``make book-any-data`` builds them
strictly first; ``make test`` runs both): every chapter executed, no cell writing to standard
error (a warning), and every section a folder cannot feed listed with its reason."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FOLDERS = ("any-minimal", "any-papers", "any-msmarco")
SKIPPED = re.compile(r":::\{admonition\} Not on this dataset\n:class: [^\n]*\n\n(.*?)\n:::", re.S)

pytestmark = pytest.mark.any_data


def chapters() -> list[str]:
    return sorted(p.stem for p in (ROOT / "notebooks").glob("*.md"))


def executed(folder: str, chapter: str) -> dict:
    path = ROOT / "_build" / folder / "jupyter_execute" / "notebooks" / f"{chapter}.ipynb"
    if not path.is_file():
        pytest.fail(f"{path}: absent; `make book-any-data` builds the book on {folder} first")
    return json.loads(path.read_text(encoding="utf-8"))


def outputs(notebook: dict):
    for index, cell in enumerate(notebook["cells"]):
        for output in cell.get("outputs", []):
            yield index, output


@pytest.mark.parametrize("folder", FOLDERS)
@pytest.mark.parametrize("chapter", chapters())
def test_every_chapter_ran_on_the_folder_without_an_error_or_a_warning(folder, chapter):
    if not (ROOT / "_build" / folder).is_dir():
        pytest.skip(f"no book on {folder} (the public resources are absent)")
    notebook = executed(folder, chapter)
    for index, output in outputs(notebook):
        assert output["output_type"] != "error", f"{chapter} cell {index}: {output.get('ename')}"
        if output["output_type"] == "stream":
            assert output["name"] != "stderr", f"{chapter} cell {index}: {''.join(output['text'])}"


def test_the_skipped_sections_are_listed_with_their_reasons(capsys):
    lines = []
    for folder in FOLDERS:
        if not (ROOT / "_build" / folder).is_dir():
            continue
        for chapter in chapters():
            for _, output in outputs(executed(folder, chapter)):
                text = "".join(output.get("data", {}).get("text/markdown", ""))
                lines += [
                    f"{folder}\t{chapter}\t{' '.join(m.split())}" for m in SKIPPED.findall(text)
                ]
    listing = ROOT / "_build" / "any-data-skipped.tsv"
    listing.write_text("folder\tchapter\treason\n" + "\n".join(lines) + "\n", encoding="utf-8")
    with capsys.disabled():
        print(f"\n{len(lines)} skipped section(s), listed in {listing.relative_to(ROOT)}:")
        for line in lines:
            print("  " + line.replace("\t", " | "))
    assert all(line.split("\t")[2].endswith("the section is skipped.") for line in lines)
