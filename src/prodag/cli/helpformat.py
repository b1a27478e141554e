"""Plain-text ``--help`` (readable on an 80-column terminal, no boxes) with two things typer's
plain format lacks: a command's options grouped under the panels the options name
(``rich_help_panel``: Data, Model, Fitting, Knowledge, Output; the rest under "Other
options"), and ``prodag --help`` listing each command's whole first sentence instead of
cutting it at the terminal's width.

typer's own panels need its rich format (boxes, colours, wrapped to the terminal), which the
CLI turns off (``rich_markup_mode=None``). The click underneath typer is typer's business
(typer >= 0.29 ships its own copy), so this module uses only ``typer.core``: the context and
formatter its methods receive are whatever typer passes."""

from __future__ import annotations

from typer.core import TyperCommand, TyperGroup

PANELS = ("Data", "Model", "Fitting", "Knowledge", "Output")
"""The panels of options, in the order ``--help`` lists them (``prodag.cli.options`` puts
each shared option in one)."""
OTHER = "Other options"
"""The section of options that name no panel (``--help`` itself, a command's own)."""


class PanelledCommand(TyperCommand):
    """A command whose ``--help`` lists its arguments, then its options panel by panel
    (``PANELS``' order, then any other panel, then the options of none)."""

    def format_options(self, ctx, formatter) -> None:
        sections: dict[str, list] = {}
        for param in self.get_params(ctx):
            record = param.get_help_record(ctx)
            if record is None:
                continue
            name = ("Arguments" if param.param_type_name == "argument"
                    else getattr(param, "rich_help_panel", None) or OTHER)
            sections.setdefault(name, []).append(record)
        others = [name for name in sections if name not in ("Arguments", OTHER, *PANELS)]
        panelled = [name for name in sections if name not in ("Arguments", OTHER)]
        for name in ["Arguments", *PANELS, *others, OTHER]:
            if name in sections:
                title = (name if name == "Arguments" else f"{name} options" if name != OTHER
                         else OTHER if panelled else "Options")
                with formatter.section(title):
                    formatter.write_dl(sections[name])


class SummarisingGroup(TyperGroup):
    """The application: ``--help`` lists every command with its whole first sentence."""

    def format_commands(self, ctx, formatter) -> None:
        rows = [(name, command.get_short_help_str(limit=500))
                for name in self.list_commands(ctx)
                if (command := self.get_command(ctx, name)) is not None and not command.hidden]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)
