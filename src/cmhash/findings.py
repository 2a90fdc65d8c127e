"""Findings: stable code, level, message and the 1-based position they point at."""

from __future__ import annotations

from typing import NamedTuple

ERROR, WARNING, INFO = "error", "warning", "info"
LEVEL_ORDER = {ERROR: 0, WARNING: 1, INFO: 2}

# code -> (default level, one-line description). The codes are stable: tools key on them.
CODES: dict[str, tuple[str, str]] = {
    "missing-reference": (WARNING, "a non-optional ConfigMap/Secret reference names an object "
                                   "that is not in the input"),
    "namespace-mismatch": (WARNING, "a reference could only match across a namespace boundary"),
    "missing-key": (WARNING, "a reference names a key the in-stream object does not have"),
    "job-not-annotated": (WARNING, "a Job uses in-stream config; its template is immutable, "
                                   "so it is not annotated"),
    "pod-not-annotated": (INFO, "a bare Pod uses in-stream config; an annotation would not "
                                "restart it"),
    "no-restart": (WARNING, "the annotation changes but existing pods are not replaced"),
    "replaced-annotation": (WARNING, "a value under our key that cmhash did not write (a "
                                     "chart's own checksum) was replaced"),
    "stale-annotation": (WARNING, "the workload carries our annotation but uses no in-stream "
                                  "config; left untouched"),
    "workload-ref": (INFO, "an Argo Rollout using workloadRef has no template to annotate"),
    "no-template": (INFO, "a workload kind without its pod template (a patch or partial "
                          "manifest): not annotated"),
    "subpath-mount": (INFO, "a ConfigMap/Secret volume is mounted with subPath: never updated "
                            "in place, only a restart delivers changes"),
    "immutable-config": (ERROR, "report: an immutable ConfigMap/Secret changed; kubectl apply "
                                "will fail on it"),
    "duplicate-object": (WARNING, "the same object is defined twice; the last one is used"),
}


class Finding(NamedTuple):
    path: str
    line: int
    column: int
    level: str
    code: str
    message: str
    workload: str | None = None  # Kind/name of the workload concerned, when there is one
    # (apiVersion, kind, name, namespace) of the object concerned: KRM results
    resource: tuple[str, str, str, str] | None = None
    field: str | None = None  # the field path of the reference concerned

    def sort_key(self) -> tuple[str, int, int, int, str]:
        return (self.path, self.line, self.column, LEVEL_ORDER[self.level], self.code)

    def format(self) -> str:
        return f"{self.path}:{self.line}:{self.column}: {self.level}: {self.message} [{self.code}]"
