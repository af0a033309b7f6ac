"""A team: its own file (namespace, quota, claim templates, workloads) and how a stack hosts it."""

from __future__ import annotations

from pydantic import Field, field_validator, model_validator
from pydantic.json_schema import SkipJsonSchema

from gpu_dra.core.config.models.base import Model, raise_field_errors
from gpu_dra.core.config.models.fields import Description, DnsLabel, RepositoryPath, devices_per_class
from gpu_dra.core.config.models.kueue import Queue
from gpu_dra.core.config.models.templates import MAX_TEMPLATES_PER_TEAM, ClaimTemplate
from gpu_dra.core.dra import metadata

ADMIN_ACCESS_LABEL = "resource.kubernetes.io/admin-access"


class Quota(Model):
    """Caps on a team's namespace: claims in total and devices per class."""

    claims: int | None = Field(default=None, ge=0, description="count/resourceclaims.resource.k8s.io")
    devices: dict[str, int] = Field(default_factory=dict,
                                    description="<class>.deviceclass.resource.k8s.io/devices per class")

    @field_validator("devices")
    @classmethod
    def _devices(cls, values: dict[str, int]) -> dict[str, int]:
        return devices_per_class(values)


class Namespace(Model):
    name: DnsLabel | None = Field(default=None, description="Default: the team's name")
    labels: dict[str, str] = Field(default_factory=dict)
    annotations: dict[str, str] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _as_the_api_server(self) -> Namespace:
        """Every label and annotation the API server refuses, each on its own key (the annotations' total size on
        `annotations`)."""
        found: list[tuple[str | tuple[str, ...], str]] = [
            (("labels", key), problem) for key, problem in metadata.label_problems(self.labels)]
        found += [(("annotations", key) if key else "annotations", problem)
                  for key, problem in metadata.annotation_problems(self.annotations)]
        raise_field_errors("Namespace", found)
        return self


class Team(Model):
    """A team's own file, `stacks/teams/<team>.yaml`: its namespace, quota and claim templates."""

    name: DnsLabel
    description: Description | None = None
    # Granted by the stack (gpu-dra:teams.<team>.admin), never by the team's file: see TeamHosting.admin.
    admin: SkipJsonSchema[bool] = False
    namespace: Namespace = Namespace()
    quota: Quota = Quota()
    queue: Queue | None = Field(default=None, description="The team's Kueue queue, where the stack runs Kueue "
                                                          "(gpu-dra:kueue): ignored on a stack without it")
    claim_templates: list[ClaimTemplate] = Field(
        default_factory=list, max_length=MAX_TEMPLATES_PER_TEAM,
        description=f"At most {MAX_TEMPLATES_PER_TEAM}: each is a Kubernetes object every check explains on the fleet")
    workloads: list[RepositoryPath] = Field(
        default_factory=list,
        description="The team's GPU workload manifests (files or folders in the repository): the policy rule "
                    "legacy-workloads-placed fails a stack change that leaves one needing the device plugin with "
                    "nowhere to run; `gpu-dra migrate --stack S` reads them when given no FILE")

    @property
    def namespace_name(self) -> str:
        return self.namespace.name or self.name

    @model_validator(mode="after")
    def _consistent(self) -> Team:
        found: list[tuple[str, str]] = []
        names = [t.name for t in self.claim_templates]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            found.append(("claimTemplates", f"template names must be unique; repeated: {', '.join(dupes)}"))
        raise_field_errors("Team", found)
        return self


class TeamHosting(Model):
    """How a stack hosts a team: per-stack overrides of the team's own file."""

    quota: Quota | None = None
    queue: Queue | None = Field(default=None, description="Replaces the team file's queue on this stack")
    admin: bool = Field(
        default=False,
        description="Grants the team DRA admin access here: its namespace gets resource.kubernetes.io/admin-access="
                    "\"true\" and its templates may use adminAccess. Only the platform's stack file decides this; "
                    "a team file that sets admin fails the policy team-file-platform-keys")
