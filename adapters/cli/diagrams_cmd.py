"""``kcontrol diagrams``: draw the transition tables for reviews."""

from __future__ import annotations

from pathlib import Path

import click

from adapters.diagrams import FORMATS, DiagramError, write_all


@click.command(short_help="Draw the state machines' tables.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path),
              default=Path("specs/diagrams"), show_default=True,
              help="Directory to write one file per table into.")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="mermaid",
              show_default=True,
              help="The output format. Mermaid needs nothing installed; dot and svg use Graphviz.")
def diagrams(out: Path, fmt: str) -> None:
    """Draw the partition, replica, ZooKeeper-session and broker-session tables."""
    try:
        paths = write_all(out, fmt)
    except DiagramError as exc:
        raise click.ClickException(str(exc)) from exc
    for p in paths:
        click.echo(f"wrote {p}")
