"""What a fake agent does and shows: its tool calls by work phase and the prompts it stops at."""

TOOLS = {
    "investigation": ["Read(src/{m}.py)", 'Grep(pattern: "def {m}", path: "src")', "Glob(**/*.py)"],
    "planning": ["Update Todos"],
    "implementation": ["Update(src/{m}.py)", "Write(src/{m}_helpers.py)"],
    "testing": ["Bash(python -m pytest tests/test_{m}.py -q)"],
    "completion": ['Bash(git commit -am "{m}: done")'],
}
PROMPTS = (
    (
        "Bash command",
        "python -m pytest tests -q",
        "Do you want to proceed?",
        ["Yes", "Yes, and don't ask again for python -m pytest commands", "No (esc)"],
    ),
    (
        "☐ Approach",
        "",
        "Should the {m} cache live in memory or on disk?",
        ["In memory", "On disk", "Type something."],
    ),
)
# The harness's coarser phase for each work phase, so both readers see a moving agent.
HARNESS_PHASE = {
    "investigation": "planning",
    "planning": "planning",
    "implementation": "executing",
    "testing": "executing",
    "completion": "impl_complete",
}
