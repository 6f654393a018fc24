"""Check a plan file before uploading it: every problem with its JSON path, and what sample messages are read as."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from conversations.engine import ConversationConfig
from conversations.engine.simulate import Dialogue
from conversations.engine.turn import TurnOutcome
from workflows.engine.plan_files import PlanFileError, read_plan
from workflows.services.plans import plan_problems


class Command(BaseCommand):
    help = ("Validate a plan file or folder as an upload would (every problem with its JSON path; exit 1 when there is "
            "one), then, for each --say message, show what the concierge reads in it: the intent, the slots it fills "
            "with their values, the form answer, the facts. Each message starts a new conversation unless --in-order.")

    def add_arguments(self, parser) -> None:  # noqa: ANN001
        parser.add_argument("path", type=Path, help="a plan JSON file or a plan folder")
        parser.add_argument("--say", action="append", default=[], metavar="MESSAGE", help="a sample message (repeatable)")
        parser.add_argument("--in-order", action="store_true", help="say the messages one after another in one conversation")
        parser.add_argument("--locale", default=None, help="the conversation's language (default: the plan's)")

    def handle(self, *args, path: Path, say: list[str], in_order: bool, locale: str | None, **options) -> None:  # noqa: ANN002, ANN003
        try:
            document = read_plan(path)
        except PlanFileError as error:
            raise CommandError(str(error)) from error
        problems = plan_problems(document)
        name = document.get("workflow_id", path.name)
        if problems:
            for problem in problems:
                self.stdout.write(f"  {problem.path}: {problem.message}")
            raise CommandError(f"{name}: {len(problems)} problem(s)")
        config = ConversationConfig.from_dict(document.get("conversation") or {})
        self.stdout.write(f"{name}: valid ({len(document['nodes'])} steps, {len(document['edges'])} options, "
                          f"{len(config.intents)} intents, {len(config.slots)} slots"
                          f"{f', {len(config.form.questions)} questions' if config.form else ''})")
        dialogue = None
        for message in say:
            if dialogue is None or not in_order:
                dialogue = Dialogue(config, timezone.now(), locale=locale)
            self.stdout.write(f"“{message}”")
            for line in read_as(dialogue.say(message), with_intent=bool(config.intents)):
                self.stdout.write(f"  {line}")


def read_as(outcome: TurnOutcome, *, with_intent: bool) -> list[str]:
    """What one message was read as, in lines an author can check against what they meant."""
    state = outcome.state
    lines = [f"intent: {outcome.resolved_intent or 'none'}"] if with_intent else []
    if outcome.slots_changed:
        lines.append("slots: " + ", ".join(f"{name}={state.slots[name].value}" for name in outcome.slots_changed if name in state.slots))
    if outcome.form_answer_finalized is not None:
        answer = outcome.form_answer_finalized
        lines.append(f"answers {answer.question_id}: {answer.answer}")
    lines += [f"also answers {c.question_id}: {c.value}" for c in outcome.form_volunteered]
    facts = [f for f in state.facts if f.id in outcome.facts_added]
    if facts:
        lines.append("facts: " + ", ".join(f"{f.key} ({f.value})" for f in facts))
    lines += [f"not certain: {command.describe()}" for command in outcome.unsure_commands]
    if outcome.unread:
        lines.append("not read: " + " / ".join(outcome.unread))
    question = outcome.question or outcome.next_step_question
    if question:
        lines.append(f"asks: {question}")
    return lines
