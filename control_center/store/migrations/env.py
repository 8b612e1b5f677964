"""Alembic environment: migrations run on the connection the store hands over."""

from __future__ import annotations

from alembic import context
from sqlalchemy import create_engine

from control_center.store.tables import metadata

config = context.config


def run_migrations() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        context.configure(connection=connection, target_metadata=metadata, render_as_batch=True)
        with context.begin_transaction():
            context.run_migrations()
        return
    engine = create_engine(config.get_main_option("sqlalchemy.url"))
    try:
        with engine.connect() as conn:
            context.configure(connection=conn, target_metadata=metadata, render_as_batch=True)
            with context.begin_transaction():
                context.run_migrations()
    finally:
        engine.dispose()  # the pooled connection is closed here, not left to the collector


run_migrations()
