"""Measure the recognizers on their test sets: read right, marked not certain and confidently wrong, per kind and language."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from conversations.recognizer_eval import KINDS, evaluate, load_cases


class Command(BaseCommand):
    help = ("Read every expression of the recognizer test sets (tests/recognizers/*.json) and print, per kind and "
            "language, the share read right, marked not certain, confidently wrong and missed; --libraries adds the "
            "well-kept libraries' figures on the same cases where they are installed (pip install '.[compare]').")

    def add_arguments(self, parser) -> None:  # noqa: ANN001
        parser.add_argument("kinds", nargs="*", choices=[[], *KINDS], default=[], help="the kinds to read (default: all)")
        parser.add_argument("--show", action="store_true", help="print every case not read right, with its reading")
        parser.add_argument("--libraries", action="store_true", help="also read the cases with the libraries compared")
        parser.add_argument("--max-wrong", type=float, default=None,
                            help="exit non-zero when the confidently wrong share (in %%) of any kind is above this")
        parser.add_argument("--min-right-or-unsure", type=float, default=None,
                            help="exit non-zero when the share read right or marked not certain (in %%) of any kind is below this")

    def handle(self, *args, kinds: list[str], show: bool, libraries: bool, max_wrong: float | None,  # noqa: ANN002, ANN003
               min_right_or_unsure: float | None, **options) -> None:
        readers, languages = {}, {}
        if libraries:
            from conversations.recognizer_libraries import LANGUAGES_READ, available_readers

            readers, languages = available_readers(), LANGUAGES_READ
            if not readers:
                self.stderr.write("no library to compare is installed (pip install '.[compare]')")
        report = evaluate(load_cases(kinds or KINDS), readers, show=show, languages=languages)
        for note in report.notes:
            self.stdout.write(note)
        for line in report.lines():
            self.stdout.write(line)
        failures = []
        for kind in kinds or KINDS:
            total = report.total("ours", kind)
            cases = max(1, sum(total.values()))
            wrong, good = 100 * total["wrong"] / cases, 100 * (total["right"] + total["unsure"]) / cases
            self.stdout.write(f"{kind}: {sum(total.values())} cases, right {100 * total['right'] / cases:.1f}%, "
                              f"right or not certain {good:.1f}%, confidently wrong {wrong:.1f}%")
            if max_wrong is not None and wrong > max_wrong:
                failures.append(f"{kind}: confidently wrong {wrong:.1f}% > {max_wrong}%")
            if min_right_or_unsure is not None and good < min_right_or_unsure:
                failures.append(f"{kind}: right or not certain {good:.1f}% < {min_right_or_unsure}%")
        if failures:
            raise CommandError("; ".join(failures))
