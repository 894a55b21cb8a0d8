"""One module, or package of small modules, per protocol. Pure Python, no Textual: each
service takes the ``Project`` (``services.project``) and returns plain dataclasses."""
