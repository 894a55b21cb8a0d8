"""``runeconsole serve``'s decisions, with no web framework in them: the access token
(``token.py``), who may come in and how fast a wrong guess is answered (``access.py``),
which addresses may be bound without TLS (``bind.py``), and the record of a running
served console that notifications link to (``record.py``). The aiohttp app that applies
them lives in ``runeconsole.web``."""

from runeconsole.services.serving.access import Access, Verdict
from runeconsole.services.serving.bind import BindPlan, plan_bind
from runeconsole.services.serving.record import announced, served_url, user_state_dir
from runeconsole.services.serving.throttle import FailureThrottle
from runeconsole.services.serving.token import load_or_create_token

__all__ = [
    "Access",
    "BindPlan",
    "FailureThrottle",
    "Verdict",
    "announced",
    "load_or_create_token",
    "plan_bind",
    "served_url",
    "user_state_dir",
]
