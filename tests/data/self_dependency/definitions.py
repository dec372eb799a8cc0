"""A code location of two subsettable hourly multi-assets, each holding an upstream asset and a
downstream one that reads its own previous hour, to show what Dagster's backfill daemon does with
them (tests/test_dagster_self_dependency.py):

- `declared`: the downstream asset declares the previous hour as a self-dependency
  (`TimeWindowPartitionMapping(start_offset=-1, end_offset=-1)`);
- `tagged`: the same, said by a tag instead (what the hourly assets of newsdedup do).

Both walk their hours in time order inside the op, like `assets/hourly.py`."""

from dagster import (
    AssetDep,
    AssetSpec,
    BackfillPolicy,
    Definitions,
    HourlyPartitionsDefinition,
    MaterializeResult,
    TimeWindowPartitionMapping,
    multi_asset,
)

HOURS = HourlyPartitionsDefinition(start_date="2026-11-02-00:00")


def _hourly_op(name: str, downstream_deps: list, tags: dict):
    upstream = AssetSpec(f"{name}_upstream", partitions_def=HOURS)
    downstream = AssetSpec(f"{name}_downstream", partitions_def=HOURS, deps=downstream_deps, tags=tags)

    @multi_asset(name=name, specs=[upstream, downstream], partitions_def=HOURS, can_subset=True,
                 backfill_policy=BackfillPolicy.single_run())
    def op(context):
        hours = list(context.partition_keys) if context.has_partition_key_range else [context.partition_key]
        for hour in hours:
            for key in sorted(context.selected_asset_keys, key=lambda k: not k.path[0].endswith("upstream")):
                if len(hours) > 1:
                    from dagster import AssetMaterialization

                    yield AssetMaterialization(asset_key=key, partition=hour)
                else:
                    yield MaterializeResult(asset_key=key)

    return op


declared = _hourly_op("declared", [
    "declared_upstream",
    AssetDep("declared_downstream", partition_mapping=TimeWindowPartitionMapping(start_offset=-1, end_offset=-1)),
], {})
tagged = _hourly_op("tagged", ["tagged_upstream"], {"newsdedup/reads_previous_hour": "true"})

defs = Definitions(assets=[declared, tagged])
