"""``runeconsole serve``'s decisions, with no web framework in them: the access token
(``token.py``), who may come in (``access.py``), how fast a wrong guess is answered
(``throttle.py``),
which addresses may be bound without TLS (``bind.py``), and the record of a running
served console that notifications link to (``record.py``). The aiohttp app that applies
them lives in ``runeconsole.web``.

Nothing is imported here: Claude Code's hook reads ``record.py`` when it notifies, and
must not pay for the rest."""
