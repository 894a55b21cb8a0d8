"""One arc checkpoint: its phases in PHASE_ORDER, coloured by status, demotions marked."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from runeconsole.services.checkpoints import SCHEMA_VERSION, ResumePlan
from runeconsole.tui.modals.detail_modal import DetailModal
from runeconsole.tui.support.theme import ACTION_STYLE, DEMOTED_MARK, PHASE_MARK


def schema_note(plan: ResumePlan) -> str:
    version = f"v{plan.from_version or '?'}"
    if plan.newer:
        return f"{version}: newer than this runeconsole (v{SCHEMA_VERSION}); read-only"
    return f"{version} -> v{SCHEMA_VERSION}"


def phases_table(plan: ResumePlan) -> Table:
    table = Table.grid(padding=(0, 2))
    table.add_column(justify="right", style="dim")
    table.add_column(no_wrap=True)
    table.add_column()
    for view in plan.phases():
        glyph, style = PHASE_MARK.get(view.status, ("?", "red"))
        status = Text(f"{glyph} {view.status}", style)
        if view.demoted:
            status = Text.assemble((f"{DEMOTED_MARK[0]} ", DEMOTED_MARK[1]), (view.status, style))
            status.append("  demoted: artifact changed or missing", "magenta")
        elif view.name == plan.resume_from:
            status.append("  <- resume here", "bold yellow")
        name = Text(view.name, "bold" if view.name == plan.resume_from else "")
        if view.retired:
            status.append("  retired: no longer run", "dim")
        elif not view.known:
            status.append("  not in PHASE_ORDER", "dim")
        table.add_row(str(view.number or "-"), name, status)
    return table


class ArcDetail(DetailModal):
    def __init__(self, plan: ResumePlan) -> None:
        super().__init__()
        self.plan = plan

    def title_text(self) -> Text:
        plan = self.plan
        return Text.assemble(
            (plan.checkpoint_id or plan.path.parent.name, "bold"),
            (f"  {schema_note(plan)}  ", "dim"),
            (plan.action.replace("_", " "), ACTION_STYLE[plan.action]),
        )

    def body(self) -> RenderableType:
        plan = self.plan
        parts: list[RenderableType] = [Text(plan.message)]
        if plan.checkpoint:
            parts += [Text("\nPhases", "bold"), phases_table(plan)]
        if plan.warnings:
            parts.append(Text("\nWarnings", "bold"))
            parts += [Text(w, "yellow") for w in plan.warnings]
        return Group(*parts)
