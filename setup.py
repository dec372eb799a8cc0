"""The one thing pyproject.toml cannot say: the repository's top-level `sql/` folder ships inside
the package as `newsdedup_dagster/sql` (a package-dir mapping added to the found packages), so an
installed wheel carries its migrations and named queries. Everything else is in pyproject.toml."""

from setuptools import find_namespace_packages, setup

SQL_PACKAGE = "newsdedup_dagster.sql"

setup(
    packages=[
        *find_namespace_packages(include=["newsdedup_dagster*"]),
        SQL_PACKAGE,
        *(f"{SQL_PACKAGE}.{name}" for name in find_namespace_packages(where="sql")),
    ],
    package_dir={SQL_PACKAGE: "sql"},
)
