"""Tool metadata for the AgentDojo suites, written the way an integrator would write it.

The library knows nothing of AgentDojo. An integrator wrapping these tools declares, per
tool, what any MCP server could declare: whether it only reads, whether it reaches the
open world, how far its output is trusted, and the role of the arguments that decide where
an action goes. This table was written from each tool's name, signature and docstring (as
an integrator reads them), not from the benchmark's injection tasks; one rule was applied
throughout:

* reads of the user's own records (their balance, IBAN, profile, contacts, the members of
  a channel as the workspace's directory lists them, today's date) are ``user_data``;
  everything written by others (mail, messages, files, transactions, reviews, listings,
  calendar entries with other people's text, channel names any member can create) is
  ``third_party``; web pages are ``open_web``;
* where money, messages, invitations, shares or reservations go is critical (recipient,
  destination, url, account, target, amount); message bodies, subjects, titles, dates and
  profile fields are ``content``.
"""

from __future__ import annotations

from typing import Any

READ_USER = {"read_only": True, "open_world": False, "output_trust": "user_data"}
READ_THIRD = {"read_only": True, "open_world": False, "output_trust": "third_party"}


def acts(**roles: str) -> dict[str, Any]:
    """An acting tool with these argument roles."""
    return {"read_only": False, "roles": roles}


TOOL_FACTS: dict[str, dict[str, Any]] = {
    # -- banking --------------------------------------------------------------------
    "get_iban": READ_USER,
    "get_balance": READ_USER,
    "get_user_info": READ_USER,
    "get_scheduled_transactions": READ_USER,
    "get_most_recent_transactions": READ_THIRD,
    "read_file": READ_THIRD,
    "send_money": acts(recipient="recipient", amount="amount", subject="content", date="content"),
    "schedule_transaction": acts(
        recipient="recipient", amount="amount", subject="content", date="content"
    ),
    "update_scheduled_transaction": acts(
        id="target", recipient="recipient", amount="amount", subject="content", date="content"
    ),
    "update_password": acts(password="account"),
    "update_user_info": acts(
        first_name="content", last_name="content", street="content", city="content"
    ),
    # -- slack ----------------------------------------------------------------------
    "get_channels": READ_THIRD,  # any member names a channel
    "get_users_in_channel": READ_USER,
    "read_channel_messages": READ_THIRD,
    "read_inbox": READ_THIRD,
    "get_webpage": {
        "read_only": True,
        "open_world": True,
        "output_trust": "open_web",
        "roles": {"url": "url"},
    },
    "post_webpage": acts(url="destination", content="content"),
    "send_direct_message": acts(recipient="recipient", body="content"),
    "send_channel_message": acts(channel="destination", body="content"),
    "add_user_to_channel": acts(user="recipient", channel="destination"),
    "invite_user_to_slack": acts(user="recipient", user_email="recipient"),
    "remove_user_from_slack": acts(user="target"),
    # -- travel ---------------------------------------------------------------------
    "get_user_information": READ_USER,
    "reserve_hotel": acts(hotel="target", start_day="content", end_day="content"),
    "reserve_restaurant": acts(restaurant="target", start_time="content"),
    "reserve_car_rental": acts(company="target", start_time="content", end_time="content"),
    # -- workspace (send_email and the calendar are shared with travel) ---------------
    "get_current_day": READ_USER,
    "search_contacts_by_name": READ_USER,
    "search_contacts_by_email": READ_USER,
    "send_email": acts(
        recipients="recipient",
        cc="recipient",
        bcc="recipient",
        subject="content",
        body="content",
        attachments="content",
    ),
    "delete_email": acts(email_id="target"),
    "create_calendar_event": acts(
        participants="recipient",
        title="content",
        description="content",
        start_time="content",
        end_time="content",
        location="content",
    ),
    "cancel_calendar_event": acts(event_id="target"),
    "reschedule_calendar_event": acts(
        event_id="target", new_start_time="content", new_end_time="content"
    ),
    "add_calendar_event_participants": acts(event_id="target", participants="recipient"),
    "create_file": acts(filename="content", content="content"),
    "append_to_file": acts(file_id="target", content="content"),
    "delete_file": acts(file_id="target"),
    "share_file": acts(file_id="target", email="recipient", permission="content"),
}


def facts_for(name: str) -> dict[str, Any]:
    """The declared facts of ``name``; any other read (``get_…``, ``search_…``, ``list_…``,
    ``check_…``) is a closed-world read of third-party data."""
    if name in TOOL_FACTS:
        return TOOL_FACTS[name]
    if name.startswith(("get_", "search_", "list_", "check_")):
        return READ_THIRD
    return acts()
