"""The seeded benchmark catalog: the same five benchmarks in every new workspace.

- `terminal-bench-2-1`: Terminal-Bench-like, 90 tasks in 9 categories, difficulties
  easy/medium/hard and some null, default harness `terminus-2`, no judge.
- `hle`: Humanity's-Last-Exam-like, 120 tasks, a recommended `parity` set of 40, no harness,
  an LLM judge (`openai/gpt-5.2` by default) and the implicit `HF_TOKEN` record.
- `harbor/swe-smith-mini@1`: a small registry benchmark, ready, that requires a harness.
- `harbor/terminal-bench-pro@1.0`: a registry benchmark whose task list is still syncing.
- `harbor/aider-polyglot@2`: a registry benchmark whose sync failed.

Everything here is static data computed from names with hashlib, so every process and every
workspace sees the same catalog.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from functools import cached_property

from ..specs.rules import BenchmarkFacts, TaskInfo


@dataclass(frozen=True)
class TaskSpec:
    name: str
    category: str | None
    difficulty: str | None  # easy | medium | hard | None


@dataclass(frozen=True)
class TaskSetSpec:
    name: str
    description: str
    recommended: bool
    tasks: tuple[str, ...]


@dataclass(frozen=True)
class BenchmarkSpec:
    key: str
    name: str
    source_type: str  # osmosis_managed | harbor_registry
    description: str
    source_url: str
    runner_family: str
    version: str
    tasks: tuple[TaskSpec, ...]
    task_sets: tuple[TaskSetSpec, ...] = ()
    supports_harness: bool = True
    requires_harness: bool = False
    requires_judge_model: bool = False
    requires_judge_api_key: bool = False
    judge_model_default: str | None = None
    default_harness: str | None = None
    pass_threshold: float = 1.0
    required_secret_names: tuple[str, ...] = ()
    sync_status: str = "ready"  # pending | syncing | ready | failed
    declared_task_count: int | None = None  # what the registry announces while syncing
    synced_task_count: int | None = None
    sync_error: str | None = None
    creator_name: str = "Osmosis"
    # simulator knobs: how hard the benchmark is overall, and a typical attempt length (seconds)
    difficulty_offset: float = 0.0
    base_duration: float = 120.0
    timeout_seconds: float = 1800.0
    _index: dict[str, TaskSpec] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        self._index.update({t.name: t for t in self.tasks})

    @property
    def ready(self) -> bool:
        return self.sync_status == "ready"

    @property
    def task_count(self) -> int:
        return self.declared_task_count if self.declared_task_count is not None else len(self.tasks)

    @cached_property
    def categories(self) -> list[tuple[str, int]]:
        counts: dict[str, int] = {}
        for task in self.tasks:
            if task.category:
                counts[task.category] = counts.get(task.category, 0) + 1
        return sorted(counts.items())

    @cached_property
    def digest(self) -> str:
        manifest = "\n".join(f"{t.name}\t{t.category or ''}\t{t.difficulty or ''}" for t in self.tasks)
        return "sha256:" + hashlib.sha256(f"{self.key}@{self.version}\n{manifest}".encode()).hexdigest()

    def task(self, name: str) -> TaskSpec | None:
        return self._index.get(name)

    def task_set(self, name: str) -> TaskSetSpec | None:
        return next((s for s in self.task_sets if s.name == name), None)

    def facts(self) -> BenchmarkFacts:
        recommended = next((s.name for s in self.task_sets if s.recommended), None)
        return BenchmarkFacts(
            key=self.key,
            name=self.name,
            supports_harness=self.supports_harness,
            requires_harness=self.requires_harness,
            requires_judge_model=self.requires_judge_model,
            requires_judge_api_key=self.requires_judge_api_key,
            task_sets=tuple(s.name for s in self.task_sets),
            recommended_task_set=recommended,
            tasks=tuple(TaskInfo(name=t.name, category=t.category, difficulty=t.difficulty) for t in self.tasks),
            required_secret_names=self.required_secret_names,
            default_harness=self.default_harness,
        )


def _fraction(*parts: str) -> float:
    """A stable number in [0, 1) from the parts (never Python's `hash`)."""
    digest = hashlib.sha256("|".join(parts).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def _difficulty(name: str) -> str | None:
    x = _fraction("difficulty", name)
    if x < 0.25:
        return "easy"
    if x < 0.68:
        return "medium"
    if x < 0.92:
        return "hard"
    return None  # the source gave none; never inferred


_TERMINAL_BENCH: dict[str, tuple[str, ...]] = {
    "software-engineering": (
        "git-multibranch",
        "fix-git-history",
        "build-cython-ext",
        "cobol-modernization",
        "polyglot-rust-c",
        "configure-git-webserver",
        "fix-pandas-version",
        "sqlite-with-gcov",
        "compile-compcert",
        "refactor-legacy-java",
    ),
    "system-administration": (
        "nginx-request-logging",
        "fix-permissions",
        "cron-broken-network",
        "raid-recovery",
        "systemd-timer-backup",
        "disk-quota-alert",
        "docker-compose-healthcheck",
        "kernel-module-build",
        "qemu-startup",
        "log-rotation-setup",
    ),
    "security": (
        "crack-7z-hash",
        "openssl-selfsigned-cert",
        "sanitize-git-repo",
        "fix-code-vulnerability",
        "vulnerable-secret",
        "password-recovery",
        "jwt-forgery-audit",
        "sql-injection-patch",
        "hardening-ssh-config",
        "extract-elf-secret",
    ),
    "data-science": (
        "pandas-etl",
        "count-dataset-tokens",
        "reshard-c4-data",
        "csv-deduplicate",
        "parquet-schema-migration",
        "tabular-anomaly-detection",
        "feature-store-backfill",
        "time-series-resample",
        "word2vec-from-scratch",
        "hf-model-inference",
    ),
    "machine-learning": (
        "train-fasttext",
        "pytorch-model-cli",
        "mteb-leaderboard",
        "gpt2-codegolf",
        "llm-batching-scheduler",
        "caffe-cifar-10",
        "sam-cell-seg",
        "torch-tensor-parallelism",
        "model-quantization",
        "rl-cartpole-tuning",
    ),
    "scientific-computing": (
        "raman-fitting",
        "mcmc-sampling-stan",
        "dna-assembly",
        "protein-assembly",
        "adaptive-rejection-sampler",
        "distribution-search",
        "feal-differential-cryptanalysis",
        "portfolio-optimization",
        "circuit-fibsqrt",
        "large-scale-text-editing",
    ),
    "networking": (
        "dns-resolver-debug",
        "tcp-proxy-rate-limit",
        "http2-server-push",
        "mailman-setup",
        "ipv6-dual-stack",
        "websocket-echo-bench",
        "vpn-tunnel-config",
        "curl-retry-wrapper",
        "grpc-health-probe",
        "firewall-port-forward",
    ),
    "games": (
        "chess-best-move",
        "sudoku-solver-c",
        "path-tracing",
        "make-doom-for-mips",
        "winning-avg-corewars",
        "regex-chess",
        "sokoban-planner",
        "crossword-generator",
        "maze-exploration",
        "tower-of-hanoi-asm",
    ),
    "debugging": (
        "fix-ocaml-gc",
        "schemelike-metacircular-eval",
        "gcode-to-text",
        "overfull-hbox",
        "financial-document-processor",
        "break-filter-js-from-html",
        "headless-terminal",
        "write-compressor",
        "query-optimize",
        "modernize-scientific-stack",
    ),
}

_HLE_CATEGORIES = (
    ("math", 48),
    ("physics", 12),
    ("computer-science", 12),
    ("biology-medicine", 12),
    ("humanities", 10),
    ("chemistry", 10),
    ("engineering", 8),
    ("other", 8),
)


def _terminal_bench() -> BenchmarkSpec:
    tasks = tuple(
        TaskSpec(f"terminal-bench/{slug}", category, _difficulty(f"terminal-bench/{slug}"))
        for category, slugs in _TERMINAL_BENCH.items()
        for slug in slugs
    )
    return BenchmarkSpec(
        key="terminal-bench-2-1",
        name="Terminal-Bench 2.1",
        source_type="osmosis_managed",
        description="Hard, realistic tasks in a terminal sandbox: build, debug, secure and operate real systems.",
        source_url="https://github.com/laude-institute/terminal-bench",
        runner_family="harbor",
        version="2.1.0",
        tasks=tasks,
        default_harness="terminus-2",
        base_duration=240.0,
        timeout_seconds=3600.0,
    )


def _hle() -> BenchmarkSpec:
    tasks: list[TaskSpec] = []
    for category, count in _HLE_CATEGORIES:
        tasks += [TaskSpec(f"hle/{category}-{i:03d}", category, None) for i in range(1, count + 1)]
    parity = tuple(t.name for i, t in enumerate(tasks) if i % 3 == 0)
    return BenchmarkSpec(
        key="hle",
        name="Humanity's Last Exam",
        source_type="osmosis_managed",
        description="Expert-written closed-ended questions across mathematics, science and the humanities.",
        source_url="https://huggingface.co/datasets/cais/hle",
        runner_family="harbor",
        version="1.0.0",
        tasks=tuple(tasks),
        task_sets=(
            TaskSetSpec(
                "parity",
                "The published sample the reference scores were measured on.",
                recommended=True,
                tasks=parity,
            ),
        ),
        supports_harness=False,
        requires_judge_model=True,
        requires_judge_api_key=True,
        judge_model_default="openai/gpt-5.2",
        required_secret_names=("HF_TOKEN",),
        difficulty_offset=2.2,
        base_duration=45.0,
        timeout_seconds=600.0,
    )


def _swe_smith_mini() -> BenchmarkSpec:
    repos = ("requests", "click", "attrs", "jinja")
    tasks = tuple(
        TaskSpec(f"swe-smith-mini/{repo}-{i:02d}", repo, _difficulty(f"swe-smith-mini/{repo}-{i:02d}"))
        for repo in repos
        for i in range(1, 7)
    )
    return BenchmarkSpec(
        key="harbor/swe-smith-mini@1",
        name="SWE-smith Mini",
        source_type="harbor_registry",
        description="Synthetic bug-fix tasks from four Python libraries (Harbor registry).",
        source_url="https://github.com/laude-institute/harbor",
        runner_family="harbor",
        version="1.0.0",
        tasks=tasks,
        requires_harness=True,
        creator_name="Local User",
        base_duration=300.0,
    )


def _syncing() -> BenchmarkSpec:
    return BenchmarkSpec(
        key="harbor/terminal-bench-pro@1.0",
        name="Terminal-Bench Pro",
        source_type="harbor_registry",
        description="A larger Terminal-Bench variant from the Harbor registry.",
        source_url="https://github.com/laude-institute/harbor",
        runner_family="harbor",
        version="1.0.0",
        tasks=(),
        sync_status="syncing",
        declared_task_count=240,
        synced_task_count=96,
        creator_name="Local User",
    )


def _failed() -> BenchmarkSpec:
    return BenchmarkSpec(
        key="harbor/aider-polyglot@2",
        name="Aider Polyglot",
        source_type="harbor_registry",
        description="Exercism exercises in six languages (Harbor registry).",
        source_url="https://github.com/laude-institute/harbor",
        runner_family="harbor",
        version="2.0.0",
        tasks=(),
        sync_status="failed",
        declared_task_count=0,
        synced_task_count=0,
        sync_error="registry manifest fetch failed: HTTP 404 for harbor/aider-polyglot@2 (the dataset version was yanked)",
        creator_name="Local User",
    )


CATALOG: tuple[BenchmarkSpec, ...] = (_terminal_bench(), _hle(), _swe_smith_mini(), _syncing(), _failed())
BY_KEY: dict[str, BenchmarkSpec] = {b.key: b for b in CATALOG}

# Seeded secret records: (scope, name). Values are placeholders that are stored, never returned.
SEEDED_SECRETS: tuple[tuple[str, str], ...] = (
    ("workspace", "OPENAI_API_KEY"),
    ("workspace", "ANTHROPIC_API_KEY"),
    ("user", "HLE_JUDGE_API_KEY"),
    ("user", "HF_TOKEN"),
)

# A workspace with this name (or a git identity whose repository has it) has no valid billing:
# it reads everything, and every submit is refused ("Submission is where billing is checked, so a
# workspace without valid billing is told at submit rather than being locked out of the form.")
NO_BILLING_WORKSPACE = "no-billing"
BILLING_REQUIRED = "BILLING_REQUIRED"  # the 403 code the official client 0.3.8 maps (wire reference §1)

# A workspace with this name (or a git identity whose repository has it) has benchmarks disabled.
NO_BENCHMARKS_WORKSPACE = "no-benchmarks"
