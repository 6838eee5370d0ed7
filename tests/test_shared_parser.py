"""main() parses with one parser per process (cli.shared_parser): commands run one after another
in a process (the tests, the preloaded jobs' server) see each their own options."""

from __future__ import annotations

from spudflow.cli import build_parser, main, shared_parser


def front_page_parser():
    return shared_parser()._subparsers._group_actions[0].choices["front-page"]


def test_a_command_that_extends_a_default_list_leaves_the_next_commands_default(tmp_path,
                                                                               monkeypatch):
    seen = []

    def extend(args):
        seen.append(list(args.table))
        args.table.append(("spud_examples", tmp_path / "x.parquet"))
        return 0

    monkeypatch.setitem(front_page_parser()._defaults, "handler", extend)
    assert main(["front-page", "--out", str(tmp_path / "one.html")]) == 0
    assert main(["front-page", "--out", str(tmp_path / "two.html")]) == 0
    assert seen == [[], []]
    assert front_page_parser().get_default("table") == []


def test_the_shared_parser_is_built_once_and_parses_as_a_new_one(tmp_path):
    assert shared_parser() is shared_parser()
    argv = ["front-page", "--table", f"spud_examples={tmp_path / 'a.parquet'}",
            "--out", str(tmp_path / "page.html")]
    shared, fresh = shared_parser().parse_args(argv), build_parser().parse_args(argv)
    assert {k: v for k, v in vars(shared).items() if not callable(v)} == \
        {k: v for k, v in vars(fresh).items() if not callable(v)}
