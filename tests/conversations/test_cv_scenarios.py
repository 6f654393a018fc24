"""The seed scenarios through the REST API with the rules backend."""

from __future__ import annotations

from datetime import datetime

import pytest

from workflows.models import AuditEvent, Review, RunDocument

pytestmark = pytest.mark.django_db


def _diagnose_capacitor(c) -> None:  # noqa: ANN001
    assert c.say("Roof AC is blowing warm air")["current_step"] == "diagnose"
    c.say("I read 121 volts at the unit")
    c.say("The compressor hums but won't start")
    last = c.say("Capacitor reads 12.5 uF, rated 45 uF")
    assert last["isolation"]["complete"] and last["isolation"]["finding"] == "bad_capacitor"


def test_p0a_ac_replan_rolls_back_the_conclusion(chat) -> None:  # noqa: ANN001
    c = chat("rv_diagnostic")
    _diagnose_capacitor(c)
    assert c.last["current_step"] == "authorization"
    assert c.last["estimate"]["status"] == "draft"  # drafted, not blocking
    assert "capacitor" in c.last["reply"]["text"].lower()
    replan = c.say("Actually I found oily residue and a leak at the evaporator coil")
    assert replan["reply"]["submode"] == "replan"
    assert replan["current_step"] == "diagnose"  # the workflow went back through its replan option
    assert not replan["isolation"]["complete"] and replan["isolation"]["previous_findings"] == ["bad_capacitor"]
    finding = next(f for f in replan["facts"] if f["key"] == "finding:bad_capacitor")
    assert finding["superseded_by"]
    assert any(c_["resolution"].startswith("replan") for c_ in replan["contradictions"])
    assert "leak" in replan["reply"]["text"].lower() or "new evidence" in replan["reply"]["text"].lower()
    again = c.say("Bubble test confirms the leak at the coil joint")
    assert again["isolation"]["finding"] == "refrigerant_leak" and again["current_step"] == "authorization"
    done = c.choose("write_report")
    assert done["status"] == "completed"
    report = RunDocument.objects.filter(run__conversation__id=c.id, key="final_report").latest("version").content
    assert report["cause"][0].startswith("Refrigerant leak")
    assert report["estimate_status"] == "draft"  # the report uses the draft when nothing was confirmed
    replans = AuditEvent.objects.filter(run__conversation__id=c.id, chosen_option_id="replan", event_type="decision")
    assert replans.count() == 1


def test_p0b_never_two_fallbacks_in_a_row_and_no_completed_step_again(chat) -> None:  # noqa: ANN001
    c = chat("rv_diagnostic")
    c.say("Air conditioner does nothing")
    replies = [c.say(text)["reply"] for text in ("hmm", "idk", "??", "no idea", "dunno", "not sure")]
    actions = [r["reply_action"] for r in replies]
    assert "fallback" in actions
    assert all(not (a == b == "fallback") for a, b in zip(actions, actions[1:], strict=False))
    texts = [r["text"] for r in replies]
    assert all(a != b for a, b in zip(texts, texts[1:], strict=False))  # never the same reply twice in a row
    d = chat("rv_diagnostic")
    d.say("AC not cooling")
    d.say("122 volts at the unit")
    asked = [d.say(t)["reply"]["question"] or "" for t in ("hmm", "what?", "compressor runs fine", "ok")]
    power_question = "what voltage do you read"
    assert not any(power_question in q for q in asked)


def test_p0c_side_question_returns_to_the_interrupted_step(chat) -> None:  # noqa: ANN001
    c = chat("rv_diagnostic")
    c.say("Roof AC isn't cooling")
    step = c.say("118 V at the supply")["procedure_step"]
    for side in ("Where is the capacitor on this unit?", "what is a run capacitor?", "how do I check the capacitor?"):
        reply = c.say(side)
        assert reply["reply"]["submode"] in ("locate", "explain", "howto")
        assert reply["procedure_step"] == step and reply["topic_stack"][0]["return_step_id"] == step
        assert reply["reply"]["question"] and reply["reply"]["question"] in reply["reply"]["text"]
        assert len(reply["reply"]["text"]) > len(reply["reply"]["question"]) + 20  # a brief answer came first
    back = c.say("compressor hums but won't start")
    assert back["topic_stack"] == [] and back["procedure_step"] != step and step in back["completed_steps"]
    zh = chat("rv_diagnostic", "zh-hans")
    zh.say("车顶空调不制冷")
    side = zh.say("电容在哪里？")
    assert side["reply"]["submode"] == "locate" and "电控盒" in side["reply"]["text"]
    assert "check_power" in zh.say("电压是120伏")["completed_steps"]


def test_p0d_working_fan_motor_never_leads_to_replacement(chat) -> None:  # noqa: ANN001
    c = chat("rv_diagnostic")
    c.say("My roof vent fan won't run")
    c.say("No 12V at the fan connector with the switch on")
    last = c.say("I jumped 12 V straight from the battery to the motor and it runs fine")
    assert "replace the fan motor" not in last["reply"]["text"].lower()
    motor = next(h for h in last["hypotheses"] if h["id"] == "fan_motor_failed")
    assert motor["status"] == "eliminated"
    c.choose("write_report")
    report = RunDocument.objects.filter(run__conversation__id=c.id, key="final_report").latest("version").content
    assert not any("fan motor" in line.lower() and "replace" in line.lower() for line in report["correction"])


@pytest.mark.parametrize(
    ("script", "action_eligible", "blocker"),
    [
        (["My employee Sam didn't show up for work today"], False, "too_early"),  # first response
        (["My employee Sam didn't show up for two shifts"], False, None),  # the reply asks: clarifying
        (["My employee Sam didn't show up for two shifts", "Yes, I called him twice, no answer",
          "No, first time, nothing documented yet"], True, None),  # post-clarification
        (["What should I do if an employee doesn't show up?"], False, "hypothetical"),  # hypothetical
    ],
)
def test_seed_002_matrix(chat, script, action_eligible, blocker) -> None:  # noqa: ANN001
    c = chat("manager_assistant")
    for text in script:
        last = c.say(text)
    email = next(o for o in last["options"] if o["option_id"] == "draft_email")
    assert (email["eligibility"] == "eligible") is action_eligible, email
    if blocker:
        assert any(blocker in b for b in email["blockers"]), email["blockers"]
    if last["reply"]["asks_question"]:
        assert email["eligibility"] == "blocked"  # never offered in a turn whose reply asks


def test_seed_002_already_in_flow_and_never_twice(chat) -> None:  # noqa: ANN001
    c = chat("manager_assistant")
    for text in ("My employee Sam didn't show up for two shifts", "Yes, I called him twice, no answer", "No, first time, nothing documented yet"):
        c.say(text)
    c.choose("draft_email", expect=409)  # consent first
    done = c.choose("draft_email", consent=True)
    assert done["current_step"] == "guidance" and "email_draft" in done["documents"]
    right_after = next(o for o in done["options"] if o["option_id"] == "draft_email")
    assert right_after["eligibility"] == "blocked"  # never twice, even before the next turn
    after = c.say("Thanks, that helps")
    email = next(o for o in after["options"] if o["option_id"] == "draft_email")
    assert email["eligibility"] == "blocked" and any("already_executed" in b for b in email["blockers"])
    assert c.client.post(f"/api/v1/conversations/{c.id}/choose", {"option_id": "draft_email", "consent": True}, format="json").status_code == 409


def test_permit_clarifying_thread_is_archived_on_the_final_answer(chat) -> None:  # noqa: ANN001
    c = chat("permit_form")
    assert "building type" in c.state["messages"][0]["text"].lower()
    asked = c.say("It's for my business")
    assert asked["reply"]["decision"] == "ask" and asked["form"]["active_thread"]["question_id"] == "3.1.1"
    final = c.say("Mostly offices, about 50 people")
    assert final["form"]["active_thread"] is None
    archived = final["form"]["archived_threads"][-1]
    assert archived["question_id"] == "3.1.1" and archived["entries"][0]["answer"] == "Mostly offices, about 50 people"
    answer = final["form"]["finalized_answers"][0]
    assert (answer["question_id"], answer["answer"]) == ("3.1.1", "commercial")
    assert final["slots"]["building_type"]["value"] == "commercial"


def test_parking_slot_memory_across_turns(chat) -> None:  # noqa: ANN001
    c = chat("parking_help_desk", "zh-hans")
    arrears = c.say("沪B88888在上海有没有欠费？")
    assert arrears["reply"]["intent"] == "arrears_check" and "13.00" in arrears["reply"]["text"]
    plate_turn = arrears["slots"]["plate_no"]["source_turn"]
    verify = c.say("verify the second one")
    assert verify["reply"]["intent"] == "fee_verify" and "SCN-009-C" in verify["reply"]["text"]
    assert verify["slots"]["plate_no"]["source_turn"] == plate_turn  # carried over with its source turn
    e = chat("parking_help_desk")
    ask = e.say("Please verify the fee of my order")
    assert ask["reply"]["decision"] == "ask" and "order" in ask["reply"]["text"].lower()
    given = e.say("It's SCN-019")
    assert given["reply"]["decision"] == "continue" and "match" in given["reply"]["text"].lower()
    f = chat("parking_help_desk")
    first = f.say("How is parking charged at lot SH-PD-002 on 2026-03-31 at 10:00?")
    assert "SH-PD2-DAYNIGHT v1" in first["reply"]["text"]
    follow = f.say("what about on 2026-04-02 at 10:00?")
    assert follow["slots"]["lot_code"]["value"] == "SH-PD-002"
    assert "SH-PD2-DAYNIGHT v2" in follow["reply"]["text"]  # the date changed, the lot stayed


def test_mismatch_in_conversation_reaches_review_and_decision_changes_the_order(
    chat, supervisor_api, operator_api, django_capture_on_commit_callbacks
) -> None:  # noqa: ANN001
    c = chat("parking_help_desk", "zh-hans")
    r = c.say("订单SCN-020收了18块，是不是收多了？")
    assert r["status"] == "waiting_review" and "主管" in r["reply"]["text"]
    assert "18.00" in r["reply"]["text"] and "14.00" in r["reply"]["text"] and "SH-PD-DAY" in r["reply"]["text"]
    review = supervisor_api.get("/api/v1/reviews?status=pending").json()["results"][0]
    assert review["conversation_id"] == c.id and review["subject"]["order_no"] == "SCN-020"
    assert review["recommended_option_id"] == "adjust_to_simulated"
    with django_capture_on_commit_callbacks(execute=True):  # the test's transaction never commits
        decided = supervisor_api.post(f"/api/v1/reviews/{review['id']}/decision", {"outcome": "approve", "reason": "rule is right"}, format="json")
    assert decided.status_code == 200
    order = operator_api.get("/api/v1/parking-orders/SCN-020").json()  # orders are the operator's to read
    assert order["total_amount"] == "14.00"
    state = c.get()
    assert state["status"] == "active" and state["review"]["status"] == "approved"
    last = c.client.get(f"/api/v1/conversations/{c.id}/messages").json()["results"][-1]
    assert "14.00" in last["text"] and last["kind"] == "review_decided"
    assert Review.objects.get(pk=review["id"]).decided_option_id == "adjust_to_simulated"


@pytest.mark.parametrize(("locale", "first", "second", "expected"), [
    ("en", "How is parking charged at lot SH-PD-001 on 2026-03-02 at 10:00?", "Order SCN-020 charged 18, is that too much?", "fee_verify"),
    ("en", "verify order SCN-019", "How much is parking at lot SH-PD-001 on 2026-03-02 at 10:00?", "rule_explain"),
    ("zh-hans", "SH-PD-001 停车场 2026-03-02 10:00 怎么收费？", "订单SCN-020收了18块，是不是收多了？", "fee_verify"),
])
def test_when_remembered_slots_allow_two_intents_the_detail_given_now_decides(chat, locale, first, second, expected) -> None:  # noqa: ANN001
    c = chat("parking_help_desk", locale)
    opening = c.say(first)["reply"]
    assert opening["decision"] == "continue" and opening["intent"] != expected, opening["text"]
    reply = c.say(second)["reply"]
    assert reply["intent"] == expected and reply["decision"] == "continue", reply["text"]


def test_with_nothing_new_in_the_message_the_person_is_asked_which(chat) -> None:  # noqa: ANN001
    c = chat("parking_help_desk")
    c.say("How is parking charged at lot SH-PD-001 on 2026-03-02 at 10:00?")
    c.say("verify order SCN-019")
    reply = c.say("is the charge too much?")["reply"]
    assert reply["decision"] == "ask" and "verify" in reply["text"]


@pytest.mark.parametrize(("locale", "switch"), [
    ("en", "can you check order SCN-019 is correct"),
    ("zh-hans", "订单SCN-019帮我看一下"),
])
def test_a_detail_only_another_intent_uses_moves_the_conversation_there(chat, locale, switch) -> None:  # noqa: ANN001
    c = chat("parking_help_desk", locale)
    assert c.say("How is parking charged at lot SH-PD-001 on 2026-03-02 at 10:00?")["reply"]["intent"] == "rule_explain"
    body = c.say(switch)
    assert body["reply"]["intent"] == "fee_verify" and "fee_verify" in body["execution_path"]["tools_called"][0]
    assert "SCN-019" in body["reply"]["text"] and "12.00" in body["reply"]["text"]


@pytest.mark.parametrize(("locale", "thanks", "welcome"), [
    ("en", "thanks, that helps", "You're welcome"), ("zh-hans", "谢谢", "不客气"), ("en", "Thank you!", "You're welcome"),
])
def test_thanks_gets_a_welcome_and_the_next_options(chat, locale, thanks, welcome) -> None:  # noqa: ANN001
    c = chat("parking_help_desk", locale)
    c.say("verify order SCN-019")
    text = c.say(thanks)["reply"]["text"]
    assert text.startswith(welcome) and ("Finish" in text or "结束" in text)


@pytest.mark.parametrize("workflow_id", ["manager_assistant", "permit_form", "project_intake"])
@pytest.mark.parametrize(("locale", "filler"), [("en", "hello"), ("en", "I need help"), ("en", "thanks"), ("zh-hans", "你好"), ("zh-hans", "谢谢")])
def test_a_greeting_thanks_or_plea_is_never_recorded_as_a_form_answer(chat, workflow_id, locale, filler) -> None:  # noqa: ANN001
    c = chat(workflow_id, locale)
    body = c.say(filler)
    assert body["form"]["finalized_answers"] == [] and not body["reply"]["text"].startswith(("Recorded", "已记录", "Noted", "已记下"))
    assert body["reply"]["asks_question"]


@pytest.mark.parametrize(("locale", "text", "intent"), [
    ("zh-hans", "我的车沪B88888还欠多少钱", "arrears_check"),
    ("en", "how much do I owe for plate 沪B88888", "arrears_check"),
    ("en", "I parked at SH-PD-002 from 8pm, what's the fee?", "rule_explain"),
])
def test_everyday_phrasings_reach_the_right_tool(chat, locale, text, intent) -> None:  # noqa: ANN001
    body = chat("parking_help_desk", locale).say(text)
    assert body["reply"]["intent"] == intent and body["reply"]["decision"] == "continue", body["reply"]["text"]
    assert body["execution_path"]["tools_called"] == [f"billing.{intent}"]


def test_an_afternoon_range_last_saturday_is_priced_as_three_hours(chat) -> None:  # noqa: ANN001
    """Issue 14: "从下午两点到五点" was 14:00 to 05:00 the next day (20.00), "上周六" was ignored."""
    c = chat("parking_help_desk", "zh-hans")
    r = c.say("上周六下午两点到五点在SH-PD-001停车要多少钱？")
    start, end = (datetime.fromisoformat(r["slots"][k]["value"]) for k in ("at_time", "until_time"))
    assert start.weekday() == 5 and (start.hour, end.hour) == (14, 17) and end.date() == start.date()
    assert "17:00：12.00元" in r["reply"]["text"]


@pytest.mark.parametrize(("locale", "first", "correction", "end_hour", "amount"), [
    ("zh-hans", "上周六下午两点到四点在SH-PD-001停车要多少钱？", "不对，我是下午5点就开走了", 17, "12.00"),
    ("en", "How much for parking at SH-PD-001 last Saturday from 2pm to 4pm?", "no wait, I actually left at 6pm", 18, "16.00"),
    ("en", "What would 2pm till 4pm at SH-PD-001 cost last Saturday?", "sorry, I drove out at 5", 17, "12.00"),
])
def test_a_corrected_exit_time_reprices_the_stay(chat, locale, first, correction, end_hour, amount) -> None:  # noqa: ANN001
    """Issue 14: the correction "不对，我是下午5点就开走了" got a bare menu; the entry stays, the exit changes."""
    c = chat("parking_help_desk", locale)
    c.say(first)
    r = c.say(correction)
    start, end = (datetime.fromisoformat(r["slots"][k]["value"]) for k in ("at_time", "until_time"))
    assert (start.hour, end.hour, end.date()) == (14, end_hour, start.date())
    assert amount in r["reply"]["text"] and r["reply"]["decision"] == "continue"


def test_form_answers_are_corrected_in_place_and_said(chat) -> None:  # noqa: ANN001
    """Issue 14: "no, I meant 3 storeys" and "change the floor area to 1,450" replace the earlier answer."""
    c = chat("permit_form")
    for text in ("residential", "2", "no, I meant 3 storeys", "1,400 sq ft", "change the floor area to 1,450"):
        r = c.say(text)
    answers = {a["question_id"]: a["answer"] for a in r["form"]["finalized_answers"]}
    assert answers == {"3.1.1": "residential", "3.1.2": "3 storeys", "3.1.3": "1450 sq ft"}
    assert [a["question_id"] for a in r["form"]["finalized_answers"]] == ["3.1.1", "3.1.2", "3.1.3"]  # form order kept
    assert "from 1400 sq ft to 1450 sq ft" in r["reply"]["text"]
    assert r["form"]["active_thread"] is None or r["form"]["active_thread"]["question_id"] == "3.1.4"
    c.say("a single-family house")
    # a plain answer to the pending question that says "actually" is not a correction of the last one
    r = c.say("actually, it's offices, Group D")
    assert {a["question_id"]: a["answer"] for a in r["form"]["finalized_answers"]}["3.2.1"] == "Group D"


def test_a_chinese_correction_of_a_form_answer(chat) -> None:  # noqa: ANN001
    c = chat("permit_form", "zh-hans")
    for text in ("住宅", "两层", "不对，应该是3层"):
        r = c.say(text)
    assert {a["question_id"]: a["answer"] for a in r["form"]["finalized_answers"]}["3.1.2"] == "3 storeys"
    assert "改为“3层”" in r["reply"]["text"] and "storeys" not in r["reply"]["text"]  # said in Chinese


def test_a_message_nothing_matched_never_gets_a_bare_menu(chat) -> None:  # noqa: ANN001
    c = chat("parking_help_desk")
    r = c.say("my car got towed, what now?")
    assert r["reply"]["text"].startswith("I can help you")  # what the desk can do, not just "You can choose: Finish"


@pytest.mark.parametrize(("locale", "first", "again", "said"), [
    ("en", "order SCN-020 charged me 18, that seems too much", "ok so what about the refund for SCN-020?",
     ("adjusted this order from 18.00 to 14.00", "owed back to you", "7 working days")),
    ("zh-hans", "订单SCN-020收了18块，是不是收多了？", "那SCN-020多付的钱能退吗？", ("从18.00调整为14.00", "退还", "7个工作日")),
])
def test_an_adjusted_order_asked_about_again_says_what_the_adjustment_means(
    chat, supervisor_api, django_capture_on_commit_callbacks, locale, first, again, said,
) -> None:  # noqa: ANN001
    # given an order a supervisor adjusted below what was paid, after the person's check
    from billing.models import ParkingOrder

    ParkingOrder.objects.filter(order_no="SCN-020").update(paid_amount="18.00", arrears_amount="0.00", status="paid", is_credit=True)
    c = chat("parking_help_desk", locale)
    assert c.say(first)["status"] == "waiting_review"
    review = supervisor_api.get("/api/v1/reviews?status=pending").json()["results"][0]
    with django_capture_on_commit_callbacks(execute=True):
        supervisor_api.post(f"/api/v1/reviews/{review['id']}/decision", {"outcome": "approve", "reason": "the rule gives 14"}, format="json")
    # when the person asks about it again
    reply = c.say(again)["reply"]["text"]
    # then the reply says the adjustment, the overpayment and how the refund is made (the operator's policy, cited)
    assert all(part in reply for part in said), reply
    assert "The amounts match: the fee is correct." not in reply and "金额一致，收费正确" not in reply
