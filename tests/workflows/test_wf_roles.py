"""The roles as Django groups: what the migration made, what the admin lets a supervisor do,
and the chat pages, where a supervisor reads another's conversation but does not post in it."""

from __future__ import annotations

import io

import pytest
from django.contrib.auth.models import Group
from django.core.management import call_command

from conversations.models import Message
from workflows import roles

pytestmark = pytest.mark.django_db


def _held(group: Group) -> set[str]:
    return {f"{app}.{codename}" for app, codename in group.permissions.values_list("content_type__app_label", "codename")}


def test_the_migration_made_both_groups_with_their_permissions() -> None:
    # No seed_demo, no create_api_token: what `migrate` alone leaves (and the frozen copy in
    # the migration still agrees with workflows/roles.py).
    assert _held(Group.objects.get(name="Operators")) >= set(roles.OPERATOR_PERMISSIONS)
    assert _held(Group.objects.get(name="Supervisors")) >= set(roles.SUPERVISOR_PERMISSIONS)
    assert "billing.add_billingrule" not in _held(Group.objects.get(name="Operators"))


def test_the_least_role_for_a_set_of_permissions() -> None:
    assert roles.least_role_for(["billing.add_parkingorder"]) == roles.OPERATOR
    assert roles.least_role_for(["billing.add_parkingorder", "billing.add_billingrule"]) == roles.SUPERVISOR
    assert roles.least_role_for(["auth.delete_user"]) is None
    assert set(roles.OPERATOR_PERMISSIONS) < set(roles.SUPERVISOR_PERMISSIONS)


# Django admin screens SPEC gives supervisors: the review queue, runs and audit trails,
# workflow plans, billing rules, orders and verifications, conversations, knowledge.
SUPERVISOR_SCREENS = [
    "/admin/workflows/review/", "/admin/workflows/run/", "/admin/workflows/auditevent/",
    "/admin/workflows/workflowplan/", "/admin/workflows/workflowplan/add/",
    "/admin/billing/billingrule/", "/admin/billing/billingrule/add/",
    "/admin/billing/parkingorder/", "/admin/billing/feeverification/",
    "/admin/conversations/conversation/", "/admin/conversations/knowledgesource/", "/admin/conversations/knowledgechunk/",
]


@pytest.fixture
def group_member(django_user_model):  # noqa: ANN001, ANN201
    """A staff user who is only in the Supervisors group as the migration left it."""
    user = django_user_model.objects.create_user(username="gus", password="x", is_staff=True)
    user.groups.add(Group.objects.get(name="Supervisors"))
    return user


@pytest.mark.parametrize("url", SUPERVISOR_SCREENS)
def test_a_supervisors_group_member_uses_the_admin_screens(client, group_member, url) -> None:  # noqa: ANN001
    client.force_login(group_member)
    assert client.get(url).status_code == 200


def test_a_supervisor_adds_a_billing_rule_in_admin(client, group_member) -> None:  # noqa: ANN001
    from billing.models import BillingRule

    client.force_login(group_member)
    response = client.post("/admin/billing/billingrule/add/", {
        "rule_code": "ADMIN-RULE", "name": "From admin", "scope": '{"city_code": "110100", "lot_codes": []}', "status": "active",
        "versions-TOTAL_FORMS": "0", "versions-INITIAL_FORMS": "0", "versions-MIN_NUM_FORMS": "0", "versions-MAX_NUM_FORMS": "1000",
    })
    assert response.status_code == 302 and BillingRule.objects.filter(rule_code="ADMIN-RULE").exists()


def test_operators_and_persons_have_no_admin(client, operator, person) -> None:  # noqa: ANN001
    for user in (operator, person):
        client.force_login(user)
        assert client.get("/admin/billing/billingrule/").status_code == 302  # to the admin sign-in


@pytest.fixture
def conversation(api):  # noqa: ANN001, ANN201
    call_command("seed_demo", stdout=io.StringIO())
    cid = api.post("/api/v1/conversations", {"workflow_id": "parking_help_desk"}, format="json").json()["id"]
    api.post(f"/api/v1/conversations/{cid}/messages", {"text": "verify order SCN-020"}, format="json")
    return cid


def test_the_owner_gets_a_composer(client, person, conversation) -> None:  # noqa: ANN001
    client.force_login(person)
    page = client.get(f"/c/{conversation}/").content.decode()
    assert 'id="composer"' in page and "Read only" not in page


def test_a_supervisor_reads_a_persons_chat_page_without_posting(client, supervisor, conversation) -> None:  # noqa: ANN001
    client.force_login(supervisor)
    page = client.get(f"/c/{conversation}/")
    assert page.status_code == 200
    html = page.content.decode()
    assert "Read only" in html and 'id="composer"' not in html and "/choose" not in html
    assert client.get(f"/c/{conversation}/updates").status_code == 200
    messages = Message.objects.filter(conversation_id=conversation).count()
    assert client.post(f"/c/{conversation}/send", {"text": "approve it"}).status_code == 403
    assert client.post(f"/c/{conversation}/send", {"text": "approve it"}, HTTP_HX_REQUEST="true").status_code == 403
    assert client.post(f"/c/{conversation}/choose", {"option_id": "adjust_to_simulated", "consent": "yes"}).status_code == 403
    assert Message.objects.filter(conversation_id=conversation).count() == messages


def test_another_person_finds_no_such_chat_page(client, other_person, operator, conversation) -> None:  # noqa: ANN001
    for user in (other_person, operator):
        client.force_login(user)
        assert client.get(f"/c/{conversation}/").status_code == 404
        assert client.post(f"/c/{conversation}/send", {"text": "hi"}).status_code == 404
        assert client.post(f"/c/{conversation}/choose", {"option_id": "adjust_to_simulated"}).status_code == 404


def test_role_checks_cost_few_queries(api, operator_api, supervisor_api, conversation, django_assert_num_queries) -> None:  # noqa: ANN001
    # The token query also answers "supervisor?"; a model permission costs Django's two
    # permission queries (the user's, their groups'), once per request. A person's turns and
    # reads need neither (see tests/conversations/test_cv_turn_queries.py).
    with django_assert_num_queries(3):  # token, user and group permissions; a refusal reads nothing else
        assert api.get("/api/v1/parking-orders/SCN-020").status_code == 403
    with django_assert_num_queries(4):  # the same, and the order
        assert operator_api.get("/api/v1/parking-orders/SCN-020").status_code == 200
    with django_assert_num_queries(2):  # token (supervisor: yes), the conversation's owner
        response = supervisor_api.post(f"/api/v1/conversations/{conversation}/messages", {"text": "hi"}, format="json")
        assert response.status_code == 403
