"""benchmarks/_results.py keeps RESULTS.md to the latest figures: writing a benchmark's section replaces the one it
had (the others stay as they are) and appends the replaced section to the benchmark's history file."""
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).parents[1] / "benchmarks"))

import _results  # noqa: E402


def test_a_section_is_replaced_and_the_old_one_goes_to_history(tmp_path):
    results, history = tmp_path / "RESULTS.md", tmp_path / "history"
    results.write_text("# results\n\n<!-- begin other -->\n## Other\n\nkept\n<!-- end other -->\n")
    _results.write_section("demo", "Demo", "| a |\n|---|\n| 1 |", results=str(results), history=str(history))
    first = results.read_text()
    assert first.count("<!-- begin demo -->") == 1 and "| 1 |" in first and "kept" in first
    assert "commit `" in first and not history.exists()
    _results.write_section("demo", "Demo", "| a |\n|---|\n| 2 |", results=str(results), history=str(history))
    second = results.read_text()
    assert second.count("<!-- begin demo -->") == 1 and "| 2 |" in second and "| 1 |" not in second
    assert second.startswith("# results\n\n<!-- begin other -->\n## Other\n\nkept\n<!-- end other -->\n")
    old = (history / "demo.md").read_text()
    assert "| 1 |" in old and "| 2 |" not in old and "<!-- begin" not in old
    _results.write_section("demo", "Demo", "| a |\n|---|\n| 3 |", results=str(results), history=str(history))
    old = (history / "demo.md").read_text()
    assert old.index("| 1 |") < old.index("| 2 |") and "| 3 |" not in old


def test_the_results_file_holds_one_section_per_benchmark():
    text = (pathlib.Path(__file__).parents[1] / "benchmarks" / "RESULTS.md").read_text()
    names = [line.split()[2] for line in text.splitlines() if line.startswith("<!-- begin ")]
    assert names and len(names) == len(set(names))
    assert all(f"<!-- end {n} -->" in text for n in names)
    assert len(text.splitlines()) < 400
