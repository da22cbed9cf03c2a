"""The Osmosis benchmark config, exactly as the platform documents it, and its submit payload.

Structure and types live here (every table forbids unknown keys); the platform's semantic rules
live in `rules.py`, so that `reconciler validate` and the local platform apply the same table.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, PrivateAttr, ValidatorFunctionWrapHandler, model_validator

from ..values import Value

INT64_MAX = 2**63 - 1  # a platform keeps integers in 64 bits


class _Table(Value):
    # allow_inf_nan: TOML's inf and nan have no JSON form, so no submit body could carry them
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, allow_inf_nan=False)


class Experiment(_Table):
    benchmark: str


class Tasks(_Table):
    task_set: str | None = None
    task_names: list[str] | None = None
    categories: list[str] | None = None
    _written_order: tuple[str, ...] = PrivateAttr(default=())

    @model_validator(mode="wrap")
    @classmethod
    def _remember_key_order(cls, data: Any, handler: ValidatorFunctionWrapHandler) -> Any:
        # rules report a second task selector at its own line, so keep the order keys were written in
        tasks = handler(data)
        if isinstance(data, dict) and isinstance(tasks, Tasks):
            tasks._written_order = tuple(str(key) for key in data)
        return tasks

    @property
    def selectors(self) -> tuple[str, ...]:
        """The selection keys given (task_set, task_names, categories), in the order they were written."""
        given = {key for key in ("task_set", "task_names", "categories") if getattr(self, key) is not None}
        # read from pydantic's own store: `self._written_order` goes through BaseModel.__getattr__,
        # which cost a tenth of loading a spec
        order: tuple[str, ...] = (self.__pydantic_private__ or {}).get("_written_order", ())
        written = [key for key in order if key in given]
        return tuple(written + sorted(given - set(written)))


class ProviderModel(_Table):
    type: Literal["provider"]
    model: str
    api_key_secret: str


class EndpointModel(_Table):
    type: Literal["endpoint"]
    base_url: str
    model: str
    api_key_secret: str
    extra_headers: dict[str, str] | None = None


class HostedModel(_Table):
    type: Literal["hosted"]
    base_model: str
    lora_model_name: str


AgentModel = Annotated[ProviderModel | EndpointModel | HostedModel, Field(discriminator="type")]


class Agent(_Table):
    harness: str | None = None
    harness_api_key_secret: str | None = None
    model: AgentModel
    env: dict[str, str] = Field(default_factory=dict)


class Execution(_Table):
    attempts_per_task: int | None = Field(default=None, ge=1, le=INT64_MAX)
    max_concurrent_attempts: int | None = Field(default=None, ge=1, le=INT64_MAX)
    timeout_multiplier: float | None = Field(default=None, gt=0)
    max_retries: int | None = Field(default=None, ge=0, le=INT64_MAX)
    pass_threshold: float | None = Field(default=None, ge=0, le=1)
    judge_model: str | None = None
    judge_api_key_secret: str | None = None


class SecretList(_Table):
    required: list[str] = Field(default_factory=list)


DEFAULT_ATTEMPTS_PER_TASK = 1
DEFAULT_MAX_CONCURRENT_ATTEMPTS = 4


class RunConfig(_Table):
    """One benchmark run config: what `osmosis benchmark submit` accepts."""

    experiment: Experiment
    tasks: Tasks | None = None
    agents: list[Agent]
    execution: Execution | None = None
    verifier: SecretList | None = None
    secrets: SecretList | None = None
    env: dict[str, str] = Field(default_factory=dict)

    @property
    def attempts_per_task(self) -> int:
        value = self.execution.attempts_per_task if self.execution else None
        return value if value is not None else DEFAULT_ATTEMPTS_PER_TASK

    def secret_references(self) -> list[tuple[tuple[str | int, ...], str]]:
        """Every secret record name the config references, with the key path that names it."""
        refs: list[tuple[tuple[str | int, ...], str]] = []
        for i, agent in enumerate(self.agents):
            if not isinstance(agent.model, HostedModel):
                refs.append((("agents", i, "model", "api_key_secret"), agent.model.api_key_secret))
            if agent.harness_api_key_secret is not None:
                refs.append((("agents", i, "harness_api_key_secret"), agent.harness_api_key_secret))
        if self.execution and self.execution.judge_api_key_secret is not None:
            refs.append((("execution", "judge_api_key_secret"), self.execution.judge_api_key_secret))
        for table, names in (("verifier", self.verifier), ("secrets", self.secrets)):
            for j, name in enumerate(names.required if names else []):
                refs.append(((table, "required", j), name))
        return refs

    def required_secret_names(self) -> list[str]:
        """The ordered unique union the official client computes before submit."""
        seen: dict[str, None] = {}
        for _, name in self.secret_references():
            seen.setdefault(name, None)
        return list(seen)

    def to_payload(self) -> dict[str, Any]:
        """The JSON body of `POST /api/cli/benchmark-runs` (docs/platform-api.md §4)."""
        payload: dict[str, Any] = {
            "experiment_config": {"benchmark": self.experiment.benchmark},
            "agents": [_agent_payload(a) for a in self.agents],
        }
        if self.tasks:
            tasks = self.tasks.model_dump(exclude_none=True)
            if tasks:
                payload["tasks_config"] = tasks
        execution = self.execution.model_dump(exclude_none=True) if self.execution else {}
        if self.verifier and self.verifier.required:
            execution["verifier_secrets"] = list(self.verifier.required)
        if execution:
            payload["execution_config"] = execution
        if self.env:
            payload["env_config"] = dict(self.env)
        if self.secrets and self.secrets.required:
            payload["secrets"] = {"required": list(self.secrets.required), "provided": {}}
        return payload


def _agent_payload(agent: Agent) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if agent.harness is not None:
        out["harness"] = agent.harness
    if agent.harness_api_key_secret is not None:
        out["harness_api_key_secret"] = agent.harness_api_key_secret
    out["model"] = agent.model.model_dump(exclude_none=True)
    out["env"] = dict(agent.env)
    return out


# the top-level keys of a submit body (`to_payload`); a body with any other is refused
PAYLOAD_KEYS = ("experiment_config", "agents", "tasks_config", "execution_config", "env_config", "secrets")


def payload_to_document(payload: Any) -> dict[str, Any]:
    """The inverse of `to_payload`: a submit body back in TOML-document shape.

    The local platform validates submits with the same models and rules as `validate`;
    this maps the wire names back to table names so its error keys read like the TOML.
    Keys outside PAYLOAD_KEYS are kept as they are, to surface as unknown keys; a submit
    refuses them by their wire name first (`localplatform.submit.parse`), since a table name
    (`env`, `tasks`) sent in place of its wire key would otherwise be taken for it.
    """
    if not isinstance(payload, dict):
        return {"experiment": None}
    doc: dict[str, Any] = {}
    for key in payload:
        if key not in PAYLOAD_KEYS:
            doc[key] = payload[key]  # surfaces as an unknown key
    if "experiment_config" in payload:
        doc["experiment"] = payload["experiment_config"]
    if "agents" in payload:
        doc["agents"] = payload["agents"]
    if "tasks_config" in payload:
        doc["tasks"] = payload["tasks_config"]
    if "execution_config" in payload:
        execution = payload["execution_config"]
        if isinstance(execution, dict) and "verifier_secrets" in execution:
            execution = dict(execution)
            doc["verifier"] = {"required": execution.pop("verifier_secrets")}
        if execution:
            doc["execution"] = execution
    if "env_config" in payload:
        doc["env"] = payload["env_config"]
    if "secrets" in payload:
        secrets = payload["secrets"]
        if isinstance(secrets, dict):
            doc["secrets"] = {"required": secrets.get("required", [])}
        else:
            doc["secrets"] = secrets
    return doc
